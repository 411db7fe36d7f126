"""Observation masking at load time: old results leave the context in cache-friendly
chunks, each one Read away in a spill file; subagent lines of old transcripts don't count."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from flower.stores.mask import MaskPolicy
from flower.stores.prune import PruningSessionStore
from flower.stores.transcript import counted_results
from flower.stores.trim import EphemeralPolicy, TrimPolicy

from .builder import Transcript, results

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}
MASKED = re.compile(r"已移出上下文,原文在 (\S+)\]$")
START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def output(n: int, size: int = 900) -> str:
    return (f"result {n}: line of output with ünïcode\r\n" * (size // 30 + 1))[:size]


def session(calls: int, *, gap_before: dict[int, float] | None = None) -> Transcript:
    """``calls`` Bash calls with 900-character results, one a minute (``gap_before``:
    seconds of silence before the prompt that precedes call N)."""
    t = Transcript()
    t.prompt("work")
    for n in range(calls):
        if gap_before and n in gap_before:
            t.prompt(f"resume {n}")
        t.call(f"make step{n}", output(n))
    when = START
    for line in t.lines:
        content = line["message"]["content"]
        if gap_before and isinstance(content, str) and content.startswith("resume "):
            when += timedelta(seconds=gap_before[int(content.split()[1])])
        when += timedelta(seconds=10)
        line["timestamp"] = when.isoformat().replace("+00:00", "Z")
    return t


async def load(
    tmp_path: Path, workspace: Path, lines: list[dict[str, Any]], now: float, **mask: Any
) -> tuple[PruningSessionStore, list[dict[str, Any]]]:
    store = PruningSessionStore(
        tmp_path / "s.db",
        workspace,
        policy=TrimPolicy(enabled=True),
        mask=MaskPolicy(**{"keep_recent": 2, "chunk": 4, **mask}),
    )
    store.now = lambda: now
    await store.delete(KEY)
    await store.append(KEY, copy.deepcopy(lines))
    out = await store.load(KEY)
    assert out is not None
    return store, out


def last_time(t: Transcript) -> float:
    return datetime.fromisoformat(t.lines[-1]["timestamp"].replace("Z", "+00:00")).timestamp()


def masked_ids(out: list[dict[str, Any]]) -> list[str]:
    return [k for k, v in results(out).items() if isinstance(v, str) and MASKED.search(v)]


async def test_old_results_are_masked_and_recoverable_byte_for_byte(
    tmp_path: Path, workspace: Path
) -> None:
    t = session(10)
    store, out = await load(tmp_path, workspace, t.lines, now=last_time(t) + 3600)  # cold
    got = results(out)
    ids = list(got)
    masked = masked_ids(out)
    assert masked == ids[:8]  # all but the newest two
    assert [got[i] for i in ids[8:]] == [output(8), output(9)]
    for n, call in enumerate(masked):
        path = Path(MASKED.search(got[call]).group(1))
        assert path.read_bytes() == output(n).encode()  # the original, byte for byte
        assert path.is_relative_to(workspace.resolve())
    assert store.last_report["masked"] == 8
    stored = await store.stored(KEY)
    assert stored == t.lines  # the rows never change


async def test_while_the_cache_is_warm_the_boundary_moves_in_chunks_only(
    tmp_path: Path, workspace: Path
) -> None:
    views = []
    for calls in (7, 8, 9, 10):
        t = session(calls)
        _, out = await load(tmp_path, workspace, t.lines, now=last_time(t) + 30)  # warm
        views.append(masked_ids(out))
    # keep 2, chunk 4: 7 and 8 calls mask 4; 9 and 10 mask 4 too (10 - 2 = 8 -> 8)
    assert [len(v) for v in views] == [4, 4, 4, 8]
    assert views[0] == views[1] == views[2] and views[3][:4] == views[0]


async def test_a_cold_resume_in_the_past_keeps_its_reach_at_every_later_load(
    tmp_path: Path, workspace: Path
) -> None:
    t = session(9, gap_before={7: 900})  # a 15-minute pause before call 7's prompt
    _, out = await load(tmp_path, workspace, t.lines, now=last_time(t) + 30)
    # the cold resume came after 7 results: it masked 7 - 2 = 5; the warm chunk rule alone
    # would mask 4, and a later warm load must not unmask the fifth
    assert len(masked_ids(out)) == 5


async def test_a_human_s_answers_are_never_masked(tmp_path: Path, workspace: Path) -> None:
    t = session(0)
    answer = t.call("q", "the human said: use CRLF " * 40, tool="mcp__human__ask")
    for n in range(6):
        t.call(f"make {n}", output(n))
    _, out = await load(tmp_path, workspace, t.lines, now=1e12)  # cold: 7 - 2 = 5 below
    assert results(out)[answer].startswith("the human said")
    assert len(masked_ids(out)) == 4


async def test_old_format_subagent_lines_neither_count_nor_change(
    tmp_path: Path, workspace: Path
) -> None:
    """CLI 1.x wrote a subagent's lines inline (``isSidechain: true``); the CLI never sends
    them, so they must not push the main chain's results out of the newest kept."""
    t = Transcript()
    t.prompt("go")
    main = [t.call(f"make {n}", output(n, 2500)) for n in range(4)]
    for n in range(30):  # a subagent's work, inline, after the main calls
        t.call(f"sub {n}", output(n, 2500))
        t.lines[-1]["isSidechain"] = t.lines[-2]["isSidechain"] = True
    store = PruningSessionStore(
        tmp_path / "s.db",
        workspace,
        policy=TrimPolicy(keep_recent=3, enabled=True),
        ephemeral=EphemeralPolicy(),
        mask=MaskPolicy(enabled=False),
    )
    await store.append(KEY, copy.deepcopy(t.lines))
    out = await store.load(KEY)
    assert out is not None
    got = results(out)
    assert store.last_report.get("trimmed") == 1  # only the 4th-newest main result
    assert got[main[1]] == output(1, 2500) and got[main[3]] == output(3, 2500)
    assert all(got[k] == v for k, v in results(t.lines).items() if k not in main)
    assert len(counted_results(out)) == 4


