"""The SDK's own SessionStore contract suite, on every store flower ships.

``run_session_store_conformance`` builds a fresh store per contract: a new SQLite file,
or a new Postgres schema.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from claude_agent_sdk.testing import run_session_store_conformance

from flower.stores.prune import PrunePolicy, PruningSessionStore
from flower.stores.sqlite import SqliteSessionStore
from flower.stores.trim import EphemeralPolicy, TrimPolicy

pytestmark = pytest.mark.anyio


@pytest.fixture
def opened() -> Iterator[list[SqliteSessionStore]]:
    stores: list[SqliteSessionStore] = []
    yield stores
    for store in stores:
        store.close()


def _factory(make: Callable[[], SqliteSessionStore], opened: list[SqliteSessionStore]):
    def fresh() -> SqliteSessionStore:
        store = make()
        opened.append(store)
        return store

    return fresh


async def test_sqlite_store_passes_the_sdk_contracts(tmp_path: Path, opened: list) -> None:
    n = itertools.count()
    await run_session_store_conformance(
        _factory(lambda: SqliteSessionStore(tmp_path / f"{next(n)}.db"), opened)
    )
    assert len(opened) == 15  # every contract ran, optional ones included


@pytest.mark.postgres
async def test_postgres_store_passes_the_sdk_contracts(
    pg_schemas: Callable[[], str], opened: list
) -> None:
    await run_session_store_conformance(_factory(lambda: SqliteSessionStore(pg_schemas()), opened))
    assert len(opened) == 15
    assert {s._engine.dialect.name for s in opened} == {"postgresql"}


async def test_pruning_store_with_every_policy_on_passes_the_sdk_contracts(
    tmp_path: Path, workspace: Path, opened: list
) -> None:
    n = itertools.count()

    def make() -> PruningSessionStore:
        return PruningSessionStore(
            tmp_path / f"{next(n)}.db",
            workspace=workspace,
            policy=TrimPolicy(keep_recent=0, min_chars=1),
            ephemeral=EphemeralPolicy(keep_recent=0),
            prune=PrunePolicy(keep_denials=0),
        )

    await run_session_store_conformance(_factory(make, opened))
    assert len(opened) == 15


async def test_the_portable_sql_path_passes_too(tmp_path: Path, opened: list) -> None:
    """Databases without ``ON CONFLICT`` look up stored uuids instead; SQLite proves it."""
    n = itertools.count()

    def make() -> SqliteSessionStore:
        store = SqliteSessionStore(tmp_path / f"{next(n)}.db")
        store._insert_new = None
        return store

    await run_session_store_conformance(_factory(make, opened))
    store = make()
    entry = {"type": "user", "uuid": "u1"}
    await store.append({"project_key": "p", "session_id": "s"}, [entry])
    await store.append({"project_key": "p", "session_id": "s"}, [entry, {"type": "t"}])
    assert await store.load({"project_key": "p", "session_id": "s"}) == [entry, {"type": "t"}]
