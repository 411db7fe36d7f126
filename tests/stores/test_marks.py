"""A load never draws the mask or expiry boundary nearer than the last load of the
session did (``stores/marks.py``): what one request sent masked or expired stays so, and
the prompt cache's prefix with it. The cases a user meets most, in the transcripts'
shapes: a warm resume right after a cold one (the CLI stamps its ``queue-operation``
line with the new prompt's time), the default Runtime's expiry (masking off), a fork,
an older denial pruned away under the mark."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from flower.stores.marks import load_marks, place
from flower.stores.mask import MaskPolicy
from flower.stores.prune import PruningSessionStore
from flower.stores.trim import TrimPolicy

from .builder import Transcript
from .test_mask import last_time, masked_ids, output, rounds, session

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}
ROW_KEY = ("proj", "s1", "")


def stamp(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z")


def masking_store(path: Path, workspace: Path) -> PruningSessionStore:
    """The trimming Runtime's store, with the default chunk of 12 and two kept."""
    return PruningSessionStore(
        path, workspace, policy=TrimPolicy(enabled=True), mask=MaskPolicy(keep_recent=2)
    )


def resumed(t: Transcript, at: float, *, queued: bool = True) -> list[dict[str, Any]]:
    """What a resume at ``at`` adds: the CLI's queue line and the prompt, both stamped
    ``at``, then one more call; the new lines only."""
    start = len(t.lines)
    new: list[dict[str, Any]] = []
    if queued:
        new.append(
            {"type": "queue-operation", "operation": "enqueue", "timestamp": stamp(at),
             "sessionId": "s1", "content": "go on"}
        )  # fmt: skip
    t.prompt("go on")
    t.call("make more", output(99))
    for k, line in enumerate(t.lines[start:]):
        line["timestamp"] = stamp(at + 10 * k)
    return new + copy.deepcopy(t.lines[start:])


async def test_a_warm_resume_after_a_cold_one_keeps_every_result_masked(
    tmp_path: Path, workspace: Path
) -> None:
    t = session(9)
    store = masking_store(tmp_path / "s.db", workspace)
    cold = last_time(t) + 3600
    store.now = lambda: cold
    await store.append(KEY, copy.deepcopy(t.lines))
    first = masked_ids((await store.load(KEY)) or [])
    assert len(first) == 7  # cold: all but the newest two
    await store.append(KEY, resumed(t, cold))
    store.now = lambda: cold + 60  # the next resume, a minute later: warm
    second = masked_ids((await store.load(KEY)) or [])
    assert second[: len(first)] == first
    # and from the lines alone (another store, no marks): the queue line is no sign of a
    # warm cache, the gap before the prompt still shows the cold resume
    fresh = masking_store(tmp_path / "fresh.db", workspace)
    fresh.now = store.now
    await fresh.append(KEY, copy.deepcopy((await store.stored(KEY)) or []))
    assert masked_ids((await fresh.load(KEY)) or [])[: len(first)] == first


async def test_the_mark_holds_where_the_timestamps_show_no_gap(
    tmp_path: Path, workspace: Path
) -> None:
    """Lines stamped as if the session never paused (a clock that jumped, a CLI that
    rewrote them): the last load's mark alone keeps the results masked."""
    t = session(9)
    store = masking_store(tmp_path / "s.db", workspace)
    store.now = lambda: last_time(t) + 3600
    await store.append(KEY, copy.deepcopy(t.lines))
    first = masked_ids((await store.load(KEY)) or [])
    assert len(first) == 7 and load_marks(store._engine, ROW_KEY)["mask"][1] == 7
    soon = last_time(t) + 20
    await store.append(KEY, resumed(t, soon, queued=False))
    store.now = lambda: soon + 30
    assert masked_ids((await store.load(KEY)) or [])[:7] == first
    await store.delete(KEY)  # a session deleted takes its marks along
    assert load_marks(store._engine, ROW_KEY) == {}


async def test_the_default_runtime_s_expiry_waits_for_the_boundary_too(
    tmp_path: Path, workspace: Path
) -> None:
    """``Runtime(trim=False)``: no masking, yet expiry notes change old context; a glance
    a round must not expire one more old result at every warm resume."""
    t = rounds(14, glances=14)  # six lines a round: prompt, call, glance, reply
    store = PruningSessionStore(tmp_path / "s.db", workspace, policy=TrimPolicy(enabled=False))
    assert not store.masking
    views = []
    for upto in (13 * 6, 14 * 6):  # 26 then 28 results: the boundary stays at 12
        await store.delete(KEY)
        await store.append(KEY, copy.deepcopy(t.lines[:upto]))
        store.now = lambda upto=upto: last_time(t) - 60 * (len(t.lines) - upto) + 30
        views.append(((await store.load(KEY)) or [], store.last_report.get("expired")))
    (shorter, expired_short), (longer, expired_long) = views
    assert longer[: len(shorter)] == shorter, "old context changed between warm resumes"
    assert expired_short == expired_long == 3
    store.now = lambda: last_time(t) + 3600  # cold: the seed's rule, all but six
    await store.load(KEY)
    assert store.last_report.get("expired") == 14 - 6


async def test_a_fork_starts_from_its_parent_s_marks(tmp_path: Path, workspace: Path) -> None:
    t = session(9)
    store = masking_store(tmp_path / "s.db", workspace)
    store.now = lambda: last_time(t) + 3600
    await store.append(KEY, copy.deepcopy(t.lines))
    view = (await store.load(KEY)) or []
    fork = {"project_key": "proj", "session_id": "s2"}
    await store.append(fork, [{**line, "sessionId": "s2"} for line in copy.deepcopy(view)])
    assert load_marks(store._engine, ("proj", "s2", "")) == load_marks(store._engine, ROW_KEY)
    store.now = lambda: last_time(t) + 30  # as if warm: only the mark keeps the reach
    assert masked_ids((await store.load(fork)) or []) == masked_ids(view)


def test_a_mark_is_placed_by_its_result_when_older_lines_went() -> None:
    assert place(None, ["a", "b"]) == 0
    assert place(("c", 3), ["a", "b", "c", "d"]) == 3
    assert place(("c", 3), ["b", "c", "d"]) == 2  # an old denial pruned: one less below
    assert place(("c", 3), ["x", "y", "z", "w"]) == 3  # the result is gone: its count
    assert place(("c", 9), ["a", "b", "c"]) == 3  # never more than there are


async def test_a_session_on_the_hour_s_cache_is_warm_after_six_minutes(
    tmp_path: Path, workspace: Path
) -> None:
    """The Runtime tells the store which sessions asked for the 1-hour cache
    (``runtime/cache_rhythm.py``): a load 6 minutes after their last line is warm, and
    the old context stays as the cache holds it."""
    t = session(9)
    store = masking_store(tmp_path / "s.db", workspace)
    await store.append(KEY, copy.deepcopy(t.lines))
    store.now = lambda: last_time(t) + 360
    store.cache_lifetimes["s1"] = 3600.0
    assert masked_ids((await store.load(KEY)) or []) == []  # warm: the chunk rule (0)
    store.cache_lifetimes.clear()
    assert len(masked_ids((await store.load(KEY)) or [])) == 7  # 5 minutes: cold