def test_a_subagent_s_own_transcript_counts_whole() -> None:
    t = Transcript()
    t.prompt("task")
    for n in range(3):
        t.call(f"ls {n}", "x")
    for line in t.lines:
        line["isSidechain"] = True
    assert len(counted_results(t.lines)) == 3


def rounds(n: int, glances: int) -> Transcript:
    """``n`` rounds: a prompt, a 900-character result, a glance (``git status``) in the
    first ``glances`` rounds, a reply; a minute between lines (the cache stays warm)."""
    t = Transcript()
    for r in range(n):
        t.prompt(f"round {r}")
        t.call(f"make part{r}", output(r))
        if r < glances:
            t.call("git status", f"On branch main\nmodified: src/part{r}.py\n")
        t.say(f"round {r} done")
    for k, line in enumerate(t.lines):
        line["timestamp"] = (START + timedelta(minutes=k)).isoformat().replace("+00:00", "Z")
    return t


async def test_between_two_moves_the_old_view_is_the_same_byte_for_byte(
    tmp_path: Path, workspace: Path
) -> None:
    """What the cache holds survives a warm resume: the lines of the shorter session come
    back the same in the longer one's view, expiry notes ("N rounds ago") included."""
    views = []
    for n in (13, 15):  # 23 and 25 results, keep 2: the boundary stays at 12
        t = rounds(n, glances=10)
        store, out = await load(tmp_path, workspace, t.lines, now=last_time(t) + 30, chunk=12)
        views.append(out)
        assert store.last_report.get("expired")  # glances past the newest six did expire
    shorter, longer = views
    assert longer[: len(shorter)] == shorter


async def test_a_spill_file_removed_between_loads_is_written_again(
    tmp_path: Path, workspace: Path
) -> None:
    """A load remembers what it spilled (the next one need not hash it all again), but
    never names a file that is gone."""
    t = session(6)
    t.call("make big", "z" * 5000)
    t.call("make more", output(99))
    t.call("make last", output(98))
    store, out = await load(tmp_path, workspace, t.lines, now=1e12)  # cold: all but 2
    spilled = sorted((workspace / ".flower" / "spill").glob("*.txt"))
    assert len(spilled) == 7  # six masked, one trimmed (the 5000 characters)
    for path in spilled:
        path.unlink()
    again = await store.load(KEY)
    assert again == out
    assert sorted((workspace / ".flower" / "spill").glob("*.txt")) == spilled
    assert "z" * 5000 in {p.read_text() for p in spilled}


async def test_on_a_warm_cache_expiry_waits_for_the_boundary(
    tmp_path: Path, workspace: Path
) -> None:
    """A glance a round, warm loads: the newest six would slide every round and change
    old context at every resume; expiry moves with masking's boundary instead, and a cold
    load expires exactly the seed's way (all but the newest six)."""
    views = []
    for n in (13, 15):  # 26 and 30 results, keep 2, chunk 12: the boundary stays at 24
        t = rounds(n, glances=n)
        store, out = await load(tmp_path, workspace, t.lines, now=last_time(t) + 30, chunk=12)
        views.append((out, store.last_report.get("expired")))
    (shorter, expired_short), (longer, expired_long) = views
    assert expired_short == expired_long == 7  # 13 glances in the frozen pool, 6 kept
    assert longer[: len(shorter)] == shorter
    t = rounds(15, glances=15)
    store, _ = await load(tmp_path, workspace, t.lines, now=last_time(t) + 3600)  # cold
    assert store.last_report.get("expired") == 15 - 6


