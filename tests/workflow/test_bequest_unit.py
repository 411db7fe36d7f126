"""The bequest's round and its facts without the CLI: what the round is told and allowed,
what the block says for each outcome, the mechanical version, and when it is skipped.
The same round runs against the real CLI in test_bequest_e2e.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flower.kernel.events import Event
from flower.records.handoff import Handoff
from flower.records.workbench import Workbench
from flower.workflow import BRIEF_KEY, GOAL_KEY, VERDICT_KEY, bequeath, bequest
from flower.workflow.bequest import BEQUEST_STEP, Bequest
from flower.workflow.bequest_block import END, START
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Goal, Verdict

from .fakes import FakeRuntime, failed

pytestmark = pytest.mark.anyio

NOTE = (
    "## 这是什么\n一个小工具\n## 验收\n- 能跑:已满足\n"
    "## 生成的文件\ndist/ 由 make 生成\n## 死路\n无"
)
BRIEF = Brief(goal="写一个小工具", accept="能跑", bounds="只动 src", unknowns="无")
GOAL = Goal.parse("## 目标\n小工具能跑\n## 判定清单\n- make test 通过\n- 文档写好")


def context(rt: FakeRuntime, verdict: str | None = None, **more: Any) -> dict[str, Any]:
    ctx: dict[str, Any] = {"_runtime": rt, BRIEF_KEY: BRIEF, GOAL_KEY: GOAL, **more}
    if verdict is not None:
        ctx[VERDICT_KEY] = Verdict.parse(verdict)
    return ctx


def block(rt: FakeRuntime) -> str:
    text = (rt.workspace / "CLAUDE.md").read_text(encoding="utf-8")
    assert text.count(START) == 1 and text.count(END) == 1
    return text


async def test_the_round_is_read_only_and_told_the_outcome_brief_goal_and_verdict(
    rt: FakeRuntime,
) -> None:
    rt.replies = {BEQUEST_STEP: NOTE}
    events: list[Event] = []
    ctx = context(rt, "## 结论\n已达成\n## 理由\n都过了", _on_event=events.append)
    placed = await bequeath(ctx, workspace=rt.workspace, workbench=None)
    (call,) = rt.calls
    assert call.step == BEQUEST_STEP and call.resume is None  # a fresh session
    assert {"Bash", "Write", "Edit", "NotebookEdit", "Agent"} <= set(call.spec.disallowed_tools)
    assert set(call.spec.allowed_tools) == {"Read", "Glob", "Grep"}
    for fact in ("目标已达成", "写一个小工具", "make test 通过", "achieved:都过了"):
        assert fact in call.prompt, fact
    text = block(rt)
    assert "dist/ 由 make 生成" in text and "机械" not in text
    assert [p.action for p in placed] == ["created", "created"]
    (done,) = [e.payload for e in events if e.kind == "bequest"]
    assert done["mechanical"] is False and len(done["files"]) == 2


@pytest.mark.parametrize(
    ("ctx_more", "verdict", "outcome"),
    [
        ({"_failed_at": "干活", "_aborted": "nobody came"}, None, "停在「干活」:nobody came"),
        ({"_failed_at": "干活"}, None, "停在「干活」:这一步没有成功"),
        ({}, "## 结论\n无法达成\n## 理由\n要 macOS", "人接受了结果,裁判判为无法达成:要 macOS"),
        ({}, None, "完成"),
    ],
)
async def test_the_outcome_says_how_the_run_ended(
    rt: FakeRuntime, ctx_more: dict[str, Any], verdict: str | None, outcome: str
) -> None:
    rt.replies = {BEQUEST_STEP: NOTE}
    await bequeath(context(rt, verdict, **ctx_more), workspace=rt.workspace, workbench=None)
    assert f"运行结束时写给下一个打开这个项目的工具:{outcome}" in block(rt)
    assert outcome in rt.calls[0].prompt


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (failed("HTTP 529 overloaded"), "HTTP 529 overloaded"),
        ("## 生成的文件\n无", "缺少:这是什么、验收"),
    ],
)
async def test_a_failed_or_incomplete_round_leaves_a_marked_mechanical_note(
    rt: FakeRuntime, reply: Any, why: str
) -> None:
    rt.replies = {BEQUEST_STEP: reply}
    verdict = "## 结论\n未达成\n## 未通过\n- make test 通过"
    await bequeath(context(rt, verdict), workspace=rt.workspace, workbench=None)
    text = block(rt)
    assert f"收尾的一轮没能写出来({why}),这份是 flower 按记录机械拼装的" in text
    assert "- make test 通过:未满足" in text and "- 文档写好:裁判没有列为未通过" in text
    assert "写一个小工具" in text  # what this is: the brief's goal


async def test_a_round_that_raises_and_no_runtime_both_still_write(tmp_path: Path) -> None:
    class Raising(FakeRuntime):
        async def run(self, *args: Any, **kw: Any) -> Any:
            raise RuntimeError("CLI not found")

    ws = tmp_path / "ws"
    ws.mkdir()
    raising = Raising(workspace=ws, run_dir=tmp_path / "runs")
    achieved = "## 结论\n已达成"
    await bequeath(context(raising, achieved), workspace=ws, workbench=None)
    text = (ws / "AGENTS.md").read_text(encoding="utf-8")
    assert "RuntimeError: CLI not found" in text
    assert "- make test 通过:已满足" in text and "- 文档写好:已满足" in text
    ctx = {BRIEF_KEY: BRIEF}  # no Runtime, no goal: the brief's acceptance instead
    await bequeath(ctx, workspace=ws, workbench=None, names=("NOTES.md",))
    notes = (ws / "NOTES.md").read_text(encoding="utf-8")
    assert "没有 Runtime" in notes and "能跑" in notes


async def test_dead_ends_come_from_every_handoff_once(rt: FakeRuntime) -> None:
    wb = Workbench(rt.workspace)
    wb.ensure()
    Handoff(doing="a", next="b", deadends="用 sed 改不行", step="干活").write(
        wb.notes / "交接-干活.md"
    )
    archived = wb.notes / "archive" / "交接"
    archived.mkdir(parents=True)
    Handoff(doing="a", next="b", deadends="用 sed 改不行", step="干活").write(
        archived / "交接-干活-1.md"
    )
    Handoff(doing="a", next="b", deadends="无", step="复核").write(wb.notes / "交接-复核.md")
    rt.replies = {BEQUEST_STEP: failed()}
    await bequeath(context(rt), workspace=rt.workspace, workbench=wb)
    text = block(rt)
    assert text.count("用 sed 改不行") == 1
    assert "`.flower`" in text  # the workbench, relative to the project
    assert "用 sed 改不行" in rt.calls[0].prompt


async def test_the_finish_is_skipped_when_the_work_step_never_ran(rt: FakeRuntime) -> None:
    finish = bequest(rt.workspace, None, after="干活")
    await finish({"_runtime": rt, "_results": {"确认需求": object()}})
    assert not rt.calls and not (rt.workspace / "CLAUDE.md").exists()
    rt.replies = {BEQUEST_STEP: NOTE}
    await finish({"_runtime": rt, "_results": {"干活": object()}})
    assert len(rt.calls) == 1 and (rt.workspace / "CLAUDE.md").exists()


def test_a_note_parses_its_sections_and_renders_without_a_timestamp() -> None:
    note = Bequest.parse(NOTE)
    assert note.missing() == [] and note.generated == "dist/ 由 make 生成"
    assert Bequest.parse("## 死路\n无").missing() == ["这是什么", "验收"]
    note.outcome, note.workbench = "完成", "- here"
    assert note.body() == note.body() and "### 工作台\n\n- here" in note.body()
    assert "### 死路\n\n无" in note.body()
