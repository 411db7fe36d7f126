"""with_goal and goal_step without the CLI: every branch of the judge's ruling.

The judge's replies come from the stand-in Runtime by label (``干活·判定#1``); the
human is a real HumanChannel answered by a UI thread. The same guard runs against the
real CLI in test_starter_e2e.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flower import HumanChannel
from flower.kernel.events import Event
from flower.roles.agent import AgentSpec
from flower.runtime.runner import StepResult
from flower.workflow import (
    GOAL_KEY,
    ROUND_KEY,
    VERDICT_KEY,
    Step,
    StepAbort,
    Workflow,
    goal_step,
    with_goal,
)
from flower.workflow.goal import ACCEPT, CHANGE, MISJUDGED, VAGUE_REASON
from flower.workflow.verdicts import Goal

from .fakes import Answerer, FakeRuntime, Rulings, failed

pytestmark = pytest.mark.anyio

SPEC = AgentSpec(name="coord", instructions="")
GOAL = "## 目标\n写好 hello.txt\n## 判定清单\n- cat hello.txt 输出 hi"
NOT_YET = "## 结论\n未达成\n## 理由\n缺证据\n## 未通过\n- cat hello.txt 输出 hi"
ACHIEVED = "## 结论\n已达成"
UNREACHABLE = "## 结论\n无法达成\n## 理由\n要 macOS"


@pytest.fixture
def goal_path(rt: FakeRuntime) -> Path:
    path = rt.workspace / "目标.md"
    Goal.parse(GOAL).write(path)
    return path


def guarded(channel: Any, goal_path: Path, rounds: int = 3, **kw: Any) -> Step:
    work = Step("干活", SPEC, "do it", resume_prompt="continue", **kw)
    return with_goal(work, channel, goal_path=goal_path, rounds=rounds)


async def run(rt: FakeRuntime, step: Step, **kw: Any) -> dict[str, Any]:
    return await Workflow([step], continuous=False).run(rt, **kw)


async def test_not_yet_sends_the_same_session_back_then_achieved_passes(
    rt: FakeRuntime, goal_path: Path
) -> None:
    rt.replies = {"干活·判定#1": NOT_YET, "干活·判定#2": ACHIEVED}
    events: list[Event] = []
    ctx = await run(rt, guarded(HumanChannel(timeout_s=0), goal_path), on_event=events.append)
    labels = [(c.step, c.resume) for c in rt.calls]
    assert labels == [
        ("干活", None),
        ("干活·判定#1", None),
        ("干活#round2", "s1"),
        ("干活·判定#2", None),
    ]
    feedback = rt.calls[2].prompt
    assert "缺证据" in feedback and "cat hello.txt 输出 hi" in feedback
    judged = rt.calls[1].prompt
    assert "写好 hello.txt" in judged and "ok" in judged  # the goal and the worker's report
    assert ctx[VERDICT_KEY].achieved and ctx[ROUND_KEY] == 2 and ctx["干活"] == "ok"
    assert [e.payload["state"] for e in events if e.kind == "verdict"] == ["not_yet", "achieved"]


async def test_a_vague_ruling_never_closes_the_work(rt: FakeRuntime, goal_path: Path) -> None:
    rt.replies = {"干活·判定#1": "看起来应该可以了", "干活·判定#2": "嗯"}
    ctx = await run(rt, guarded(HumanChannel(timeout_s=0), goal_path, rounds=2))
    assert ctx["_failed_at"] == "干活" and ctx[VERDICT_KEY].reason.startswith(VAGUE_REASON)
    assert VAGUE_REASON in rt.calls[2].prompt and "看起来应该可以了" in rt.calls[2].prompt


async def test_a_judge_that_cannot_finish_counts_as_not_yet(
    rt: FakeRuntime, goal_path: Path
) -> None:
    rt.replies = {"干活·判定#1": failed("HTTP 529"), "干活·判定#2": ACHIEVED}
    ctx = await run(rt, guarded(HumanChannel(timeout_s=0), goal_path))
    assert "HTTP 529" in rt.calls[2].prompt and ctx[VERDICT_KEY].achieved


async def test_rounds_is_the_total_number_of_work_rounds(rt: FakeRuntime, goal_path: Path) -> None:
    rt.replies = {f"干活·判定#{n}": NOT_YET for n in range(1, 5)}
    ctx = await run(rt, guarded(HumanChannel(timeout_s=0), goal_path, rounds=2))
    work = [c.step for c in rt.calls if "判定" not in c.step]
    assert work == ["干活", "干活#round2"] and ctx["_failed_at"] == "干活"
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="1 or more"):
            with_goal(Step("x", SPEC, "p"), None, goal_path=goal_path, rounds=bad)  # type: ignore[arg-type]


async def test_with_goal_keeps_the_rest_of_the_step(goal_path: Path) -> None:
    step = Step("干活", SPEC, "p", resume_prompt="continue", on_fail="continue")
    wrapped = with_goal(step, None, goal_path=goal_path, rounds=4)
    assert (wrapped.resume_prompt, wrapped.on_fail, wrapped.retries) == ("continue", "continue", 3)
    assert wrapped.gate is not None and wrapped.on_reject is not None and step.gate is None


@pytest.mark.parametrize("reply", [ACCEPT, "1", ACCEPT.upper(), "accept", "Accept this"])
async def test_unreachable_accepted_by_the_human_passes(
    rt: FakeRuntime, goal_path: Path, reply: str
) -> None:
    rt.replies = {"干活·判定#1": UNREACHABLE}
    channel = HumanChannel(timeout_s=10)
    with Answerer(channel, {"unreachable": reply}) as ui:
        ctx = await run(rt, guarded(channel, goal_path))
    assert "_failed_at" not in ctx and ui.answered and ctx[VERDICT_KEY].unreachable
    (ask,) = channel.asks
    assert ask.options == [ACCEPT, CHANGE, MISJUDGED] and "要 macOS" in ask.question


async def test_unreachable_with_a_changed_goal_amends_the_file_and_goes_on(
    rt: FakeRuntime, goal_path: Path
) -> None:
    rt.replies = {"干活·判定#1": UNREACHABLE, "干活·判定#2": ACHIEVED}
    channel = HumanChannel(timeout_s=10)
    with Answerer(channel, {"unreachable": "2", "new goal": "只要在 Linux 上能跑"}):
        ctx = await run(rt, guarded(channel, goal_path))
    assert "_failed_at" not in ctx
    amended = Goal.load(goal_path)
    assert amended is not None and "只要在 Linux 上能跑" in amended.statement
    assert "写好 hello.txt" in amended.statement and amended.checks == ["cat hello.txt 输出 hi"]
    assert ctx[GOAL_KEY] == amended
    assert "只要在 Linux 上能跑" in rt.calls[2].prompt  # round 2 is told the new goal
    assert "只要在 Linux 上能跑" in rt.calls[3].prompt  # and the judge judges by it


async def test_a_changed_goal_is_also_in_the_brief_so_setting_the_goal_again_keeps_it(
    rt: FakeRuntime, goal_path: Path
) -> None:
    # A wake with a remark sets the goal again from the brief (goal_step, always_set):
    # a change that lived only in 目标.md would be overwritten by it.
    from flower.workflow.brief import Brief

    brief = rt.workspace / "需求.md"
    Brief(goal="A", accept="B", bounds="C", unknowns="D").write(brief)
    rt.replies = {"干活·判定#1": UNREACHABLE, "干活·判定#2": ACHIEVED}
    channel = HumanChannel(timeout_s=10, amend_path=brief)
    with Answerer(channel, {"unreachable": "2", "new goal": "只要在 Linux 上能跑"}):
        await run(rt, guarded(channel, goal_path))
    again = Brief.load(brief)
    assert again is not None and again.complete() and "只要在 Linux 上能跑" in again.unknowns
    rt.calls.clear()
    reset = goal_step(channel, goal_path=goal_path, always_set=True)
    await Workflow([reset], continuous=False, context={"确认需求": again.prompt_block()}).run(rt)
    assert "只要在 Linux 上能跑" in rt.calls[0].prompt


async def test_a_changed_goal_on_the_last_round_is_kept_for_the_next_run(
    rt: FakeRuntime, goal_path: Path
) -> None:
    rt.replies = {"干活·判定#1": UNREACHABLE}
    channel = HumanChannel(timeout_s=10)
    with Answerer(channel, {"unreachable": "2", "new goal": "只要在 Linux 上能跑"}):
        ctx = await run(rt, guarded(channel, goal_path, rounds=1))
    assert ctx["_failed_at"] == "干活" and "_aborted" not in ctx  # no round left
    assert [c.step for c in rt.calls] == ["干活", "干活·判定#1"]
    amended = Goal.load(goal_path)
    assert amended is not None and "只要在 Linux 上能跑" in amended.statement


def test_an_options_first_words_pick_it_but_free_words_do_not() -> None:
    # "accept" read as free words would mean "the judge is wrong: keep working", the
    # opposite, and a paid round; "change" would never ask for the new goal.
    from flower.workflow.checking import choice_of as _choice

    options = [ACCEPT, CHANGE, MISJUDGED]
    assert [_choice(a, options) for a in ("accept", "Change", "change the", "3")] == [
        ACCEPT,
        CHANGE,
        CHANGE,
        MISJUDGED,
    ]
    assert [_choice(a, options) for a in ("ac", "change nothing", "装了 Xcode 就行", "")] == [
        None
    ] * 4


async def test_unreachable_the_human_says_the_judge_is_wrong(
    rt: FakeRuntime, goal_path: Path
) -> None:
    rt.replies = {"干活·判定#1": UNREACHABLE, "干活·判定#2": ACHIEVED}
    channel = HumanChannel(timeout_s=10)
    with Answerer(channel, {"unreachable": "装了 Xcode 的 CI 上能验"}):
        await run(rt, guarded(channel, goal_path))
    assert "装了 Xcode 的 CI 上能验" in rt.calls[2].prompt and rt.calls[2].resume == "s1"


@pytest.mark.parametrize(
    ("answers", "why"),
    [({}, "nobody answered"), ({"unreachable": CHANGE}, "no new goal came")],
)
async def test_unreachable_with_nobody_to_decide_aborts(
    rt: FakeRuntime, goal_path: Path, answers: dict[str, str], why: str
) -> None:
    rt.replies = {"干活·判定#1": UNREACHABLE}
    channel = HumanChannel(timeout_s=0.3)
    with Answerer(channel, answers):
        ctx = await run(rt, guarded(channel, goal_path))
    assert why in ctx["_aborted"] and ctx["_failed_at"] == "干活"
    assert [c.step for c in rt.calls] == ["干活", "干活·判定#1"]  # no round spent after it


@pytest.mark.parametrize(
    ("max_asks", "answers", "why"),
    [
        (0, {}, "max_asks"),
        (None, {"unreachable": ""}, "skipped"),  # an empty answer declines
        (1, {"unreachable": CHANGE}, "max_asks"),  # the new goal is the second question
    ],
)
async def test_the_abort_says_why_no_decision_came(
    rt: FakeRuntime, goal_path: Path, max_asks: int | None, answers: dict[str, str], why: str
) -> None:
    # The human may be right there: "nobody answered" would send them looking for a
    # broken terminal when the run's question budget was spent or they skipped it.
    rt.replies = {"干活·判定#1": UNREACHABLE}
    channel = HumanChannel(timeout_s=10, max_asks=max_asks)
    with Answerer(channel, answers):
        ctx = await run(rt, guarded(channel, goal_path))
    assert why in ctx["_aborted"] and "nobody answered" not in ctx["_aborted"]


async def test_the_gate_without_a_runtime_aborts_instead_of_passing(goal_path: Path) -> None:
    step = with_goal(Step("干活", SPEC, "p"), None, goal_path=goal_path)
    assert step.gate is not None
    with pytest.raises(StepAbort, match="no Runtime"):
        await step.gate(StepResult(step="干活", ok=True), {})  # type: ignore[misc]


async def test_goal_step_freezes_the_goal_and_flags_unverifiable_checks(rt: FakeRuntime) -> None:
    path = rt.workspace / "notes" / "目标.md"
    text = "## 目标\nmac 应用\n## 判定清单\n- 能编译\n- 在 macOS 上启动 [此环境无法验证:没有 macOS]"
    rt.replies = {"设定目标": text}
    events: list[Event] = []
    step = goal_step(HumanChannel(timeout_s=0), goal_path=path)
    ctx = await Workflow([step], continuous=False, context={"确认需求": "## 目标\nX"}).run(
        rt, on_event=events.append
    )
    assert "## 目标\nX" in rt.calls[0].prompt
    frozen = Goal.load(path)
    assert frozen is not None and frozen.checks[0] == "能编译" and ctx[GOAL_KEY] == frozen
    (task,) = [e for e in events if e.kind == "task"]
    assert task.payload == {"unverifiable": [frozen.checks[1]], "total": 2, "path": str(path)}
    assert ctx["设定目标"] == frozen.prompt_block()
    rt.calls.clear()  # a complete goal on disk skips the step, and still fills ctx
    again = await Workflow([step], continuous=False).run(rt)
    assert rt.calls == [] and again[GOAL_KEY] == frozen
    forced = goal_step(HumanChannel(timeout_s=0), goal_path=path, always_set=True)
    await Workflow([forced], continuous=False).run(rt)
    assert [c.step for c in rt.calls] == ["设定目标"]


async def test_goal_step_refuses_an_answer_without_checks(rt: FakeRuntime) -> None:
    path = rt.workspace / "目标.md"
    rt.replies = {"设定目标": "## 目标\n只有一句话"}
    ctx = await Workflow([goal_step(None, goal_path=path)], continuous=False).run(rt)
    assert ctx["_failed_at"] == "设定目标" and not path.exists()


async def test_every_ruling_is_a_ledger_row_with_its_cost_and_session(
    rt: FakeRuntime, goal_path: Path
) -> None:
    rt.store = Rulings()
    rt.replies = {
        "干活·判定#1": StepResult(step="", ok=True, text=NOT_YET, cost_usd=0.25),
        "干活·判定#2": ACHIEVED,
    }
    events: list[Event] = []
    await run(rt, guarded(HumanChannel(), goal_path), on_event=events.append)
    assert rt.store.of("verdict") == [(1, "not_yet", ""), (2, "achieved", "")]
    first, second = rt.store.rows
    assert first["failed"] == ["cat hello.txt 输出 hi"] and first["reason"] == "缺证据"
    assert first["cost_usd"] == 0.25 and second["cost_usd"] == 0.0
    assert [r["session_id"] for r in rt.store.rows] == ["s2", "s3"]  # work is s1 both rounds
    assert first["step"] == "干活" and first["run_id"] and first["host"] and first["at"] > 0
    assert [e.payload["cost_usd"] for e in events if e.kind == "verdict"] == [0.25, 0.0]
    assert not rt.store.of("override")


@pytest.mark.parametrize(
    ("answers", "override"),
    [
        ({"unreachable": ACCEPT}, (1, "accept", "")),
        (
            {"unreachable": "2", "new goal": "只要在 Linux 上能跑"},
            (1, "change_goal", "只要在 Linux 上能跑"),
        ),
        ({"unreachable": MISJUDGED}, (1, "misjudged", "")),
        ({"unreachable": "装了 Xcode 的 CI 上能验"}, (1, "misjudged", "装了 Xcode 的 CI 上能验")),
    ],
)
async def test_a_human_overruling_the_judge_is_a_ledger_row_and_an_event(
    rt: FakeRuntime, goal_path: Path, answers: dict[str, str], override: tuple[Any, ...]
) -> None:
    rt.store = Rulings()
    rt.replies = {"干活·判定#1": UNREACHABLE, "干活·判定#2": ACHIEVED}
    channel = HumanChannel(timeout_s=10)
    events: list[Event] = []
    with Answerer(channel, answers):
        await run(rt, guarded(channel, goal_path), on_event=events.append)
    assert rt.store.of("override") == [override]
    (event,) = [e for e in events if e.kind == "override"]
    assert (event.payload["round"], event.payload["choice"], event.payload["said"]) == override
    assert event.step == "干活"


async def test_nobody_deciding_is_no_override(rt: FakeRuntime, goal_path: Path) -> None:
    rt.store = Rulings()
    rt.replies = {"干活·判定#1": UNREACHABLE}
    ctx = await run(rt, guarded(HumanChannel(timeout_s=0), goal_path))
    assert "_aborted" in ctx
    assert rt.store.of("verdict") == [(1, "unreachable", "")] and not rt.store.of("override")


async def test_a_plugin_observes_verdicts_and_overrides_through_the_event_hook(
    rt: FakeRuntime, goal_path: Path
) -> None:
    from flower import hookimpl
    from flower.plugins import get_plugin_manager

    seen: list[tuple[str, Any]] = []

    class Observer:
        @hookimpl
        def flower_event(self, event: Event) -> None:
            if event.kind in ("verdict", "override"):
                seen.append((event.kind, event.payload.get("state") or event.payload["choice"]))

    rt.replies = {"干活·判定#1": UNREACHABLE, "干活·判定#2": ACHIEVED}
    channel = HumanChannel(timeout_s=10)
    pm = get_plugin_manager()
    pm.register(Observer(), name="test-observer")
    try:
        with Answerer(channel, {"unreachable": MISJUDGED}):
            await run(rt, guarded(channel, goal_path))  # no on_event: the hook alone hears
    finally:
        pm.unregister(name="test-observer")
    assert seen == [("verdict", "unreachable"), ("override", "misjudged"), ("verdict", "achieved")]
