"""The batched mask rule (``MaskPolicy.chunk`` None, the default): on a warm cache the
boundary stays put until moving pays for the rewrite it causes, then goes all the way;
trimming and expiry wait for it; masked results get the one-line placeholder."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from flower.stores.mask import MaskPolicy, pending_reads, worth_moving
from flower.stores.prune import PruningSessionStore
from flower.stores.trim import TrimPolicy

from .builder import results
from .test_mask import last_time, masked_ids, session

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}


def test_a_move_pays_when_what_waited_cost_in_reads_reaches_the_rewrite() -> None:
    """The decision rule: ``pending x read >= rewrite x (write - read)``; Opus 5.5's
    prices by default (0.05 read, 1.25 a 5-minute write, 2 a 1-hour one)."""
    policy = MaskPolicy()
    # 5 minutes: (1.25 - 0.05) / 0.05 = 24 reads of a character pay one rewrite of it
    assert worth_moving(24_000, 1_000, policy)
    assert not worth_moving(23_999, 1_000, policy)
    # the hour's writes cost more: (2 - 0.05) / 0.05 = 39
    assert not worth_moving(38_999, 1_000, policy, hour=True)
    assert worth_moving(39_000, 1_000, policy, hour=True)
    # a model that reads at 0.1x: (1.25 - 0.1) / 0.1 = 11.5
    cheap = MaskPolicy(cache_read=0.1)
    assert worth_moving(11_500, 1_000, cheap) and not worth_moving(11_499, 1_000, cheap)
    # what waited: each result's saving times the replies since it could be masked,
    # plus the requests ahead
    after = {3: 4, 7: 1, 9: 0}
    assert pending_reads([100, 50, 70], [3, 7, 9], after.__getitem__) == 450.0
    assert pending_reads([100, 50, 70], [3, 7, 9], after.__getitem__, ahead=2) == 890.0


def store_with(path: Path, workspace: Path, **mask: Any) -> PruningSessionStore:
    return PruningSessionStore(
        path, workspace, policy=TrimPolicy(enabled=True), mask=MaskPolicy(keep_recent=2, **mask)
    )


async def warm_loads(
    store: PruningSessionStore, calls: int
) -> list[tuple[int, list[dict[str, Any]]]]:
    """One session growing a call at a time, loaded warm (30 s after its last line)
    after each: (masked count, view) per load."""
    t = session(calls)
    out = []
    stored = 0
    for n in range(3, calls + 1):
        upto = 1 + 2 * n  # the prompt line, then a call and its result per call
        await store.append(KEY, copy.deepcopy(t.lines[stored:upto]))
        stored = upto
        store.now = lambda upto=upto: last_time(t) - 20 * (len(t.lines) - upto) + 30
        view = (await store.load(KEY)) or []
        out.append((len(masked_ids(view)), view))
    return out


async def test_on_a_warm_cache_the_boundary_waits_then_moves_all_the_way(
    tmp_path: Path, workspace: Path
) -> None:
    store = store_with(tmp_path / "s.db", workspace)
    loads = await warm_loads(store, 40)
    counts = [c for c, _ in loads]
    moves = [i for i in range(1, len(counts)) if counts[i] != counts[i - 1]]
    assert counts[0] == 0 and moves, counts
    assert moves[0] > 3, "moved before the waiting results had paid for a rewrite"
    for i in moves:  # a move goes all the way: all but the newest two
        assert counts[i] == (i + 3) - 2 and counts[i] > counts[i - 1]
    for i in range(1, len(loads)):  # between moves the old view is the same, byte for byte
        if i not in moves:
            before, now = loads[i - 1][1], loads[i][1]
            assert now[: len(before)] == before
    # 750 characters saved a result, a reply a call, 3 requests ahead: what waited at
    # call n is 750 x sum(k + 3 for k < n - 2); it reaches 24 times the ~10K-character
    # history after the move at call 26 (a rule that moves sooner or later fails here)
    assert [i + 3 for i in moves] == [26], counts


async def test_the_prices_decide_when_a_warm_move_pays(tmp_path: Path, workspace: Path) -> None:
    """A rewrite that costs what a read does pays at once (every load moves, as chunks
    of one did); one that costs a thousand reads never pays while the cache is warm, and
    a cold load still moves all the way."""
    free_store = store_with(tmp_path / "a.db", workspace, cache_write=0.05)
    free = [c for c, _ in await warm_loads(free_store, 12)]
    assert free == [n - 2 for n in range(3, 13)]
    dear = store_with(tmp_path / "b.db", workspace, cache_write=1000.0)
    assert [c for c, _ in await warm_loads(dear, 12)] == [0] * 10
    dear.now = lambda: 1e12  # cold
    assert len(masked_ids((await dear.load(KEY)) or [])) == 10


async def test_trimming_waits_for_the_boundary_and_masking_leaves_one_line(
    tmp_path: Path, workspace: Path
) -> None:
    """Batched, trimming's newest-20 window would slide at every warm load past masking's
    frozen boundary: it waits for the boundary too. A masked large result gets trimming's
    pointer without the quoted head."""
    t = session(0)
    for n in range(25):
        t.call(f"make {n}", f"log {n}\n" + "x" * 3000)
    for when, line in enumerate(t.lines):  # a line a second
        line["timestamp"] = f"1970-01-01T00:00:{when:02d}Z"
    store = store_with(tmp_path / "s.db", workspace, cache_write=1000.0)  # never pays warm
    await store.append(KEY, copy.deepcopy(t.lines))
    store.now = lambda: 60.0  # warm
    warm = (await store.load(KEY)) or []
    assert not store.last_report.get("trimmed") and not masked_ids(warm)
    assert all(v.startswith("log ") for v in results(warm).values())
    store.now = lambda: 1e12  # cold: all but the newest two, each one line
    cold = (await store.load(KEY)) or []
    got = results(cold)
    pointers = [v for v in got.values() if v.startswith("[较早的工具输出")]
    assert len(pointers) == store.last_report.get("trimmed") == 23
    # masking's one line, its file named by content alone (not the call's id)
    assert all(
        re.fullmatch(
            r"\[较早的工具输出\(3,0\d\d 字符\)已移出上下文,原文在 \S+/m-[0-9a-f]{16}\.txt\]", v
        )
        for v in pointers
    )


async def test_on_the_hours_cache_a_move_waits_longer(tmp_path: Path, workspace: Path) -> None:
    """The hour's writes cost 2x the input price, not 1.25x: a session the store knows is
    on the 1-hour cache moves its boundary later (``MaskPolicy.cache_write_hour``)."""
    from flower.stores.mask import HOUR

    five = [c for c, _ in await warm_loads(store_with(tmp_path / "a.db", workspace), 40)]
    store = store_with(tmp_path / "b.db", workspace)
    store.cache_lifetimes[KEY["session_id"]] = HOUR
    hour = [c for c, _ in await warm_loads(store, 40)]
    first = lambda counts: next(i for i, c in enumerate(counts) if c)  # noqa: E731
    assert first(hour) > first(five)