async def test_a_secret_known_only_later_is_hidden_at_the_next_load(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a load remembers it spilled is for one redactor: a token the process learns
    between two loads is hidden in the second one's pointer and file."""
    token = "ghp_decoyTOKEN0123456789abcdefghij"
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    t = session(0)
    big = t.call("env", f"GITHUB_TOKEN={token}\n" + "row\n" * 1000)
    t.call("make test", "z" * 10)
    store = PruningSessionStore(
        tmp_path / "s.db", workspace, policy=TrimPolicy(keep_recent=1), mask=MaskPolicy()
    )
    await store.append(KEY, copy.deepcopy(t.lines))
    first = await store.load(KEY)
    assert first is not None and token in results(first)[big]
    monkeypatch.setenv("GITHUB_TOKEN", token)
    second = await store.load(KEY)
    assert second is not None
    pointer = results(second)[big]
    assert token not in pointer and "GITHUB_TOKEN" in pointer
    path = Path(re.search(r"原文完整保存在 (\S+) ", pointer).group(1))  # type: ignore[union-attr]
    assert token not in path.read_text()


async def test_a_read_s_text_blocks_are_masked_one_by_one_and_images_stay(
    tmp_path: Path, workspace: Path
) -> None:
    t = session(0)
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
    }
    read = t.call("Read", [{"type": "text", "text": output(1)}, image], tool="Read")
    for n in range(3):
        t.call(f"make {n}", "ok")
    _, out = await load(tmp_path, workspace, t.lines, now=1e12)  # cold
    first, kept = results(out)[read]
    assert kept == image
    path = Path(MASKED.search(first["text"]).group(1))  # type: ignore[union-attr]
    assert path.read_bytes() == output(1).encode()


async def test_a_long_tool_run_inside_a_session_is_no_cold_point(
    tmp_path: Path, workspace: Path
) -> None:
    """A command that ran fifteen minutes let the cache go cold, but no load happened
    there: counting it would move the boundary at the next warm load, for a rewrite."""
    t = session(9)
    slow = next(i for i, line in enumerate(t.lines) if line["type"] == "user" and i > 14)
    for line in t.lines[slow:]:
        when = datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00"))
        line["timestamp"] = (when + timedelta(seconds=900)).isoformat().replace("+00:00", "Z")
    _, out = await load(tmp_path, workspace, t.lines, now=last_time(t) + 30)
    assert len(masked_ids(out)) == 4  # the chunk rule alone: (9 - 2) // 4 * 4


async def test_supersede_expires_a_glance_that_ran_again_later(
    tmp_path: Path, workspace: Path
) -> None:
    """``MaskPolicy(supersede=True)``: of a glance run several times only the newest run
    stays, even among the newest six glances that expiry alone keeps; a glance that never
    ran again stays; the command is compared with its spaces normalised."""
    t = Transcript()
    for r in range(6):
        t.prompt(f"round {r}")
        t.call(f"make part{r}", output(r))
        if r < 3:
            command = "git   status" if r == 2 else "git status"
            t.call(command, f"On branch main\nmodified: src/part{r}.py\n")
        if r == 1:
            t.call("ls src", "part0.py\npart1.py\n")
        t.say(f"round {r} done")
    for k, line in enumerate(t.lines):
        line["timestamp"] = (START + timedelta(minutes=k)).isoformat().replace("+00:00", "Z")
    cold = last_time(t) + 3600  # the boundary is all the way: newest 2 stay
    store, _ = await load(tmp_path, workspace, t.lines, now=cold)
    assert not store.last_report.get("expired")  # 4 glances, expiry keeps the newest 6
    store, out = await load(tmp_path, workspace, t.lines, now=cold, supersede=True)
    assert store.last_report.get("expired") == 2
    texts = [v for v in results(out).values() if isinstance(v, str)]
    expired = [v for v in texts if "git status" in v and "已过期" in v]
    assert len(expired) == 2
    assert sum("modified: src/part2.py" in v for v in texts) == 1  # the newest run stays
    assert not any("modified: src/part0.py" in v or "modified: src/part1.py" in v for v in texts)
    assert any("part0.py\npart1.py" in v for v in texts)  # ls ran once: it stays
