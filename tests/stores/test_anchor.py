"""flower's own cache mark in the view (``stores/anchor.py``): where it sits load by load,
what it does to the move rule's price, and what it never touches. The real CLI's side
(the marks reach the model, the cache reads through them) is test_anchor_e2e.py."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from flower.kernel.ruling_words import OPENINGS
from flower.stores.anchor import first_long, marked, place_marks
from flower.stores.marks import load_marks, save_marks
from flower.stores.mask_rulings import kept_below
from flower.stores.mask_rulings import rulings as ruling_lines
from flower.stores.prune import PruningSessionStore
from flower.stores.trim import EphemeralPolicy, TrimPolicy

from .builder import Transcript
from .test_mask import last_time, output, session
from .test_mask_batched import KEY, store_with, warm_loads

pytestmark = pytest.mark.anyio


def flower_marks(view: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(tool_use_id, ttl)`` of every marked block of the view, in order."""
    return [
        (block["tool_use_id"], block["cache_control"]["ttl"])
        for line in view
        if isinstance(line.get("message", {}).get("content"), list)
        for block in line["message"]["content"]
        if isinstance(block, dict) and "cache_control" in block
    ]


def result_ids(view: list[dict[str, Any]]) -> list[str]:
    return [
        block["tool_use_id"]
        for line in view
        if isinstance(line.get("message", {}).get("content"), list)
        for block in line["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def anchored(path: Path, workspace: Path, ttl: str = "5m") -> PruningSessionStore:
    store = store_with(path, workspace)
    store.cache_ttls[KEY["session_id"]] = ttl
    return store


@pytest.mark.parametrize("expiry", [True, False], ids=["with-expiry", "masking-alone"])
async def test_the_anchor_moves_with_the_boundary_and_marks_the_old_one_once(
    tmp_path: Path, workspace: Path, expiry: bool
) -> None:
    store = anchored(tmp_path / "s.db", workspace)
    store.ephemeral = EphemeralPolicy(enabled=expiry)
    loads = await warm_loads(store, 80)
    counts = [c for c, _ in loads]
    moves = [i for i in range(1, len(counts)) if counts[i] != counts[i - 1]]
    assert len(moves) >= 2, counts
    for i, (count, view) in enumerate(loads):
        ids = result_ids(view)
        got = flower_marks(view)
        assert all(ttl == "5m" for _, ttl in got)
        if i in moves:  # the old anchor to read, the new one to write
            assert [m for m, _ in got] == [ids[n - 1] for n in (counts[i - 1], count) if n]
        elif count:  # between moves: the anchor alone, where the last move put it
            assert [m for m, _ in got] == [ids[count - 1]]
        else:
            assert got == []
    # stored rows are the CLI's: no mark of flower's in them
    rows = store._load(KEY) or []
    assert rows and "cache_control" not in json.dumps(rows)
    # the anchor is kept with the session: a new store of the same file starts there
    assert load_marks(store._engine, ("proj", "s1", ""))["anchor"][1] == counts[-1]


async def test_with_an_anchor_a_move_pays_sooner(tmp_path: Path, workspace: Path) -> None:
    """A move priced at what follows the anchor (not the whole history) pays sooner, so
    the boundary moves more often and the context carries less between moves."""
    plain = [c for c, _ in await warm_loads(store_with(tmp_path / "a.db", workspace), 80)]
    marked_ = [c for c, _ in await warm_loads(anchored(tmp_path / "b.db", workspace), 80)]
    assert plain[:3] == marked_[:3]
    moves = lambda counts: sum(b != a for a, b in itertools.pairwise(counts))  # noqa: E731
    assert moves(marked_) > moves(plain)
    assert sum(marked_) > sum(plain)  # more masked, load for load


async def test_no_mark_without_the_clis_ttl_and_the_hours_when_told(
    tmp_path: Path, workspace: Path
) -> None:
    plain = await warm_loads(store_with(tmp_path / "a.db", workspace), 30)
    assert all(flower_marks(view) == [] for _, view in plain)
    hour = await warm_loads(anchored(tmp_path / "b.db", workspace, ttl="1h"), 30)
    ttls = {ttl for _, view in hour for _, ttl in flower_marks(view)}
    assert ttls == {"1h"}
    store = store_with(tmp_path / "c.db", workspace)
    store.cache_ttls[KEY["session_id"]] = "10m"  # not a TTL the API knows
    assert all(flower_marks(view) == [] for _, view in await warm_loads(store, 30))
    # driving the CLI yourself: one TTL for every session the store loads
    store = store_with(tmp_path / "d.db", workspace)
    store.cache_ttl = "1h"
    ttls = {ttl for _, view in await warm_loads(store, 30) for _, ttl in flower_marks(view)}
    assert ttls == {"1h"}


def test_a_ruling_kept_whole_below_the_boundary_holds_the_anchor_before_it() -> None:
    t = Transcript()
    t.prompt("work")
    rulings = []
    for n in range(6):
        rulings.append(len(t.lines))
        t.prompt(f"{OPENINGS['not_yet']}还差 {n} 项。")
        t.call(f"make step{n}", "x" * 500)
    prompts = [i for i, line in enumerate(t.lines) if isinstance(line["message"]["content"], str)]
    found = ruling_lines(t.lines, prompts)
    assert [line for line, _, _ in found] == rulings
    # the newest two rulings stay whole; below line rulings[5] the one at rulings[4] is
    # one of them
    assert kept_below(found, rulings[5] + 1) == rulings[4]
    assert kept_below(found, rulings[4]) is None  # only masked ones below
    assert kept_below(found, 0) is None
    # one ruling alone is one of the newest two: kept, wherever the boundary is
    one = Transcript()
    one.prompt(f"{OPENINGS['not_yet']}还差 1 项。")
    one.call("make", "x" * 500)
    assert kept_below(ruling_lines(one.lines, [0]), 3) == 0


def test_the_helpers() -> None:
    blocks: list[Any] = [
        (1, {}, {"type": "tool_result", "tool_use_id": f"t{n}", "content": "y" * (n * 100)})
        for n in range(5)
    ]
    assert first_long(blocks, 0, 5, 250) == 3
    assert first_long(blocks, 0, 5, 300) == 3  # exactly the least counts
    assert first_long(blocks, -3, 5, 0) == 0  # a start before the first is the first
    assert first_long(blocks, 0, 2, 250) == 2  # none before the stop
    assert place_marks(blocks, [0, 2, 2, 9], "1h") == 1  # none for 0, once, none past the end
    assert blocks[1][2]["cache_control"] == marked("1h") == {"type": "ephemeral", "ttl": "1h"}
    assert all("cache_control" not in b[2] for i, b in enumerate(blocks) if i != 1)
    assert place_marks(blocks, [1, 5], "5m") == 2  # the oldest and the newest
    assert [i for i, b in enumerate(blocks) if "cache_control" in b[2]] == [0, 1, 4]


def test_marks_round_trip_with_and_without_an_anchor(tmp_path: Path, workspace: Path) -> None:
    store = store_with(tmp_path / "s.db", workspace)
    key = ("proj", "s9", "")
    save_marks(store._engine, key, {"mask": ("a", 3), "anchor": ("b", 2), "expiry": ("c", 4)})
    assert load_marks(store._engine, key) == {"mask": ("a", 3), "anchor": ("b", 2),
                                              "expiry": ("c", 4)}  # fmt: skip
    save_marks(store._engine, key, {"anchor": ("b", 2)})  # an anchor without a mask
    assert load_marks(store._engine, key) == {"anchor": ("b", 2)}
    save_marks(store._engine, key, {"mask": ("a", 3)})  # as an older flower wrote them
    assert load_marks(store._engine, key) == {"mask": ("a", 3)}


async def loaded(store: PruningSessionStore, t: Transcript, sid: str) -> list[dict[str, Any]]:
    key = {"project_key": "proj", "session_id": sid}
    store.cache_ttls[sid] = "5m"
    await store.append(key, copy.deepcopy(t.lines))
    return (await store.load(key)) or []  # no timestamps: a cold load


async def test_the_anchor_sits_before_what_a_later_load_changes(
    tmp_path: Path, workspace: Path
) -> None:
    store = store_with(tmp_path / "s.db", workspace)
    # a long answer of the human's: never masked, and trimmed once it is older than the
    # newest 20 results, so a later load changes it
    human = Transcript()
    human.prompt("work")
    for n in range(30):
        tool = "mcp__human__ask" if n == 20 else "Bash"
        human.call(f"make {n}", output(n, 2500 if n == 20 else 900), tool=tool)
    view = await loaded(store, human, "human")
    ids = result_ids(view)
    assert store.last_report["masked"] == 27  # all but the newest two and the human's
    assert flower_marks(view) == [(ids[19], "5m")]  # the newest result before it
    # a ruling below the boundary that is one of the newest two: masked when more come
    ruled = Transcript()
    ruled.prompt("work")
    for n in range(12):
        if n in (3, 8, 10):
            ruled.prompt(f"{OPENINGS['not_yet']}第 {n} 步还没有过。")
        ruled.call(f"make {n}", output(n))
    store = store_with(tmp_path / "r.db", workspace)  # its uuids are the first's
    view = await loaded(store, ruled, "ruled")
    ids = result_ids(view)
    assert store.last_report["masked"] == 10, store.last_report
    assert store.last_report["superseded_rulings"] == 1
    assert flower_marks(view) == [(ids[7], "5m")]  # before the ruling at call 8


async def glance_loads(
    store: PruningSessionStore, calls: int
) -> AsyncIterator[tuple[int, list[dict[str, Any]]]]:
    """One session of ``calls`` glances (``git status``, which expiry replaces when old),
    growing a call at a time and loaded warm after each: (calls so far, view)."""
    t = session(calls)
    for line in t.lines:
        for block in line["message"]["content"] if line["type"] == "assistant" else []:
            block["input"] = {"command": "git status"}
    stored = 0
    for n in range(3, calls + 1):
        upto = 1 + 2 * n
        await store.append(KEY, copy.deepcopy(t.lines[stored:upto]))
        stored = upto
        store.now = lambda upto=upto: last_time(t) - 60 * (len(t.lines) - upto) / 2 + 30
        yield n, (await store.load(KEY)) or []


async def test_expiry_alone_moves_the_anchor_too(tmp_path: Path, workspace: Path) -> None:
    """``Runtime(trim=False)``: nothing is masked, and expiry's boundary moves in steps of
    12 on a warm cache; each step is a move for the anchor."""
    store = PruningSessionStore(
        tmp_path / "s.db", workspace, policy=TrimPolicy(enabled=False)
    )  # fmt: skip
    store.cache_ttls[KEY["session_id"]] = "5m"
    seen = [
        (store.last_report.get("expired", 0), flower_marks(view), result_ids(view))
        async for _, view in glance_loads(store, 40)
    ]
    expired = [e for e, _, _ in seen]
    assert max(expired) >= 24 and {e % 12 for e in expired} == {0}, expired  # steps of 12
    for i in range(1, len(seen)):
        (before, _, _), (now, got, ids) = seen[i - 1], seen[i]
        if now != before:
            assert [m for m, _ in got] == [ids[k - 1] for k in (before, now) if k]
        elif now:
            assert [m for m, _ in got] == [ids[now - 1]]


async def test_a_subagents_transcript_is_never_marked(tmp_path: Path, workspace: Path) -> None:
    """The TTL the Runtime pins is the main conversation's; a subagent's requests carry
    its own (the CLI's subagent setting), so its transcript gets no mark of flower's."""
    store = store_with(tmp_path / "s.db", workspace)
    store.cache_ttls["s1"] = "5m"
    t = Transcript()
    t.prompt("work")
    for n in range(12):
        t.call(f"make {n}", output(n))
    main = {"project_key": "proj", "session_id": "s1"}
    worker = {**main, "subpath": "subagents/agent-a1"}
    await store.append(main, copy.deepcopy(t.lines))
    await store.append(worker, copy.deepcopy(t.lines))
    assert flower_marks((await store.load(main)) or [])
    view = (await store.load(worker)) or []
    assert store.last_report["masked"] == 10 and flower_marks(view) == []


async def test_batched_expiry_never_reaches_the_newest_results(
    tmp_path: Path, workspace: Path
) -> None:
    """Masking batched, every call a glance: expiry's boundary goes with masking's
    (all but the newest two here), never past it into the newest results."""
    store = anchored(tmp_path / "s.db", workspace)
    async for n, view in glance_loads(store, 40):
        newest = [
            block["content"]
            for line in view[-4:]
            if line["type"] == "user"
            for block in line["message"]["content"]
        ]
        assert len(newest) == 2 and all(c.startswith("result ") for c in newest), newest
        assert store.last_report.get("expired", 0) <= n - 2
