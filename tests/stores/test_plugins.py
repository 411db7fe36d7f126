"""The session-store hook: the default plugin, the Postgres plugin by URL, and the
one-line refusals when the URL cannot be served."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flower.plugin_types import StoreSettings
from flower.plugins import get_plugin_manager, plugin_records, reset_plugin_manager
from flower.stores.errors import StoreError
from flower.stores.prune import PrunePolicy, PruningSessionStore
from flower.stores.trim import EphemeralPolicy, TrimPolicy


@pytest.fixture(autouse=True)
def fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("FLOWER_STORE_URL", raising=False)
    monkeypatch.delenv("FLOWER_DISABLED_PLUGINS", raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def settings(tmp_path: Path, url: str | None = None) -> StoreSettings:
    return StoreSettings(
        run_dir=tmp_path / "runs",
        workspace=tmp_path / "ws",
        trim=TrimPolicy(enabled=False),
        ephemeral=EphemeralPolicy(keep_recent=3),
        prune=PrunePolicy(keep_denials=2),
        url=url,
    )


def build(s: StoreSettings) -> PruningSessionStore:
    return get_plugin_manager().hook.flower_session_store(settings=s)


def test_the_default_is_the_pruning_store_at_run_dir_with_the_runtime_policies(
    tmp_path: Path,
) -> None:
    s = settings(tmp_path)
    store = build(s)
    assert type(store) is PruningSessionStore
    assert store.path == (tmp_path / "runs" / "sessions.db").resolve() and store.path.exists()
    assert (
        store.policy is s.trim and store.ephemeral is s.ephemeral and store.prune_policy is s.prune
    )
    assert store.workspace == s.workspace


def test_a_sqlite_url_in_the_environment_moves_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOWER_STORE_URL", f"sqlite:///{tmp_path}/elsewhere.db")
    store = build(settings(tmp_path))
    assert store.path == tmp_path / "elsewhere.db"
    assert not (tmp_path / "runs" / "sessions.db").exists()


@pytest.mark.postgres
def test_a_postgres_url_is_served_by_the_postgres_plugin(tmp_path: Path, pg_url: str) -> None:
    s = settings(tmp_path, url=pg_url.replace("postgresql+psycopg://", "postgresql://"))
    store = build(s)
    assert type(store) is PruningSessionStore and store._engine.dialect.name == "postgresql"
    assert store.prune_policy is s.prune and store.policy is s.trim
    assert not (tmp_path / "runs").exists()
    store.close()
    (record,) = [r for r in plugin_records() if r.name == "postgres"]
    assert record.status == "ok" and record.hooks == ["flower_session_store"]


def test_an_unknown_scheme_is_refused_not_replaced_by_the_default(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as caught:
        build(settings(tmp_path, url="redis://cache:6379/0"))
    assert "\n" not in str(caught.value) and "unknown session store URL" in str(caught.value)
    assert not (tmp_path / "runs").exists()


def test_postgres_without_its_plugin_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOWER_DISABLED_PLUGINS", "postgres")
    reset_plugin_manager()
    with pytest.raises(
        StoreError, match=r"postgres plugin is not loaded: run pip install 'flower\[postgres\]'"
    ):
        build(settings(tmp_path, url="postgresql://u@db/flower"))


def test_a_missing_driver_is_one_line_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if psycopg were not installed
    with pytest.raises(StoreError) as caught:
        build(settings(tmp_path, url="postgresql+psycopg://u@127.0.0.1/flower"))
    message = str(caught.value)
    assert "\n" not in message and "pip install 'flower[postgres]'" in message


def test_store_plugins_import_nothing_heavy() -> None:
    probe = (
        "import sys, flower_plugins.store, flower_plugins.postgres, flower.commands.db;"
        "heavy = ('sqlalchemy', 'alembic', 'claude_agent_sdk', 'psycopg');"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
