"""Seed items about how a step attaches to a session, each with a test of its own.

- A rejected attempt whose result has no session (``result.session_id is None``) starts
  from scratch: the step's own prompt and declared attachment, ``on_reject`` not asked.
- ``goal_step`` has no ``resume_prompt`` (setting a goal again needs the whole brief), and
  ``with_goal`` adds none to the step it guards (a rejected round continues with the
  judge's feedback, a woken step with its own prompt); one the step had is kept.

Orchestration only (which session, which prompt), so the stand-in Runtime of
``fakes.py`` records the calls; the same paths run against the real CLI elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flower.roles.agent import AgentSpec
from flower.runtime.runner import StepResult
from flower.workflow import Step, Workflow, goal_step, with_goal
from flower.workflow.verdicts import Goal

from .fakes import FakeRuntime

pytestmark = pytest.mark.anyio

SPEC = AgentSpec(name="a", instructions="")
BRIEF = "## 目标\n写好 hello.txt(整份需求的记号 B-7731)"
GOAL = "## 目标\n写好 hello.txt\n## 判定清单\n- cat hello.txt 输出 hi"
NOT_YET = "## 结论\n未达成\n## 理由\n缺证据"


@dataclass
class SessionlessRuntime(FakeRuntime):
    """The stand-in Runtime, except that the labels in ``sessionless`` come back without a
    session id (the CLI failed before its init message, say)."""

    sessionless: frozenset[str] = frozenset()

    async def run(self, spec: AgentSpec, prompt: str, **kw: Any) -> StepResult:
        result = await super().run(spec, prompt, **kw)
        if result.step in self.sessionless:
            result.session_id = None
        return result


@pytest.fixture
def bare(tmp_path: Path) -> SessionlessRuntime:
    ws = tmp_path / "ws"
    ws.mkdir()
    return SessionlessRuntime(workspace=ws, run_dir=tmp_path / "runs")


async def test_a_rejected_attempt_without_a_session_starts_from_scratch(
    bare: SessionlessRuntime,
) -> None:
    bare.sessionless = frozenset({"实现"})
    verdicts = iter([False, True])
    asked: list[str] = []

    def on_reject(result: StepResult, ctx: dict[str, Any]) -> str:
        asked.append(result.step)
        return "fix the parser"

    plan = Step("方案", SPEC, "plan")
    work = Step(
        "实现", SPEC, "build", resume_from="方案", retries=1,
        gate=lambda r, c: next(verdicts), on_reject=on_reject,
    )  # fmt: skip
    await Workflow([plan, work], continuous=False).run(bare)
    calls = [(c.step, c.prompt, c.resume, c.fork) for c in bare.calls]
    assert calls == [
        ("方案", "plan", None, False),
        ("实现", "build", "s1", False),
        # no session to send back: the same prompt and the same resume_from, as a first run
        ("实现#round2", "build", "s1", False),
    ]
    assert asked == []  # there is nothing to continue, so no feedback is asked for


async def test_the_same_rejection_with_a_session_continues_it(bare: SessionlessRuntime) -> None:
    """The contrast: with a session id the rejected session itself is sent the feedback."""
    verdicts = iter([False, True])
    work = Step(
        "实现", SPEC, "build", retries=1,
        gate=lambda r, c: next(verdicts), on_reject=lambda r, c: "fix the parser",
    )  # fmt: skip
    await Workflow([work], continuous=False).run(bare)
    assert [(c.prompt, c.resume) for c in bare.calls] == [
        ("build", None),
        ("fix the parser", "s1"),
    ]


def test_goal_step_has_no_resume_prompt(tmp_path: Path) -> None:
    assert goal_step(None, goal_path=tmp_path / "目标.md").resume_prompt is None


async def test_a_woken_goal_step_is_sent_the_whole_brief_again(rt: FakeRuntime) -> None:
    rt.replies = {"确认需求": BRIEF, "设定目标": GOAL}
    path = rt.workspace / "目标.md"

    def flow() -> Workflow:
        clarify = Step("确认需求", SPEC, "clarify")
        return Workflow([clarify, goal_step(None, goal_path=path, always_set=True)])

    await flow().run(rt)
    first = [c for c in rt.calls if c.step == "设定目标"]
    await flow().run(rt)  # a wake: the lineage resumes each step's own session
    woken = [c for c in rt.calls if c.step == "设定目标"][len(first) :]
    assert [c.resume for c in first] == [None] and [c.resume for c in woken] == ["s2"]
    assert woken[0].prompt == first[0].prompt and "B-7731" in woken[0].prompt


def test_with_goal_adds_no_resume_prompt_and_keeps_one_the_step_had(tmp_path: Path) -> None:
    path = tmp_path / "目标.md"
    Goal.parse(GOAL).write(path)
    assert with_goal(Step("干活", SPEC, "do it"), None, goal_path=path).resume_prompt is None
    kept = with_goal(Step("干活", SPEC, "do it", resume_prompt="go on"), None, goal_path=path)
    assert kept.resume_prompt == "go on"


async def test_a_guarded_step_without_resume_prompt_continues_with_the_verdict_only(
    rt: FakeRuntime,
) -> None:
    path = rt.workspace / "目标.md"
    Goal.parse(GOAL).write(path)
    rt.replies = {"干活·判定#1": NOT_YET, "干活·判定#2": "## 结论\n已达成"}
    step = with_goal(Step("干活", SPEC, "do it"), None, goal_path=path, rounds=2)
    await Workflow([step], continuous=False).run(rt)
    work = [c for c in rt.calls if c.step.startswith("干活") and "判定" not in c.step]
    assert [c.step for c in work] == ["干活", "干活#round2"]
    assert (work[0].resume, work[1].resume) == (None, "s1")  # the rejected session itself
    assert "缺证据" in work[1].prompt and "do it" not in work[1].prompt
