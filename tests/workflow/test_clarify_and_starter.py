"""clarify_step, starter_flow's assembly and errors, wake_state (no CLI involved)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from flower import HumanChannel, starter_flow, wake_state
from flower.records.lineage import Lineage
from flower.workflow import BRIEF_KEY, CLARIFY_RESUME, MISSING_KEY, Workflow, clarify_step
from flower.workflow.brief import Brief
from flower.workflow.starter import NO_ASK, WAKE_LABEL, workbench_for
from flower.workflow.verdicts import Goal

from .fakes import FakeRuntime

pytestmark = pytest.mark.anyio

BRIEF = "## 目标\nA\n## 验收标准\nB\n## 边界\nC\n## 未知与假设\nD"


async def test_clarify_freezes_a_complete_brief_and_hands_on_only_the_sections(
    rt: FakeRuntime,
) -> None:
    path = rt.workspace / "notes" / "需求.md"
    rt.replies = {"确认需求": "好的。\n\n" + BRIEF + "\n\n```python\n## 目标\nnot this\n```"}
    step = clarify_step(HumanChannel(timeout_s=0), brief_path=path, prompt="make X")
    ctx = await Workflow([step], continuous=False).run(rt)
    frozen = Brief.load(path)
    assert frozen is not None and frozen.complete() and frozen.goal == "A"
    assert ctx[BRIEF_KEY] == frozen and ctx["确认需求"] == frozen.prompt_block()
    assert "好的" not in ctx["确认需求"] and "not this" not in ctx["确认需求"]
    rt.calls.clear()
    again = await Workflow([step], continuous=False).run(rt)  # complete on disk: skipped
    assert rt.calls == [] and again["确认需求"] == frozen.prompt_block()
    asked = clarify_step(None, brief_path=path, prompt="make X", always_ask=True)
    await Workflow([asked], continuous=False).run(rt)
    assert [c.step for c in rt.calls] == ["确认需求"]


async def test_an_incomplete_brief_asks_the_same_session_for_what_is_missing(
    rt: FakeRuntime,
) -> None:
    path = rt.workspace / "需求.md"
    rt.replies = {"确认需求": "## 目标\nA\n## 边界\n(未填)", "确认需求#round2": BRIEF}
    step = clarify_step(None, brief_path=path, prompt="make X", retries=1)
    ctx = await Workflow([step], continuous=False).run(rt)
    again = rt.calls[1]
    assert (again.step, again.resume) == ("确认需求#round2", "s1")
    assert "验收标准" in again.prompt and "边界" in again.prompt and "目标、" in again.prompt
    assert "_failed_at" not in ctx and MISSING_KEY not in ctx and path.exists()


async def test_a_brief_that_stays_incomplete_is_never_frozen(rt: FakeRuntime) -> None:
    path = rt.workspace / "需求.md"
    rt.replies = {"确认需求": "## 目标\nA"}
    ctx = await Workflow([clarify_step(None, brief_path=path, prompt="x")], continuous=False).run(
        rt
    )
    assert ctx["_failed_at"] == "确认需求" and not path.exists()
    assert ctx[MISSING_KEY] == ["验收标准", "边界", "未知与假设"]


async def test_a_clarify_session_killed_half_way_continues_instead_of_starting_over(
    rt: FakeRuntime,
) -> None:
    path = rt.workspace / "需求.md"
    rt.replies = {"确认需求": "还想问一个问题"}  # the first process never finished
    step = clarify_step(None, brief_path=path, prompt="make X")
    await Workflow([step]).run(rt)
    rt.replies = {"确认需求": BRIEF}
    await Workflow([step]).run(rt)
    assert (rt.calls[1].prompt, rt.calls[1].resume) == (CLARIFY_RESUME, "s1")


async def test_a_remark_on_a_run_that_continues_clarifying_reaches_the_clarifier(
    rt: FakeRuntime,
) -> None:
    # No brief is frozen yet, so there is nothing to amend: the continued clarify session
    # is the only place the human's words can go, and CLARIFY_RESUME alone drops them.
    run_dir = rt.run_dir
    rt.replies = {"确认需求": "还想问一个问题"}  # the first process never finished
    await starter_flow("写个 md 转 html", workspace=rt.workspace, run_dir=run_dir).run(rt)
    rt.replies = {"确认需求": BRIEF}
    again = starter_flow("还要支持代码块高亮", workspace=rt.workspace, run_dir=run_dir)
    await again.run(rt)
    clarified = rt.calls[1]
    assert (clarified.step, clarified.resume) == ("确认需求", "s1")
    assert CLARIFY_RESUME in clarified.prompt and "还要支持代码块高亮" in clarified.prompt
    rt.calls.clear()
    (rt.workspace / ".flower" / "notes" / "需求.md").unlink()  # unfrozen again
    await starter_flow("", workspace=rt.workspace, run_dir=run_dir).run(rt)
    assert rt.calls[0].prompt == CLARIFY_RESUME  # nothing said: nothing added


async def test_the_frozen_briefs_note_tells_the_truth_about_starting_over(
    rt: FakeRuntime,
) -> None:
    rt.replies = {"确认需求": BRIEF}
    await starter_flow("make X", workspace=rt.workspace, run_dir=rt.run_dir).run(rt)
    path = rt.workspace / ".flower" / "notes" / "需求.md"
    note = path.read_text(encoding="utf-8").split("## ", 1)[0]
    # Deleting the file does not clarify from scratch: the clarify session continues
    # ("不要从头开始") and gives the same brief back. Starting over is --new.
    path.unlink()
    rt.calls.clear()
    await starter_flow("", workspace=rt.workspace, run_dir=rt.run_dir).run(rt)
    assert (rt.calls[0].prompt, rt.calls[0].resume) == (CLARIFY_RESUME, "s1")
    assert "删掉" not in note and "--new" in note


def test_the_starter_flow_is_the_documented_assembly(workspace: Path, tmp_path: Path) -> None:
    wf = starter_flow("make X", workspace=workspace, run_dir=tmp_path / "runs")
    assert [s.name for s in wf.steps] == ["确认需求", "设定目标", "干活"]
    assert wf.name == "starter" and isinstance(wf.channel, HumanChannel)
    work = wf.steps[2]
    assert work.spec.name == "协调者" and set(work.spec.agents or {}) == {"coder"}
    assert work.retries == 2 and work.gate is not None and work.on_reject is not None
    notes = workspace / ".flower" / "notes"
    assert wf.workbench.notes == notes and notes.is_dir()
    assert wf.channel.log_path == notes / "问答记录.md"
    assert wf.channel.amend_path == notes / "需求.md"
    assert wf.channel.timeout_s == 1800.0 and wf.channel.max_asks is None
    only = starter_flow("make X", workspace=workspace, clarify_only=True)
    assert [s.name for s in only.steps] == ["确认需求"]
    bare = starter_flow("make X", workspace=workspace, goal=False, rounds=5)
    assert [s.name for s in bare.steps] == ["确认需求", "干活"] and bare.steps[1].gate is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ask": ""}, "say what to do"),
        ({"ask": "   "}, "say what to do"),
        ({"ask": "x", "rounds": 0}, "1 or more"),
        ({"ask": "x", "max_asks": -1}, "0 or more"),
        ({"ask": "x", "isolate": True}, "isolate needs a git repository"),
        ({"ask": "", "new": True}, "say what to do"),
    ],
)
def test_the_starter_flow_refuses_what_cannot_work_before_spending(
    workspace: Path, tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    ask = kwargs.pop("ask")
    with pytest.raises(ValueError, match=message):
        starter_flow(ask, workspace=workspace, run_dir=tmp_path / "runs", **kwargs)
    assert not (workspace / ".flower").exists()  # nothing written for a refusal
    with pytest.raises(ValueError, match="not a folder"):
        starter_flow("x", workspace=tmp_path / "missing")
    assert NO_ASK.startswith("say what to do")


def test_isolate_puts_the_workbench_outside_the_repository(workspace: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, env=env)
    with pytest.raises(ValueError, match="commit"):
        starter_flow("x", workspace=workspace, isolate=True)
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=workspace, check=True, env=env
    )
    wf = starter_flow("x", workspace=workspace, isolate=True)
    outside = workspace.parent / f".flower-{workspace.name}"
    assert wf.workbench.root == outside == workbench_for(workspace, isolate=True).root
    assert wf.channel.amend_path == outside / "notes" / "需求.md"
    assert not (workspace / ".flower").exists()


def freeze(workspace: Path, goal: bool = True) -> Path:
    notes = workspace / ".flower" / "notes"
    Brief.parse(BRIEF).write(notes / "需求.md")
    if goal:
        Goal.parse("## 目标\nG\n## 判定清单\n- a\n- b").write(notes / "目标.md")
    return notes


def test_wake_state_reads_without_writing(workspace: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "runs"
    fresh = wake_state(workspace, run_dir=run_dir)
    assert (fresh["waking"], fresh["checks"], fresh["woke"], fresh["steps"]) == (False, 0, 0, {})
    assert not (workspace / ".flower").exists() and not run_dir.exists()
    notes = freeze(workspace)
    lineage = Lineage.open(run_dir, workspace)
    lineage.remember("干活", "sid-1")
    lineage.bump()
    before = sorted(p.name for p in run_dir.iterdir())
    state = wake_state(workspace, run_dir=run_dir)
    assert state["waking"] and state["checks"] == 2 and state["woke"] == 1
    assert state["steps"] == {"干活": "sid-1"} and state["brief"] == str(notes / "需求.md")
    state["steps"]["x"] = "y"  # a copy
    assert Lineage.open(run_dir, workspace).steps == {"干活": "sid-1"}
    assert sorted(p.name for p in run_dir.iterdir()) == before


def test_waking_with_a_remark_amends_the_brief_once_and_sets_the_goal_again(
    workspace: Path, tmp_path: Path
) -> None:
    notes = freeze(workspace)
    plain = starter_flow("", workspace=workspace, run_dir=tmp_path / "runs")
    assert plain.steps[1].when is not None and plain.steps[1].when({}) is False  # kept
    assert "补充" not in (notes / "需求.md").read_text(encoding="utf-8")
    for n in range(2):
        woken = starter_flow("顺便支持高亮", workspace=workspace, run_dir=tmp_path / "runs")
        if n == 0:  # building the flow writes nothing: the run appends it as it starts
            assert "顺便支持高亮" not in (notes / "需求.md").read_text(encoding="utf-8")
        assert woken.start is not None
        woken.start({})
    text = (notes / "需求.md").read_text(encoding="utf-8")
    assert text.count("顺便支持高亮") == 1 and WAKE_LABEL in text
    assert woken.steps[1].when is not None and woken.steps[1].when({}) is True  # set again
    resume = woken.steps[2].resume_prompt
    assert callable(resume) and "顺便支持高亮" in resume({})


def test_new_archives_the_lineage_brief_and_goal_and_starts_over(
    workspace: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "runs"
    notes = freeze(workspace)
    from flower.records.runstate import mirror_for

    marked = mirror_for(None, workspace / ".flower")  # the run id the workbench keeps
    Lineage.open(run_dir, workspace, mirror=marked).remember("干活", "sid-1")
    assert (workspace / ".flower" / "run.json").is_file()
    wf = starter_flow("另一件事", workspace=workspace, run_dir=run_dir, new=True)
    (folder,) = (notes / "archive").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == [
        "lineage.json",
        "run.json",  # or the old lineage would come back from the store
        "目标.md",
        "需求.md",
    ]
    assert not (workspace / ".flower" / "run.json").exists()
    assert not (notes / "需求.md").exists() and not (run_dir / "lineage.json").exists()
    assert wf.steps[0].when is not None and wf.steps[0].when({}) is True  # clarify again
    assert wake_state(workspace, run_dir=run_dir)["waking"] is False
    starter_flow("又一件事", workspace=workspace, run_dir=run_dir, new=True)
    assert len(list((notes / "archive").iterdir())) == 1  # nothing to archive: no empty folder


async def test_a_remark_sent_while_the_brief_is_clarified_stays_in_the_frozen_brief(
    rt: FakeRuntime,
) -> None:
    """The line arrives (terminal or page) while the clarifier works: it is appended to
    the brief file, and freezing the clarified brief must not write over it."""
    path = rt.workspace / "notes" / "需求.md"
    channel = HumanChannel(timeout_s=0, amend_path=path)
    real_run = rt.run

    async def run_while_a_remark_arrives(*args: Any, **kwargs: Any) -> Any:
        if not channel.mail:
            channel.send("另外把 README 也写上")  # mid-step, before the answer is frozen
        return await real_run(*args, **kwargs)

    rt.run = run_while_a_remark_arrives  # type: ignore[method-assign]
    rt.replies = {"确认需求": BRIEF}
    step = clarify_step(channel, brief_path=path, prompt="make X")
    ctx = await Workflow([step], continuous=False).run(rt)

    frozen = path.read_text(encoding="utf-8")
    assert "## 目标\n\nA" in frozen and "## 未知与假设\n\nD" in frozen
    assert frozen.count("另外把 README 也写上") == 1 and "### 补充 · 运行中补充" in frozen
    assert "另外把 README 也写上" in ctx["确认需求"]  # later steps read it
    assert Brief.load(path) is not None and Brief.load(path).complete()  # type: ignore[union-attr]
    # freezing again (a second round of clarifying) keeps it once, not twice
    await Workflow([clarify_step(channel, brief_path=path, prompt="x", always_ask=True)],
                   continuous=False).run(rt)  # fmt: skip
    assert path.read_text(encoding="utf-8").count("另外把 README 也写上") == 1
