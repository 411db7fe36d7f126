"""End to end: a messy session resumed through PruningSessionStore in a fresh HOME.

The real SDK and the bundled CLI play :mod:`tests.stores.scenario` against the scripted
model, mirroring into a SQLite store; the session is then resumed from the store alone
(a new ``HOME``, so no local transcript exists) and the assertions read the request the
model receives on resume.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ClaudeSDKClient, ResultMessage

from flower.stores.prune import INTERRUPTED_NOTE, PruningSessionStore
from flower.stores.sqlite import SqliteSessionStore
from flower.stores.trim import EphemeralPolicy, TrimPolicy
from flower.testing import RecordedRequest, ScriptedModel, bash, conversation, text

from . import scenario

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

#: Where a spilled result went: trimming's pointer, or masking's one line.
POINTER = re.compile(r"(?:原文完整保存在|原文在) (\S+?)(?: |\]$)")


def resumed_request(model: ScriptedModel) -> RecordedRequest:
    found = [r for r in model.requests if scenario.RESUME_PROMPT in r.text()]
    assert found, "the resumed session never reached the model"
    return found[0]


def tool_uses(request: RecordedRequest) -> dict[str, dict[str, Any]]:
    return {
        block["id"]: block
        for message in request.messages
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    }


def tool_call_ids(turns: range | list[int]) -> list[str]:
    return [f"toolu_main_{t}_0" for t in turns]


async def test_resume_drops_storm_and_old_denials_and_spills_and_expires(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, claude_env: dict[str, str]
) -> None:
    db = tmp_path / "runs" / "sessions.db"
    sid = await scenario.play_long_session(
        scripted_model, SqliteSessionStore(db), workspace, tmp_path / "home-1"
    )
    plan = scenario.turns()
    commands = {
        f"toolu_main_{i}_0": t.tools[0].input["command"] for i, t in enumerate(plan) if t.tools
    }
    originals: dict[str, str] = {}
    for request in scripted_model.requests:
        originals.update(request.tool_results())
    storm = [r.outcome for r in scripted_model.requests if r.turn == len(plan) - 1]
    assert storm == ["529", "529", "529"], "the retry storm did not happen"
    raw = await SqliteSessionStore(db).load(
        {"project_key": _project_key(workspace), "session_id": sid}
    )
    assert raw is not None and sum(1 for e in raw if e.get("isApiErrorMessage")) >= 1

    store = PruningSessionStore(
        db, workspace=workspace, policy=TrimPolicy(keep_recent=4), ephemeral=EphemeralPolicy()
    )
    # an hour later (a wake, a slow judge): the prompt cache is cold, so every policy
    # applies at once (on a warm cache expiry waits for masking's boundary: test_mask.py)
    store.now = lambda: time.time() + 3600
    await scenario.resume(scripted_model, store, workspace, tmp_path / "home-2", sid)
    request = resumed_request(scripted_model)
    results = request.tool_results()
    uses = tool_uses(request)
    body = json.dumps(request.body, ensure_ascii=False)

    # no synthetic error line reaches the model
    assert "API Error" not in body and "<synthetic>" not in body
    # one denial: the newest; the older two are gone with their calls
    denials = [i for i, t in results.items() if "dispatch a worker" in t]
    denied_ids = [i for i, c in commands.items() if c in scenario.DENIED]
    assert denials == [denied_ids[-1]]
    assert not set(denied_ids[:-1]) & (set(uses) | set(results))
    # large outputs replaced by pointers; the spill files hold the originals byte for byte
    for call_id, command in commands.items():
        if command not in scenario.LARGE:
            continue
        pointer = POINTER.search(results[call_id])
        assert pointer, f"{command} was not trimmed: {results[call_id][:120]!r}"
        spilled = Path(pointer.group(1))
        assert spilled.is_relative_to(workspace.resolve() / ".flower" / "spill")
        assert spilled.read_bytes() == originals[call_id].encode("utf-8")
        assert len(results[call_id]) < len(originals[call_id]) / 10
    # all but the newest six git status results expired, with the template's text
    statuses = [i for i, c in commands.items() if c == scenario.STATUS]
    expired = [i for i in statuses if "的结果已过期" in results[i]]
    assert expired == statuses[:-6]
    assert all("git status" in results[i] and "轮前" in results[i] for i in expired)
    assert all("On branch" in results[i] for i in statuses[-6:])
    # the whole earlier conversation is still there: every surviving call and its result
    expected = [i for i in commands if i not in denied_ids[:-1]]
    assert sorted(uses) == sorted(expected) and sorted(results) == sorted(expected)
    assert scenario.PROMPT in request.text()
    assert store.last_report["denials"] == 2 and store.last_report["expired"] == 4
    assert store.last_report["trimmed"] == 2 and store.last_report["api_errors"] >= 1
    # and nothing stored changed: the raw transcript still has every line
    again = await SqliteSessionStore(db).load(
        {"project_key": _project_key(workspace), "session_id": sid}
    )
    assert again is not None and again[: len(raw)] == raw


async def test_interrupted_call_keeps_its_record_with_the_neutral_note(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, claude_env: dict[str, str]
) -> None:
    loop = "for i in $(seq 1 60); do echo tick $i >> ticks.txt; sleep 1; done"
    scripted_model.play([conversation("main", bash(loop), text("stopped"), text("resumed"))])
    db = tmp_path / "sessions.db"
    options = ClaudeAgentOptions(
        cwd=workspace,
        env=scripted_model.env(home=tmp_path / "home-1"),
        allowed_tools=["Bash"],
        session_store=SqliteSessionStore(db),
    )
    sid = None
    async with ClaudeSDKClient(options) as client:
        await client.query("count slowly")
        async for message in client.receive_messages():
            if isinstance(message, AssistantMessage):
                for _ in range(600):  # wait until the loop is really running, then interrupt
                    if (workspace / "ticks.txt").exists():
                        break
                    await asyncio.sleep(0.05)
                await client.interrupt()
            if isinstance(message, ResultMessage):
                sid = message.session_id
                assert message.subtype == "error_during_execution"
                break
    assert sid is not None

    store = PruningSessionStore(db, workspace=workspace)
    await scenario.resume(scripted_model, store, workspace, tmp_path / "home-2", sid)

    request = resumed_request(scripted_model)
    assert request.tool_results() == {"toolu_main_0_0": INTERRUPTED_NOTE}
    assert "doesn't want to proceed" not in request.text()
    assert store.last_report == {"interrupted": 1}


def _project_key(workspace: Path) -> str:
    from claude_agent_sdk import project_key_for_directory

    return project_key_for_directory(str(workspace))
