"""Copying a moved workspace's sessions to its new project key, on SQLite and Postgres."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower.stores.prune import PruningSessionStore
from flower.stores.sqlite import SqliteSessionStore

pytestmark = pytest.mark.anyio

OLD, NEW = "-home-you-proj", "-home-you-proj2"


def line(n: int, **extra: object) -> dict:
    return {"type": "user", "uuid": f"u{n}", "message": {"content": f"line {n}"}, **extra}


async def test_sessions_are_copied_whole_in_order_and_the_originals_stay(store_target: str) -> None:
    store = SqliteSessionStore(store_target)
    main = {"project_key": OLD, "session_id": "s1"}
    sub = {**main, "subpath": "subagents/agent-1"}
    await store.append(main, [line(1), line(2), {"type": "custom-title", "customTitle": "t"}])
    await store.append(sub, [line(9)])
    await store.append({"project_key": OLD, "session_id": "other"}, [line(5)])

    assert await store.copy_sessions(OLD, NEW, ["s1", "missing"]) == 1

    moved = {"project_key": NEW, "session_id": "s1"}
    assert await store.load(moved) == await store.load(main)  # every line, in order
    assert await store.load({**moved, "subpath": "subagents/agent-1"}) == [line(9)]
    assert await store.list_subkeys(moved) == ["subagents/agent-1"]
    assert [s["session_id"] for s in await store.list_sessions(NEW)] == ["s1"]  # not "other"
    (summary,) = await store.list_session_summaries(NEW)
    assert summary["session_id"] == "s1"
    assert len(await store.load(main) or []) == 3  # the original is still there
    store.close()


async def test_copying_again_copies_nothing_and_appends_after_the_move_stay_apart(
    store_target: str,
) -> None:
    store = SqliteSessionStore(store_target)
    await store.append({"project_key": OLD, "session_id": "s1"}, [line(1)])
    assert await store.copy_sessions(OLD, NEW, ["s1"]) == 1
    await store.append({"project_key": NEW, "session_id": "s1"}, [line(2)])

    assert await store.copy_sessions(OLD, NEW, ["s1"]) == 0  # idempotent
    assert await store.copy_sessions(OLD, OLD, ["s1"]) == 0
    assert len(await store.load({"project_key": NEW, "session_id": "s1"}) or []) == 2
    assert len(await store.load({"project_key": OLD, "session_id": "s1"}) or []) == 1
    store.close()


async def test_what_is_copied_is_the_stored_lines_not_a_pruned_view(
    store_target: str, tmp_path: Path
) -> None:
    store = PruningSessionStore(store_target, workspace=tmp_path)
    error = {"type": "assistant", "uuid": "e1", "isApiErrorMessage": True, "message": {}}
    await store.append({"project_key": OLD, "session_id": "s1"}, [line(1), error, line(2)])

    await store.copy_sessions(OLD, NEW, ["s1"])

    raw = await SqliteSessionStore.load(store, {"project_key": NEW, "session_id": "s1"})
    assert [e["uuid"] for e in raw or []] == ["u1", "e1", "u2"]
    store.close()
