"""Workflow and Step orchestration: attachment, labels, gates, rejects, on_fail, lineage.

These drive ``Workflow.run`` with a stand-in Runtime that records each call: what is
under test is flower's own orchestration (which session a step resumes, how retries
are labelled, what lands in ctx), not anything the CLI does. The same paths run
against the real CLI in ``test_workflow_e2e.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flower.kernel.events import Event
from flower.records.lineage import Lineage
from flower.roles.agent import AgentSpec
from flower.runtime.runner import StepResult
from flower.workflow import Step, StepAbort, Workflow

from .fakes import FakeRuntime, failed

pytestmark = pytest.mark.anyio

SPEC = AgentSpec(name="a", instructions="")


async def test_steps_run_in_order_and_hand_results_on_through_ctx(rt: FakeRuntime) -> None:
    rt.replies = {"一": "first", "二": "second"}
    wf = Workflow([Step("一", SPEC, "go"), Step("二", SPEC, lambda ctx: f"after {ctx['一']}")])
    ctx = await wf.run(rt)
    assert [c.prompt for c in rt.calls] == ["go", "after first"]
    assert ctx["一"] == "first" and ctx["二"] == "second"
    assert ctx["_runtime"] is rt and ctx["_woke"] == 1
    assert set(ctx["_results"]) == {"一", "二"} and ctx["_sessions"] == {"一": "s1", "二": "s2"}


async def test_resume_from_and_fork_attach_to_the_named_steps_session(rt: FakeRuntime) -> None:
    wf = Workflow(
        [
            Step("方案", SPEC, "plan"),
            Step("实现", SPEC, "build", resume_from="方案"),
            Step("复核", SPEC, "review", resume_from="实现", fork=True),
        ],
        continuous=False,
    )
    await wf.run(rt)
    assert [(c.resume, c.fork) for c in rt.calls] == [(None, False), ("s1", False), ("s1", True)]


async def test_resume_from_a_step_without_a_session_is_a_clear_error(rt: FakeRuntime) -> None:
    wf = Workflow(
        [
            Step("方案", SPEC, "plan", when=lambda ctx: False),
            Step("实现", SPEC, "build", resume_from="方案"),
        ],
        continuous=False,
    )
    with pytest.raises(ValueError, match="resumes from '方案', which has no session"):
        await wf.run(rt)


def test_bad_declarations_are_refused_at_once() -> None:
    with pytest.raises(ValueError, match="on_fail must be one of stop, skip, continue"):
        Step("x", SPEC, "p", on_fail="ignore")
    with pytest.raises(ValueError, match="retries must be 0 or more"):
        Step("x", SPEC, "p", retries=-1)
    with pytest.raises(ValueError, match="fork=True needs resume_from"):
        Step("x", SPEC, "p", fork=True)
    with pytest.raises(ValueError, match="needs a name"):
        Step(" ", SPEC, "p")
    with pytest.raises(ValueError, match="repeated: a"):
        Workflow([Step("a", SPEC, "p"), Step("a", SPEC, "q")])


async def test_a_gate_that_says_no_retries_from_scratch_with_retry_labels(rt: FakeRuntime) -> None:
    seen: list[str] = []

    def gate(result: StepResult, ctx: dict[str, Any]) -> bool:
        seen.append(result.step)
        return len(seen) == 3

    step = Step("做", SPEC, "task", retries=2, gate=gate)
    ctx = await Workflow([step], continuous=False).run(rt)
    assert [c.step for c in rt.calls] == ["做", "做#retry1", "做#retry2"]
    assert [(c.prompt, c.resume) for c in rt.calls] == [("task", None)] * 3
    assert seen == ["做", "做#retry1", "做#retry2"]  # the gate runs once per attempt
    assert ctx["做"] == "ok" and "_failed_at" not in ctx


async def test_on_reject_resumes_the_rejected_session_with_its_feedback(rt: FakeRuntime) -> None:
    verdicts = iter([False, False, True])

    async def gate(result: StepResult, ctx: dict[str, Any]) -> bool:
        return next(verdicts)

    rejects = iter(["fix the parser", ""])
    step = Step("干活", SPEC, "task", retries=2, gate=gate, on_reject=lambda r, c: next(rejects))
    await Workflow([step], continuous=False).run(rt)
    labels = [(c.step, c.prompt, c.resume, c.fork) for c in rt.calls]
    assert labels == [
        ("干活", "task", None, False),
        ("干活#round2", "fix the parser", "s1", False),
        ("干活#round3", "task", None, False),  # "" from on_reject: from scratch
    ]
    assert step.prompt == "task" and step.resume_from is None  # the Step is never mutated


async def test_a_failed_attempt_is_not_rejected_but_retried_from_scratch(rt: FakeRuntime) -> None:
    rt.replies = {"干活": failed()}
    calls: list[str] = []

    def on_reject(result: StepResult, ctx: dict[str, Any]) -> str:
        calls.append(result.step)
        return "more"

    step = Step("干活", SPEC, "task", retries=1, gate=lambda r, c: True, on_reject=on_reject)
    ctx = await Workflow([step], continuous=False).run(rt)
    assert calls == []  # on_reject answers a gate's no, not a crash
    assert [(c.step, c.prompt, c.resume) for c in rt.calls] == [
        ("干活", "task", None),
        ("干活#round2", "task", None),
    ]
    assert ctx["干活"] == "ok"


async def test_step_abort_stops_without_spending_retries(rt: FakeRuntime) -> None:
    def gate(result: StepResult, ctx: dict[str, Any]) -> bool:
        raise StepAbort("hopeless")

    wf = Workflow(
        [Step("做", SPEC, "task", retries=5, gate=gate), Step("后", SPEC, "after")],
        continuous=False,
    )
    ctx = await wf.run(rt)
    assert [c.step for c in rt.calls] == ["做"]
    assert ctx["_aborted"] == "hopeless" and ctx["_failed_at"] == "做"
    assert "做" not in ctx and "做" in ctx["_results"]


@pytest.mark.parametrize(
    ("on_fail", "value", "ran_next"),
    [("stop", None, False), ("skip", None, True), ("continue", "boom", True)],
)
async def test_on_fail(rt: FakeRuntime, on_fail: str, value: str | None, ran_next: bool) -> None:
    rt.replies = {"做": failed()}
    wf = Workflow(
        [Step("做", SPEC, "task", on_fail=on_fail), Step("后", SPEC, "after")], continuous=False
    )
    ctx = await wf.run(rt)
    assert ctx.get("做") == value
    assert ("后" in ctx) is ran_next
    assert (ctx.get("_failed_at") == "做") is (on_fail == "stop")
    assert ctx["_results"]["做"].ok is False


async def test_when_skips_and_reduce_shapes_what_is_handed_on(rt: FakeRuntime) -> None:
    events: list[Event] = []
    wf = Workflow(
        [
            Step("跳", SPEC, "x", when=lambda ctx: False),
            Step("算", SPEC, "y", reduce=lambda r, ctx: r.text.upper()),
        ],
        continuous=False,
    )
    ctx = await wf.run(rt, on_event=events.append)
    assert "跳" not in ctx and ctx["算"] == "OK"
    assert [(e.kind, e.step) for e in events] == [("skip", "跳"), ("step", "算")]
    assert events[1].payload == {"index": 2, "total": 2, "resumed": False, "woke": 1}


async def test_on_session_is_set_around_exactly_one_run(rt: FakeRuntime) -> None:
    during_gate: list[Any] = []
    outer = rt.on_session = lambda sid: None

    def gate(result: StepResult, ctx: dict[str, Any]) -> bool:
        during_gate.append(rt.on_session)
        return True

    await Workflow([Step("做", SPEC, "task", gate=gate)]).run(rt)
    assert rt.calls[0].on_session is not outer and rt.calls[0].on_session is not None
    assert during_gate == [outer] and rt.on_session is outer


async def test_continuous_resumes_each_steps_lineage_session(rt: FakeRuntime) -> None:
    steps = [Step("取词", SPEC, "read seed.txt", resume_prompt="continue")]
    first = await Workflow(steps).run(rt)
    sid = first["_sessions"]["取词"]
    events: list[Event] = []
    second = await Workflow(steps).run(rt, on_event=events.append)
    assert second["_woke"] == 2 and second["_sessions"]["取词"] == sid
    assert (rt.calls[1].resume, rt.calls[1].prompt) == (sid, "continue")
    assert [e.kind for e in events] == ["wake", "step"]
    assert events[0].payload == {"woke": 2, "steps": {"取词": sid}, "notice": ""}
    assert events[1].payload == {"index": 1, "total": 1, "resumed": True, "woke": 2}
    on_disk = Lineage.open(rt.run_dir, rt.workspace)
    assert on_disk.steps == {"取词": sid} and on_disk.woke == 2


async def test_a_session_gone_from_the_store_means_a_fresh_start(rt: FakeRuntime) -> None:
    steps = [Step("取词", SPEC, "read")]
    await Workflow(steps).run(rt)
    rt.alive = set()  # sessions.db lost
    events: list[Event] = []
    await Workflow(steps).run(rt, on_event=events.append)
    assert rt.calls[1].resume is None and rt.calls[1].prompt == "read"
    assert events[0].kind == "wake" and events[0].payload["notice"]  # said, not silent


async def test_continuous_false_keeps_no_lineage(rt: FakeRuntime) -> None:
    steps = [Step("取词", SPEC, "read")]
    await Workflow(steps, continuous=False).run(rt)
    ctx = await Workflow(steps, continuous=False).run(rt)
    assert rt.calls[1].resume is None and ctx["_woke"] == 1 and "_lineage" not in ctx
    assert not (rt.run_dir / "lineage.json").exists()


async def test_lineage_keeps_the_plain_step_name_not_retry_labels(rt: FakeRuntime) -> None:
    step = Step("干活", SPEC, "task", retries=1, gate=lambda r, c: r.step != "干活")
    ctx = await Workflow([step]).run(rt)
    lineage = Lineage.open(rt.run_dir, rt.workspace)
    assert lineage.steps == {"干活": ctx["_sessions"]["干活"]} == {"干活": "s2"}


async def test_the_workflows_workbench_is_used_while_it_runs(
    rt: FakeRuntime, tmp_path: Path
) -> None:
    from flower.records.workbench import Workbench

    wb = Workbench(rt.workspace)
    seen: list[Any] = []
    step = Step("做", SPEC, "task", gate=lambda r, c: seen.append(rt.workbench) or True)
    await Workflow([step], workbench=wb, continuous=False).run(rt)
    assert seen == [wb] and rt.workbench is None and wb.notes.is_dir()


async def test_the_channel_gets_the_event_stream_when_it_has_none(rt: FakeRuntime) -> None:
    class Channel:
        on_event: Any = None

    mine, theirs = Channel(), Channel()
    theirs.on_event = print
    events: list[Event] = []
    seen: list[Any] = []
    step = Step("a", SPEC, "p", gate=lambda r, c: seen.append(mine.on_event) or True)
    await Workflow([step], channel=mine, continuous=False).run(rt, on_event=events.append)
    await Workflow([Step("a", SPEC, "p")], channel=theirs, continuous=False).run(
        rt, on_event=events.append
    )
    assert seen == [events.append] and theirs.on_event is print
    assert mine.on_event is None  # lent for the run: a later run's events go to its own


async def test_a_step_skipped_on_a_wake_still_lends_its_session(rt: FakeRuntime) -> None:
    runs = iter([True, False])
    steps = [
        Step("方案", SPEC, "plan", when=lambda ctx: next(runs)),
        Step("实现", SPEC, "build", resume_from="方案", resume_prompt="go on"),
    ]
    first = await Workflow(steps).run(rt)
    second = await Workflow(steps).run(rt)  # 方案 is skipped: its session comes from the lineage
    assert second["_sessions"] == first["_sessions"] == {"方案": "s1", "实现": "s1"}
    assert (rt.calls[-1].step, rt.calls[-1].resume, rt.calls[-1].prompt) == ("实现", "s1", "go on")


async def test_running_the_same_workflow_again_reports_this_run(rt: FakeRuntime) -> None:
    from flower import HumanChannel

    channel = HumanChannel(timeout_s=0)

    async def gate(result: StepResult, ctx: dict[str, Any]) -> bool:
        await channel.ask("还要吗?")
        if result.text == "hopeless":
            raise StepAbort("hopeless")
        return True

    rt.replies = {"做": "hopeless"}
    wf = Workflow([Step("做", SPEC, "task", gate=gate)], channel=channel, continuous=False)
    first: list[Event] = []
    ctx = await wf.run(rt, on_event=first.append)
    assert ctx["_failed_at"] == "做" and ctx["_aborted"] == "hopeless"
    rt.replies = {}
    second: list[Event] = []
    ctx = await wf.run(rt, on_event=second.append)
    assert "_failed_at" not in ctx and "_aborted" not in ctx and ctx["做"] == "ok"
    asks = [e.payload["id"] for e in second if e.kind == "ask"]  # this run's question
    assert asks and asks[-1] == "q2" and all(e.payload.get("id") != "q2" for e in first)


async def test_a_renamed_step_starting_fresh_is_said_not_silent(rt: FakeRuntime) -> None:
    await Workflow([Step("取词", SPEC, "read"), Step("答", SPEC, "say")]).run(rt)
    events: list[Event] = []
    renamed = Workflow([Step("取字", SPEC, "read"), Step("答", SPEC, "say")])
    await renamed.run(rt, on_event=events.append)
    assert rt.calls[2].resume is None  # no way to know 取字 was 取词: a new session
    notice = events[0].payload["notice"]
    assert events[0].kind == "wake" and "'取词'" in notice
    events.clear()  # every step of this workflow has its session now: nothing to say
    await renamed.run(rt, on_event=events.append)
    assert events[0].payload["notice"] == ""
