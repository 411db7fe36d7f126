"""normalize(): the SDK's messages as flower's event kinds, from a real CLI run."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import normalize
from flower.kernel.events import RESULT_PREVIEW, Event
from flower.roles.agent import AgentSpec
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, Turn, bash, conversation, text

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def test_a_run_reports_every_kind_a_watcher_tells_apart(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [
            conversation(
                "main",
                Turn(
                    thinking="let me look",
                    tools=bash("seq 1 2000").tools,
                    usage={"input_tokens": 4321},
                ),
                bash("cat missing.txt"),
                text("done"),
            )
        ]
    )
    spec = AgentSpec(name="w", instructions="", allowed_tools=["Bash"])
    events: list[Event] = []
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        result = await rt.run(spec, "count", on_event=events.append)
    assert result.ok
    kinds = [e.kind for e in events]
    assert kinds[0] == "prompt" and events[0].payload == {
        "text": "count",
        "resume": None,
        "fork": False,
    }
    assert "system" in kinds and kinds[-1] == "result"
    assert kinds.index("thinking") < kinds.index("tool") < kinds.index("tool_result")
    thinking = next(e for e in events if e.kind == "thinking")
    assert thinking.payload == {"text": "let me look", "subagent": False, "context": 4321}
    ok, failed = [e.payload for e in events if e.kind == "tool_result"]
    assert not ok["error"] and ok["text"].startswith("1 2 3") and len(ok["text"]) == RESULT_PREVIEW
    assert failed["error"] and "missing.txt" in failed["text"]
    assert {e.step for e in events} == {"w"}


def test_blank_text_is_no_event_and_thinking_is_its_own_kind() -> None:
    from claude_agent_sdk import AssistantMessage, TextBlock, ThinkingBlock

    message = AssistantMessage(
        content=[TextBlock("  \n"), ThinkingBlock("weighing it", signature=""), TextBlock("ok")],
        model="m",
    )
    assert [(e.kind, e.payload["text"]) for e in normalize(message)] == [
        ("thinking", "weighing it"),
        ("text", "ok"),
    ]


def test_the_callers_observer_hears_an_event_before_the_plugins_do() -> None:
    """The terminal is the caller's observer: a slow plugin must not delay what it shows."""
    from flower.hookspecs import hookimpl
    from flower.plugins import emit, get_plugin_manager

    heard: list[str] = []

    class Late:
        @hookimpl
        def flower_event(self, event: Event) -> None:
            heard.append("plugin")

    manager = get_plugin_manager()
    plugin = Late()
    manager.register(plugin, name="late-observer")
    try:
        emit(Event("text", {"text": "x"}), lambda e: heard.append("caller"))
    finally:
        manager.unregister(plugin)
    assert heard == ["caller", "plugin"]


def test_a_message_of_an_unknown_type_is_reported_not_dropped() -> None:
    class Novel:
        pass

    (event,) = normalize(Novel(), step="s")
    assert (event.kind, event.step) == ("unknown", "s")
    assert event.payload == {"type": "Novel", "subagent": False, "context": None}
