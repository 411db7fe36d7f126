"""PrunePolicy.heal_orphans: a call left without its result gets one at load time.

The shapes are the ones the bundled CLI leaves when its process is killed mid-tool
(measured; see tests/runtime/test_heal_orphans_e2e.py for the real thing): the
assistant line with the ``tool_use`` is stored, its ``tool_result`` never is.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from flower.stores.prune import ORPHAN_NOTE, PrunePolicy, PruningSessionStore
from flower.stores.sqlite import SqliteSessionStore

from .builder import Transcript, calls, chain, results

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}
CLI_HEALED = (
    "[Tool call interrupted: the session ended before this call's result was recorded, so its"
    " outcome is unknown. Check whether it took effect before relying on it or running it again.]"
)


def orphan(t: Transcript, *commands: str, message_id: str | None = None) -> list[str]:
    """One assistant message calling ``commands`` (one line per block), with no result."""
    mid = message_id or f"msg_{len(t.lines)}"
    ids = []
    for command in commands:
        call_id = f"toolu_{len(t.lines)}"
        ids.append(call_id)
        t._add(
            {
                "type": "assistant",
                "message": {
                    "id": mid,
                    "role": "assistant",
                    "model": "claude-opus-5-5",
                    "content": [{"type": "tool_use", "id": call_id, "name": "Bash",
                                 "input": {"command": command}}],
                    "stop_reason": "tool_use",
                    "usage": {"input_tokens": 1200},
                },
                "sessionId": "s1",
                "cwd": "/ws",
            }
        )  # fmt: skip
    return ids


def line_of(lines: list[dict[str, Any]], uid: str) -> dict[str, Any]:
    return next(x for x in lines if x.get("uuid") == uid)


def healed_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [x for x in lines if x.get("flowerHealed")]


async def load(
    tmp_path: Path, workspace: Path, t: Transcript, **policy: Any
) -> tuple[PruningSessionStore, list[dict[str, Any]]]:
    store = PruningSessionStore(tmp_path / "s.db", workspace=workspace, prune=PrunePolicy(**policy))
    await store.append(KEY, copy.deepcopy(t.lines))
    loaded = await store.load(KEY)
    assert loaded is not None
    return store, loaded


async def test_a_call_killed_mid_run_gets_an_error_result_right_after_it(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("build it")
    done = t.call("make", "ok")
    (cut,) = orphan(t, "make test")
    t.last_prompt()

    store, loaded = await load(tmp_path, workspace, t)

    assert results(loaded) == {done: "ok", cut: ORPHAN_NOTE}
    (healed,) = healed_lines(loaded)
    assert healed["message"]["content"] == [
        {"type": "tool_result", "tool_use_id": cut, "content": ORPHAN_NOTE, "is_error": True}
    ]
    call_line = t.lines[-2]
    assert healed["parentUuid"] == call_line["uuid"] == healed["sourceToolAssistantUUID"]
    assert (healed["type"], healed["sessionId"], healed["cwd"]) == ("user", "s1", "/ws")
    assert loaded.index(healed) == loaded.index(line_of(loaded, call_line["uuid"])) + 1
    assert chain(loaded)[-1] == healed["uuid"]  # the new leaf: nothing dangles
    assert next(x for x in loaded if x["type"] == "last-prompt")["leafUuid"] == healed["uuid"]
    assert store.last_report == {"orphans": 1}

    again = await store.load(KEY)  # the same transcript heals to the same line every time
    assert again == loaded
    raw = await SqliteSessionStore.load(store, KEY)
    assert raw == t.lines  # the stored rows never change


async def test_an_orphan_in_the_middle_keeps_the_chain_through_its_result(
    tmp_path: Path, workspace: Path
) -> None:
    # The CLI (measured) drops such a call from the request altogether: the model would
    # no longer know it ran the command.
    t = Transcript()
    t.prompt("build it")
    (cut,) = orphan(t, "make install")
    call_line = t.lines[-1]
    t.storm(retries=1)  # the next process met an outage first: removed, then healed
    later = t.prompt("carry on")
    reply = t.say("carrying on")

    _, loaded = await load(tmp_path, workspace, t)

    (healed,) = healed_lines(loaded)
    assert results(loaded) == {cut: ORPHAN_NOTE} and calls(loaded) == [cut]
    assert line_of(loaded, later["uuid"])["parentUuid"] == healed["uuid"]
    assert chain(loaded) == [t.lines[0]["uuid"], call_line["uuid"], healed["uuid"],
                             later["uuid"], reply["uuid"]]  # fmt: skip


async def test_a_parallel_call_that_did_not_finish_joins_its_siblings_result_line(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("two things")
    quick, slow = orphan(t, "echo quick", "make slow", message_id="msg_par")
    first_line = t.lines[1]
    answer = t._add(
        {
            "type": "user",
            "parentUuid": first_line["uuid"],
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": quick, "content": "quick"}],
            },
        }
    )

    store, loaded = await load(tmp_path, workspace, t)

    assert not healed_lines(loaded) and len(loaded) == len(t.lines)
    assert [b["tool_use_id"] for b in line_of(loaded, answer["uuid"])["message"]["content"]] == [
        quick,
        slow,
    ]
    assert results(loaded) == {quick: "quick", slow: ORPHAN_NOTE}
    assert store.last_report == {"orphans": 1}


async def test_every_orphan_of_one_message_is_answered_in_one_line_after_its_last_block(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("three things")
    ids = orphan(t, "a", "b", "c", message_id="msg_three")
    last_block_line = t.lines[-1]
    t.say("an unrelated later reply")  # hangs under the message: moves under the results

    store, loaded = await load(tmp_path, workspace, t)

    (healed,) = healed_lines(loaded)
    assert [b["tool_use_id"] for b in healed["message"]["content"]] == ids
    assert healed["parentUuid"] == last_block_line["uuid"]
    assert loaded[-1]["parentUuid"] == healed["uuid"]
    assert store.last_report == {"orphans": 3}
    assert len(chain(loaded)) == len(loaded)


async def test_a_subagent_transcript_heals_as_a_sidechain(tmp_path: Path, workspace: Path) -> None:
    t = Transcript()
    t.prompt("sub task")
    (cut,) = orphan(t, "pytest")
    for line in t.lines:
        line.update(isSidechain=True, agentId="a1b2")
    key = {**KEY, "subpath": "subagents/agent-a1b2"}
    store = PruningSessionStore(tmp_path / "s.db", workspace=workspace)
    await store.append(key, copy.deepcopy(t.lines))
    loaded = await store.load(key)
    assert loaded is not None
    (healed,) = healed_lines(loaded)
    assert (healed["isSidechain"], healed["agentId"]) == (True, "a1b2")
    assert results(loaded) == {cut: ORPHAN_NOTE}


async def test_the_clis_own_healed_result_is_reworded_to_the_same_note(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("build it")
    cut = t.call("make test", CLI_HEALED, is_error=True, toolDenialKind="interrupted")
    t.say("No response requested.")
    t.prompt("carry on")

    store, loaded = await load(tmp_path, workspace, t)

    assert results(loaded) == {cut: ORPHAN_NOTE} and not healed_lines(loaded)
    line = next(x for x in loaded if results([x]))
    assert line["message"]["content"][0]["is_error"] is True
    assert store.last_report == {"orphans": 1}


async def test_heal_orphans_off_leaves_the_transcript_as_stored(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("build it")
    orphan(t, "make test")
    cli = t.call("make", CLI_HEALED, is_error=True, toolDenialKind="interrupted")

    store, loaded = await load(tmp_path, workspace, t, heal_orphans=False)

    assert loaded == t.lines and store.last_report == {}
    assert results(loaded) == {cli: CLI_HEALED}


async def test_a_custom_note_and_nothing_to_heal(tmp_path: Path, workspace: Path) -> None:
    t = Transcript()
    t.prompt("build it")
    ok = t.call("make", "built")
    t.say("done")
    store, loaded = await load(tmp_path, workspace, t, orphan_note="gone")
    assert loaded == t.lines and store.last_report == {}
    (cut,) = orphan(t, "make again")
    _, loaded2 = await load(tmp_path / "b", workspace, t, orphan_note="gone")
    assert results(loaded2) == {ok: "built", cut: "gone"}
