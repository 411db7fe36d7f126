"""SqliteSessionStore beyond the SDK's contracts: idempotency, atomicity, clocks,
summaries, several processes on one file, a loop that never blocks, and bad input."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from claude_agent_sdk import fold_session_summary

from flower.stores.errors import StoreError
from flower.stores.sqlite import SqliteSessionStore

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}


def line(n: int, **extra: object) -> dict:
    return {"type": "user", "uuid": f"u{n}", "timestamp": "2026-11-29T10:00:00.000Z", **extra}


async def test_append_is_idempotent_by_uuid_and_keeps_lines_without_one(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    marker = {"type": "custom-title", "customTitle": "t"}
    await store.append(KEY, [line(1), line(2), marker])
    await store.append(KEY, [line(2), line(3), line(3), marker])  # a retried batch

    assert await store.load(KEY) == [line(1), line(2), marker, line(3), marker]


async def test_mtime_is_strictly_increasing_and_shared_with_the_summary(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    seen = []
    for n in range(30):  # far faster than one per millisecond
        await store.append(KEY, [line(n)])
        (listed,) = await store.list_sessions("proj")
        (summary,) = await store.list_session_summaries("proj")
        assert summary["mtime"] == listed["mtime"]
        seen.append(listed["mtime"])
    assert all(b > a for a, b in itertools.pairwise(seen))
    assert seen[0] > 1e12 and math.isfinite(seen[-1])


async def test_summary_is_the_fold_of_every_batch(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    batches = [
        [line(1, message={"role": "user", "content": "fix the parser"}, cwd="/w")],
        [{"type": "custom-title", "customTitle": "parser"}, line(2, gitBranch="main")],
        [{"type": "tag", "tag": "urgent"}],
    ]
    expected = None
    for batch in batches:
        await store.append(KEY, batch)
        expected = fold_session_summary(expected, KEY, batch)
    await store.append(
        {**KEY, "subpath": "subagents/agent-1"}, [{"type": "x", "customTitle": "no"}]
    )

    (summary,) = await store.list_session_summaries("proj")
    assert summary["data"] == expected["data"]
    assert summary["data"]["first_prompt"] == "fix the parser"


async def test_two_writers_on_one_session_never_lose_a_fold(tmp_path: Path) -> None:
    """Each store remembers the summary it wrote last; another writer's append must make
    it read the stored one again instead of folding onto its stale copy."""
    a, b = SqliteSessionStore(tmp_path / "s.db"), SqliteSessionStore(tmp_path / "s.db")
    batches = [
        [line(1, message={"role": "user", "content": "first prompt"})],
        [{"type": "custom-title", "customTitle": "from b"}],
        [line(2, gitBranch="feature")],
        [{"type": "tag", "tag": "t1"}],
    ]
    expected = None
    for writer, batch in zip([a, b, a, b], batches, strict=True):
        await writer.append(KEY, batch)
        expected = fold_session_summary(expected, KEY, batch)
    for reader in (a, b):
        (summary,) = await reader.list_session_summaries("proj")
        assert summary["data"] == expected["data"]


@pytest.mark.parametrize("insert", ["native", "portable"])
async def test_a_replayed_batch_changes_neither_the_summary_nor_the_context(
    store_target: str, insert: str
) -> None:
    """Lines already stored are skipped, so they must not be folded (or counted) again:
    the summary stays the fold of the stored transcript, whichever insert path ran."""
    store = SqliteSessionStore(store_target)
    if insert == "portable":
        store._insert_new = None
    old = line(1, type="assistant", gitBranch="old", message={"usage": {"input_tokens": 100}})
    new = line(2, type="assistant", gitBranch="new", message={"usage": {"input_tokens": 900}})
    await store.append(KEY, [old])
    await store.append(KEY, [new])
    await store.append(KEY, [old])  # a batch that landed, sent again

    stored = await store.load(KEY)
    assert stored == [old, new]
    (summary,) = await store.list_session_summaries("proj")
    assert summary["data"] == fold_session_summary(None, KEY, stored)["data"]
    assert summary["data"]["git_branch"] == "new"
    assert await store.context_tokens(KEY) == 900
    store.close()


async def test_context_tokens_follow_the_newest_real_reply(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")

    def reply(n: int, tokens: int, **extra: object) -> dict:
        usage = {"input_tokens": tokens, "cache_read_input_tokens": 1000}
        return {
            "type": "assistant",
            "uuid": f"a{n}",
            "message": {"id": f"m{n}", "usage": usage},
            **extra,
        }

    assert await store.context_tokens(KEY) is None
    await store.append(KEY, [reply(1, 5000), reply(2, 7000)])
    synthetic = reply(3, 0, isApiErrorMessage=True)
    await store.append(KEY, [synthetic, line(4)])

    assert await store.context_tokens(KEY) == 8000


async def test_a_batch_with_a_non_json_line_is_refused_whole(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    await store.append(KEY, [line(1)])

    for bad in ({"uuid": "u9", "when": object()}, {"uuid": "u9", "when": datetime.now()}):
        with pytest.raises(StoreError) as caught:
            await store.append(KEY, [line(2), bad, line(3)])
        message = str(caught.value)
        assert "\n" not in message
        assert "line 1 for proj/s1 is not JSON" in message and "nothing" in message
    with pytest.raises(StoreError, match=r"line 0 .* not an object"):
        await store.append(KEY, ["a string"])  # type: ignore[list-item]

    assert await store.load(KEY) == [line(1)]
    assert await store.load({"project_key": "proj", "session_id": "fresh"}) is None
    with pytest.raises(StoreError):
        await store.append({"project_key": "proj", "session_id": "fresh"}, [{"x": {1, 2}}])
    assert await store.load({"project_key": "proj", "session_id": "fresh"}) is None
    assert [s["session_id"] for s in await store.list_sessions("proj")] == ["s1"]


async def test_nan_and_infinity_are_stored_as_null_like_javascript_writes_them(
    tmp_path: Path,
) -> None:
    """No JSON text can hold them, the CLI (JavaScript's JSON.stringify) writes ``null``
    for them, and a whole batch of a transcript must not be refused for one number."""
    store = SqliteSessionStore(tmp_path / "s.db")
    await store.append(KEY, [{**line(1), "score": float("nan"), "top": float("inf")}])
    (loaded,) = await store.load(KEY) or []
    assert loaded["score"] is None and loaded["top"] is None


async def test_a_locked_database_does_not_block_the_event_loop(tmp_path: Path) -> None:
    """The SDK appends from the loop that reads the CLI's stream: waiting on a lock held
    by another process must leave that loop free."""
    db = tmp_path / "s.db"
    store = SqliteSessionStore(db)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.ensure_future(ticker())
    append = asyncio.ensure_future(store.append(KEY, [line(1)]))
    await asyncio.sleep(0.5)
    assert not append.done() and ticks >= 20, f"the loop stalled: {ticks} ticks in 0.5 s"
    other.execute("COMMIT")
    await asyncio.wait_for(append, 10)
    task.cancel()
    assert await store.load(KEY) == [line(1)]


WORKER = r"""
import asyncio, sys
from flower.stores.sqlite import SqliteSessionStore

target, me, batches, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

async def main():
    store = SqliteSessionStore(target)
    for b in range(batches):
        own = [{"type": "user", "uuid": f"{me}-{b}-{i}", "gitBranch": f"{me}-{b}"}
               for i in range(size)]
        shared = [{"type": "user", "uuid": f"shared-{b % 7}", "gitBranch": "shared"},
                  {"type": "custom-title", "customTitle": f"{me}-{b}"}]
        await store.append({"project_key": "p", "session_id": "one"}, own + shared)
        await store.append({"project_key": "p", "session_id": me}, own)
    store.close()

asyncio.run(main())
"""


def test_processes_racing_on_one_store_lose_nothing_and_keep_the_summary_the_fold(
    store_target: str,
) -> None:
    """Three processes append to one session (and each to its own) at once: nothing is lost
    or stored twice, each process's order is kept, and the read-fold-write of the summary
    is serialised per session, so lines another process stored first are not folded twice."""
    workers, batches, size = 3, 30, 10
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, store_target, f"w{n}", str(batches), str(size)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(workers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err

    async def check() -> None:
        store = SqliteSessionStore(store_target)
        key = {"project_key": "p", "session_id": "one"}
        one = await store.load(key)
        assert one is not None
        uuids = [e["uuid"] for e in one if "uuid" in e]
        assert len(uuids) == len(set(uuids)), "a uuid was stored twice"
        assert len([u for u in uuids if u.startswith("w")]) == workers * batches * size
        assert len([u for u in uuids if u.startswith("shared-")]) == 7  # deduped
        assert len([e for e in one if e["type"] == "custom-title"]) == workers * batches
        for n in range(workers):
            mine = await store.load({"project_key": "p", "session_id": f"w{n}"})
            assert mine is not None and [e["uuid"] for e in mine] == [  # its order is kept
                f"w{n}-{b}-{i}" for b in range(batches) for i in range(size)
            ]
        listed = {s["session_id"]: s for s in await store.list_sessions("p")}
        assert sorted(listed) == ["one", *(f"w{n}" for n in range(workers))]
        summaries = {s["session_id"]: s for s in await store.list_session_summaries("p")}
        assert summaries["one"]["data"] == fold_session_summary(None, key, one)["data"]
        assert summaries["one"]["mtime"] == listed["one"]["mtime"]
        store.close()

    asyncio.run(check())
    if "://" not in store_target:
        assert sqlite3.connect(store_target).execute("PRAGMA journal_mode").fetchone() == ("wal",)


# --- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content", [b"this is not a database at all\n" * 40, bytes(range(256)) * 64]
)
def test_a_corrupt_or_foreign_file_is_refused_in_one_line_and_left_alone(
    tmp_path: Path, content: bytes
) -> None:
    db = tmp_path / "sessions.db"
    db.write_bytes(content)
    with pytest.raises(StoreError) as caught:
        SqliteSessionStore(db)
    message = str(caught.value)
    assert "\n" not in message and str(db) in message and "not a usable SQLite database" in message
    assert db.read_bytes() == content


def test_a_damaged_sqlite_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    SqliteSessionStore(db).close()
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page is garbage now
    db.write_bytes(bytes(data))
    for leftover in tmp_path.glob("sessions.db-*"):
        leftover.unlink()
    with pytest.raises(StoreError, match="not a usable SQLite database"):
        SqliteSessionStore(db)


def test_a_database_of_someone_else_with_our_table_names_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE entries (anything TEXT)")
    with pytest.raises(StoreError, match=r"has tables \['entries'\] but no flower schema version"):
        SqliteSessionStore(db)


@pytest.mark.parametrize("url", ["redis://localhost/0", "mongodb://x/y"])
def test_an_unknown_url_scheme_is_refused_in_one_line(url: str) -> None:
    with pytest.raises(StoreError) as caught:
        SqliteSessionStore(url)
    assert "\n" not in str(caught.value) and "unknown session store URL" in str(caught.value)


def test_an_unreachable_postgres_is_refused_in_one_line() -> None:
    started = time.monotonic()
    with pytest.raises(StoreError) as caught:
        SqliteSessionStore("postgresql+psycopg://flower:secret@127.0.0.1:9/flower")
    message = str(caught.value)
    assert "\n" not in message and "cannot reach the session database" in message
    assert "secret" not in message and "flower:***@127.0.0.1:9" in message
    assert time.monotonic() - started < 15


@pytest.mark.parametrize("folder", ["what? why", "50%25 done", "a%20b#c"])
def test_a_folder_name_that_looks_like_url_syntax_is_taken_literally(
    tmp_path: Path, folder: str
) -> None:
    """A path is a path: ``?`` must not start a URL query (the file would land in the
    parent folder) and ``%xx`` must not be decoded (it would name another folder)."""
    db = tmp_path / folder / "sessions.db"
    store = SqliteSessionStore(db)
    asyncio.run(store.append(KEY, [line(1)]))
    store.close()
    assert store.path == db.resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone() == (1,)


def test_load_of_an_unknown_session_writes_nothing(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    assert asyncio.run(store.load(KEY)) is None
    assert asyncio.run(store.list_sessions("proj")) == []


def test_half_a_surrogate_pair_is_stored_and_loaded_back(store_target: str) -> None:
    """JSON may hold a lone ``\\ud83d`` (the CLI's strings are UTF-16: text cut at a length
    can split an emoji): it is not UTF-8, yet the batch must not be lost over it."""
    cut = json.loads('{"type": "user", "uuid": "u1", "message": {"content": "cut \\ud83d"}}')
    odd = line(2, text="\ue000s\ue0000 \ud800\x00\udfff end")  # next to flower's own escapes
    store = SqliteSessionStore(store_target)
    asyncio.run(store.append(KEY, [cut, odd, line(3)]))
    assert asyncio.run(store.load(KEY)) == [cut, odd, line(3)]
    (summary,) = asyncio.run(store.list_session_summaries("proj"))
    assert summary["data"]["first_prompt"] == "cut \ud83d"
    store.close()


def test_entries_round_trip_unicode_and_nesting(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    entry = line(
        1,
        message={"content": [{"type": "text", "text": "交接 ✓ \u2028 \x00 end"}]},
        nums=[1, {"a": None}],
    )
    asyncio.run(store.append(KEY, [entry]))
    assert asyncio.run(store.load(KEY)) == [entry]
    raw = sqlite3.connect(tmp_path / "s.db").execute("SELECT entry FROM entries").fetchone()[0]
    assert json.loads(raw) == entry and "交接" in raw  # readable UTF-8, not \\u escapes


async def test_loads_map_the_file_rather_than_copy_its_pages(tmp_path: Path) -> None:
    """A load reads the whole transcript; copying every page through SQLite's page cache
    cost a quarter of parsing it (issue 23). The store's connections map the file."""
    store = SqliteSessionStore(tmp_path / "s.db")
    await store.append(KEY, [line(1)])
    with store._engine.connect() as conn:
        mapped = conn.exec_driver_sql("PRAGMA mmap_size").scalar()
    store.close()
    assert mapped is not None and mapped >= 1 << 28
