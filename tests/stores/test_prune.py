"""PruningSessionStore: retry-storm lines, old denials and interrupt leftovers, through
a real store (append, then load), with the chain checked after every removal."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from flower.stores.prune import INTERRUPTED_NOTE, PrunePolicy, PruningSessionStore, relink
from flower.stores.trim import EphemeralPolicy, TrimPolicy

from .builder import DENY_TEXT, Transcript, calls, chain, results

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}


async def stored_and_loaded(
    tmp_path: Path, workspace: Path, t: Transcript, **policies: object
) -> tuple[PruningSessionStore, list[dict]]:
    store = PruningSessionStore(tmp_path / "s.db", workspace=workspace, **policies)  # type: ignore[arg-type]
    await store.append(KEY, copy.deepcopy(t.lines))
    loaded = await store.load(KEY)
    assert loaded is not None
    return store, loaded


async def test_a_retry_storm_leaves_no_trace_and_the_chain_holds(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("fix the parser")
    first = t.call("make test", "3 failed")
    t.storm(retries=2)
    t.last_prompt()  # its leafUuid names the synthetic reply
    resumed = t.prompt("the last round was cut short: carry on")

    store, loaded = await stored_and_loaded(tmp_path, workspace, t)

    assert not [x for x in loaded if x.get("isApiErrorMessage") or x.get("subtype") == "api_error"]
    assert store.last_report["api_errors"] == 3
    assert chain(loaded)[-1] == resumed["uuid"] and chain(loaded)[0] == t.lines[0]["uuid"]
    tool_result_line = next(x for x in loaded if results([x]).get(first))
    assert (
        next(x for x in loaded if x.get("uuid") == resumed["uuid"])["parentUuid"]
        == tool_result_line["uuid"]
    )
    marker = next(x for x in loaded if x["type"] == "last-prompt")
    assert marker["leafUuid"] == tool_result_line["uuid"]


@pytest.mark.parametrize("keep", [0, 1, 2, 5])
async def test_only_the_newest_denials_stay_with_their_calls(
    tmp_path: Path, workspace: Path, keep: int
) -> None:
    t = Transcript()
    t.prompt("clean up")
    denied = [t.denied("rm -rf build"), t.call("ls", "a b"), t.not_granted("rm -rf dist")]
    denied += [t.absent("every 5 minutes"), t.denied("rm -rf cache")]
    done = t.call("git status", "clean")
    t.say("done")

    store, loaded = await stored_and_loaded(
        tmp_path, workspace, t, prune=PrunePolicy(keep_denials=keep)
    )

    denials = [i for i in denied if i != denied[1]]
    kept = denials[max(len(denials) - keep, 0) :] if keep else []
    gone = set(denials) - set(kept)
    assert set(results(loaded)) == set(results(t.lines)) - gone
    assert set(calls(loaded)) == set(calls(t.lines)) - gone  # no tool_use without its result
    assert store.last_report.get("denials", 0) == len(gone)
    assert len(chain(loaded)) == len([x for x in loaded if "uuid" in x])  # one unbroken chain
    assert results(loaded)[done] == "clean"
    if keep == 1:
        assert results(loaded)[denials[-1]] == DENY_TEXT


async def test_interrupted_results_keep_their_record_with_the_neutral_note(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("count slowly")
    cut = t.interrupted("for i in 1 2 3; do sleep 1; done")
    t.prompt("go on")

    store, loaded = await stored_and_loaded(tmp_path, workspace, t)

    assert results(loaded) == {cut: INTERRUPTED_NOTE}
    assert calls(loaded) == [cut] and len(loaded) == len(t.lines)
    line = next(x for x in loaded if results([x]))
    assert line["message"]["content"][0]["is_error"] is True  # only the text changed
    assert any("[Request interrupted by user" in str(x["message"]["content"]) for x in loaded)
    assert store.last_report == {"interrupted": 1}


async def test_a_call_the_human_rejected_is_interrupted_whatever_its_text_says(
    tmp_path: Path, workspace: Path
) -> None:
    """``toolDenialKind: user-rejected`` decides, not the wording (which the CLI may change,
    or translate): such a call is neutralised, never counted as a denial."""
    t = Transcript()
    t.prompt("count slowly")
    cut = t.call("sleep 9", "stopped here", is_error=True, toolDenialKind="user-rejected")
    t.prompt("go on")

    store, loaded = await stored_and_loaded(tmp_path, workspace, t)

    assert results(loaded) == {cut: INTERRUPTED_NOTE}
    assert store.last_report == {"interrupted": 1}


async def test_with_trimming_off_pruning_expiry_and_neutralising_still_happen(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("work")
    big = t.call("cat build.log", "x" * 50_000)
    statuses = [t.call("git status", f"state {n}") for n in range(8)]
    t.denied("rm -rf a")
    t.denied("rm -rf b")
    cut = t.interrupted("make")
    t.storm(retries=1)
    t.prompt("resume")

    store, loaded = await stored_and_loaded(
        tmp_path, workspace, t, policy=TrimPolicy(enabled=False, keep_recent=0)
    )

    assert store.last_report == {"api_errors": 2, "denials": 1, "interrupted": 1, "expired": 2}
    assert results(loaded)[big] == "x" * 50_000  # not trimmed: trim=False
    assert "已过期" in results(loaded)[statuses[0]] and results(loaded)[statuses[-1]] == "state 7"
    assert results(loaded)[cut] == INTERRUPTED_NOTE
    assert not (workspace / ".flower").exists()


async def test_stored_lines_never_change(tmp_path: Path, workspace: Path) -> None:
    t = Transcript()
    t.prompt("work")
    t.denied("rm -rf a")
    t.denied("rm -rf b")
    t.call("seq 1 9999", "\n".join(map(str, range(9999))))
    t.storm()
    store, _ = await stored_and_loaded(
        tmp_path,
        workspace,
        t,
        policy=TrimPolicy(keep_recent=0),
        ephemeral=EphemeralPolicy(keep_recent=0),
        prune=PrunePolicy(keep_denials=0),
    )
    from flower.stores.sqlite import SqliteSessionStore

    assert await SqliteSessionStore(tmp_path / "s.db").load(KEY) == t.lines
    assert await store.load(KEY) == await store.load(KEY)  # loading twice is the same


def test_relink_skips_runs_of_removed_lines() -> None:
    lines = [{"uuid": "a", "parentUuid": None}] + [
        {"uuid": c, "parentUuid": p} for p, c in zip("abcd", "bcde", strict=True)
    ]
    kept = relink([lines[0], lines[4]], lines, removed={1, 2, 3})
    assert [(x["uuid"], x["parentUuid"]) for x in kept] == [("a", None), ("e", "a")]


async def test_the_chain_holds_across_a_compact_boundary_and_in_subagent_transcripts(
    tmp_path: Path, workspace: Path
) -> None:
    """A compact boundary starts a new chain (``parentUuid`` null) and points back with
    ``logicalParentUuid``; a subagent's transcript (a subpath) is a chain of its own.
    Removals re-link both, and the compact summary itself is left as it was."""
    t = Transcript()
    t.prompt("work")
    done = t.call("make", "ok")
    t.storm(retries=2)  # the storm's synthetic reply is the line the compaction follows
    t.lines.append(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "parentUuid": None,
            "logicalParentUuid": t.lines[-1]["uuid"],
            "uuid": "boundary",
            "compactMetadata": {"trigger": "auto", "preTokens": 180000},
        }
    )
    t._parent = "boundary"
    summary = t._add(
        {
            "type": "user",
            "isCompactSummary": True,
            "message": {"role": "user", "content": "This session is being continued…"},
        }
    )
    t.denied("rm -rf a")
    t.denied("rm -rf b")
    t.prompt("go on")
    sub = Transcript()
    sub.prompt("a worker's task")
    sub.denied("rm -rf c")
    sub.storm(retries=1)
    sub.denied("rm -rf d")
    sub.say("done")
    sub_key = {**KEY, "subpath": "subagents/agent-a1"}
    store, loaded = await stored_and_loaded(tmp_path, workspace, t)
    await store.append(sub_key, copy.deepcopy(sub.lines))

    boundary = next(x for x in loaded if x.get("uuid") == "boundary")
    tool_result_line = next(x for x in loaded if results([x]).get(done))
    assert boundary["parentUuid"] is None
    assert boundary["logicalParentUuid"] == tool_result_line["uuid"]
    cut = loaded.index(boundary)
    before, after = loaded[:cut], loaded[cut:]
    assert chain(before) == [x["uuid"] for x in before]  # ends where the boundary points
    assert before[-1] is tool_result_line
    assert chain(after) == [x["uuid"] for x in after]  # starts at the boundary
    assert next(x for x in loaded if x.get("isCompactSummary")) == summary
    assert store.last_report == {"api_errors": 3, "denials": 1}

    sub_loaded = await store.load(sub_key)
    assert sub_loaded is not None
    assert chain(sub_loaded) == [x["uuid"] for x in sub_loaded]  # one unbroken chain
    assert sub_loaded[0]["uuid"] == sub.lines[0]["uuid"] and len(sub_loaded) == 4
    assert store.last_report == {"api_errors": 2, "denials": 1}
