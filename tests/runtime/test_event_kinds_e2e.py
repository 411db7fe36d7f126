"""The event kinds a view tells apart, from real CLI runs against the scripted model.

- Every message event (``text``, ``thinking``, ``tool``, ``tool_result``, ``system``)
  carries ``subagent`` and ``context``: whose thread said it, and how full that thread's
  context was (its own usage, or the thread's latest figure for a message without one).
- ``error``: a step that failed for good, just before its ``result``; never for success.
- ``reset``: after a handoff, the step goes on in a new session from the document.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flower.kernel.events import Event
from flower.records.workbench import Workbench
from flower.roles.agent import AgentSpec, HandoffPolicy
from flower.roles.factory import coordinator, worker
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, Turn, bash, conversation, text, tool

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

MESSAGE_KINDS = {"text", "thinking", "tool", "tool_result", "system", "unknown"}
DOC = "## 正在做\n在造那个东西\n## 已决定\n用标准库\n## 下一步\n写渲染器\n## 现场\nsrc/thing.py"


def of(events: list[Event], kind: str) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.kind == kind]


async def test_every_message_event_says_whose_thread_and_how_full_it_is(
    scripted_model: ScriptedModel, claude_env: dict[str, str], make_runtime: Callable[..., Runtime]
) -> None:
    dispatch = {"description": "count", "prompt": "count to three",
                "subagent_type": "coder", "run_in_background": False}  # fmt: skip
    scripted_model.play(
        [
            conversation(
                "coder",
                bash("echo 1 2 3", usage={"input_tokens": 7_000}),
                text("counted", usage={"input_tokens": 7_400}),
                subagent=True,
            ),
            conversation(
                "lead",
                Turn(
                    thinking="a worker should",
                    text="sending a worker",
                    tools=tool("Agent", dispatch).tools,
                    usage={"input_tokens": 21_000},
                ),
                text("all done", usage={"input_tokens": 23_500}),
                subagent=False,
            ),
        ]
    )
    lead = coordinator("协调者", "", workers={"coder": worker("counts", "count it")})
    events: list[Event] = []
    r = await make_runtime().run(lead, "count", on_event=events.append)
    assert r.ok, r.errors

    messages = [e for e in events if e.kind in MESSAGE_KINDS]
    assert {e.kind for e in messages} >= {"text", "thinking", "tool", "tool_result", "system"}
    for event in messages:
        assert "subagent" in event.payload and "context" in event.payload, event
    said = {(e.kind, e.payload.get("text") or e.payload.get("name")): e.payload for e in messages}
    # the main thread: its own usage on what it says
    assert said[("thinking", "a worker should")] == {
        "text": "a worker should", "subagent": False, "context": 21_000
    }  # fmt: skip
    assert said[("text", "sending a worker")]["subagent"] is False
    assert said[("tool", "Agent")]["subagent"] is False
    assert said[("tool", "Agent")]["context"] == 21_000
    assert said[("text", "all done")]["context"] == 23_500
    # the subagent's thread (the CLI streams its tool calls): its own figure
    assert said[("tool", "Bash")]["subagent"] is True and said[("tool", "Bash")]["context"] == 7_000
    # a tool result has no usage of its own: its thread's latest figure
    results = {p["subagent"]: p for p in of(events, "tool_result")}
    assert results[True]["context"] == 7_000 and "1 2 3" in results[True]["text"]
    assert results[False]["context"] == 21_000  # the Agent call's result, in the main thread
    # before the first reply nobody knows how full the session is
    init = next(p for p in of(events, "system") if p["subtype"] == "init")
    assert init["subagent"] is False and init["context"] is None
    assert not of(events, "error") and [e.kind for e in events][-1] == "result"


async def test_a_failed_step_sends_error_then_result(
    scripted_model: ScriptedModel, claude_env: dict[str, str], make_runtime: Callable[..., Runtime]
) -> None:
    scripted_model.play([conversation("main", Turn(text="never", fail_always=401))])
    events: list[Event] = []
    spec = AgentSpec(name="w", instructions="", allowed_tools=["Bash"])
    r = await make_runtime(resilience=False).run(spec, "go", on_event=events.append)
    assert not r.ok
    kinds = [e.kind for e in events]
    assert kinds[-2:] == ["error", "result"] and kinds.count("error") == 1
    error = events[-2]
    assert error.step == "w" and error.payload["error"] == r.error and "401" in r.error
    assert error.payload["class"] == "fatal" and error.payload["attempts"] == 1
    assert error.payload["session_id"] == r.session_id
    assert events[-1].payload["ok"] is False and events[-1].payload["stopped"] is False


async def test_a_handoff_sends_reset_before_the_new_session(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    make_runtime: Callable[..., Runtime],
) -> None:
    scripted_model.play(
        [
            conversation("handoff", text(DOC, usage={"input_tokens": 500}), after_user="只写交接"),
            conversation(
                "successor", text("finished", usage={"input_tokens": 500}), first_user="你接手"
            ),
            conversation(
                "main",
                bash("echo one", usage={"input_tokens": 25_000}),
                bash("echo two", usage={"input_tokens": 45_000}),
                first_user="build the thing",
            ),
        ]
    )
    wb = Workbench(workspace, home=tmp_path / "wb")
    rt = make_runtime(handoff=HandoffPolicy(window=60_000, headroom=20_000), workbench=wb)
    events: list[Event] = []
    spec = AgentSpec(name="worker", instructions="", allowed_tools=["Bash"])
    r = await rt.run(spec, "build the thing", step_name="干活", on_event=events.append)
    assert r.ok and len(r.retired) == 1, r.errors

    (reset,) = [e for e in events if e.kind == "reset"]
    assert reset.step == "干活"
    assert reset.payload == {
        "session_id": r.retired[0],
        "generation": 1,
        "path": str(wb.notes / "交接-干活.md"),
        "degraded": False,
    }
    kinds = [e.kind for e in events]
    done = max(i for i, e in enumerate(events) if e.kind == "handoff")
    at = kinds.index("reset")
    sessions = [i for i, e in enumerate(events) if e.kind == "session"]
    assert done < at < sessions[-1]  # after the document, before the successor's session
    assert events[sessions[-1]].payload == {"session_id": r.session_id, "generation": 1}
    assert "error" not in kinds  # a handoff is no failure
