"""Plugins that change a run, end to end: an event observer, a handoff writer (working,
then broken) and an error classifier, each registered with the plugin manager while a
real ``Runtime.run`` drives the bundled CLI against the scripted model."""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flower import hookimpl
from flower.kernel.events import Event
from flower.plugin_types import ErrorClass, HandoffRequest
from flower.plugins import get_plugin_manager
from flower.records.handoff import Handoff
from flower.roles.agent import AgentSpec
from flower.runtime.resilience import RESUME_PROMPT, Resilience
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, Turn, bash, conversation, text

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "build the thing"
SMALL = {"input_tokens": 500}


def runtime(workspace: Path, tmp_path: Path) -> Runtime:
    quick = Resilience(base_delay=0.05, max_delay=0.2, probe_interval=0.1, probe_timeout=0.5)
    return Runtime(workspace=workspace, run_dir=tmp_path / "runs", resilience=quick)


def spec() -> AgentSpec:
    return AgentSpec(name="worker", instructions="Be terse.", allowed_tools=["Bash"])


@pytest.fixture
def plugged() -> Iterator[list[object]]:
    """Register plugins for one test (append to the list); all are unregistered after."""
    plugins: list[object] = []
    pm = get_plugin_manager()
    try:
        yield plugins
    finally:
        for plugin in plugins:
            if pm.is_registered(plugin):
                pm.unregister(plugin)


def register(plugged: list[object], plugin: object) -> None:
    get_plugin_manager().register(plugin, name=f"test-{type(plugin).__name__}")
    plugged.append(plugin)


class Observer:
    """Records every event, then fails on each tool call."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    @hookimpl
    def flower_event(self, event: Event) -> None:
        self.events.append(event)
        if event.kind == "tool":
            raise RuntimeError("the metrics backend is down")


async def test_a_plugin_observer_sees_the_run_and_its_failure_never_reaches_it(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    plugged: list[object],
    capfd: pytest.CaptureFixture[str],
) -> None:
    scripted_model.play(
        [conversation("main", bash("echo hi", usage=SMALL), text("done", usage=SMALL))]
    )
    observer = Observer()
    register(plugged, observer)
    with runtime(workspace, tmp_path) as rt:
        r = await rt.run(spec(), TASK)  # no on_event: the plugin is the only observer

    assert r.ok and r.text == "done" and r.attempts == 1 and r.errors == [], r.errors
    kinds = [e.kind for e in observer.events]
    assert {"prompt", "session", "tool", "tool_result", "text", "result"} <= set(kinds)
    assert kinds[-1] == "result" and observer.events[-1].payload["ok"] is True
    assert [e.payload["name"] for e in observer.events if e.kind == "tool"] == ["Bash"]
    assert "an event observer failed on 'tool'" in capfd.readouterr().err
    assert [q.turn for q in scripted_model.requests_for("main")] == [0, 1]


class Writer:
    """Writes the first handoff itself; breaks on the second."""

    DOC = Handoff(doing="PLUGIN-DOING: the parser is done", next="PLUGIN-NEXT: the renderer")

    def __init__(self) -> None:
        self.requests: list[HandoffRequest] = []

    @hookimpl
    def flower_handoff_writer(self, request: HandoffRequest) -> Awaitable[Handoff]:
        self.requests.append(request)
        first = len(self.requests) == 1

        async def write() -> Handoff:
            if not first:
                raise RuntimeError("the writer broke")
            return Handoff(doing=self.DOC.doing, next=self.DOC.next)

        return write()


async def test_a_plugin_handoff_writer_is_what_the_successor_gets_and_a_broken_one_degrades(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    plugged: list[object],
) -> None:
    # Every generation but the last overflows at once: two handoffs, one per writer mood.
    overflow = Turn(text="x", fail_always="overflow")
    scripted_model.play(
        [
            conversation("third", text("finished", usage=SMALL), first_user="the writer broke"),
            conversation("second", overflow, first_user="PLUGIN-DOING"),
            conversation("main", overflow, first_user=TASK),
        ]
    )
    writer = Writer()
    register(plugged, writer)
    done: list[dict[str, Any]] = []

    def on_event(event: Event) -> None:
        if event.kind == "handoff" and event.payload["phase"] == "done":
            done.append(event.payload)

    with runtime(workspace, tmp_path) as rt:
        r = await rt.run(spec(), TASK, step_name="干活", on_event=on_event)

    assert r.ok and r.text == "finished", r.errors
    assert len(r.retired) == 2 and r.session_id not in r.retired
    assert [q.session_id for q in writer.requests] == r.retired
    assert all(q.overflow and q.step == "干活" and q.prompt == TASK for q in writer.requests)
    assert [p["degraded"] for p in done] == [False, True]

    (second,) = scripted_model.requests_for("second")  # the plugin's document, as written
    assert Handoff(doing=Writer.DOC.doing, next=Writer.DOC.next, step="干活").prompt_block() in (
        second.text()
    )
    (third,) = scripted_model.requests_for("third")  # the broken writer's fallback
    assert "RuntimeError: the writer broke" in third.text() and TASK in third.text()
    assert "PLUGIN" not in third.text()


class Classifier:
    """A gateway with its own ideas: a 401 is a token refresh (wait), a 500 is final."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def flower_classify_error(self, text: str) -> ErrorClass | None:
        self.seen.append(text)
        if "HTTP 401" in text:
            return "transient"
        if "HTTP 500" in text:
            return "fatal"
        return None


async def test_a_plugin_classifier_decides_what_is_retried(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    plugged: list[object],
) -> None:
    # By default a 401 stops at once and a 500 is retried; the plugin says the opposite.
    scripted_model.play([conversation("main", Turn(text="recovered", faults=(401, 500)))])
    classifier = Classifier()
    register(plugged, classifier)
    retries: list[dict[str, Any]] = []

    def on_event(event: Event) -> None:
        if event.kind == "retry":
            retries.append(event.payload)

    with runtime(workspace, tmp_path) as rt:
        r = await rt.run(spec(), TASK, on_event=on_event)

    assert not r.ok and r.attempts == 2 and r.resumed, r.errors
    assert [p["class"] for p in retries] == ["transient"] and "401" in retries[0]["error"]
    assert r.error is not None and "500" in r.error
    assert len(classifier.seen) == 2
    assert [q.outcome for q in scripted_model.requests_for("main")] == ["401", "500"]
    assert RESUME_PROMPT in scripted_model.requests_for("main")[1].text()
