"""The bequest end to end (real SDK, real CLI): when the starter flow ends, a read-only
round writes the next tool's note into CLAUDE.md and AGENTS.md; the human's own text
stays byte for byte, broken markers get a new block, a rerun changes nothing, a failed
round leaves a marked mechanical note. ``--no-bequest`` is driven through the real
``flower`` in tests/commands/test_go_pty.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flower import Runtime, starter_flow
from flower.kernel.events import Event
from flower.runtime.resilience import Resilience
from flower.testing import ScriptedModel, Turn, conversation, text
from flower.workflow import BRIEF_KEY, GOAL_KEY, VERDICT_KEY, bequeath
from flower.workflow.bequest_block import END, START
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Goal, Verdict

from . import scripts as S
from .fakes import Answerer

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

HEIR = "你是收尾记录者"
NOTE = (
    "## 这是什么\n一个只有 hello.txt 的小项目\n## 验收\n- hello.txt 内容是 hi:已满足\n"
    "## 生成的文件\n无\n## 死路\n无"
)
HAND_WRITTEN = "# My project\r\n\r\nRun `make test` before pushing.\r\n\xff trailing bytes\n"


def heir(*turns: Turn) -> Any:
    return conversation("bequest", *(turns or (text(NOTE),)), system=HEIR)


async def run_starter(workspace: Path, run_dir: Path, **kw: Any) -> tuple[dict[str, Any], list]:
    wf = starter_flow("写个 hello.txt", workspace=workspace, run_dir=run_dir, **kw)
    events: list[Event] = []
    fast = Resilience(base_delay=0.05, max_delay=0.2)
    with (
        Answerer(wf.channel, {"换行": "LF"}),
        Runtime(workspace=workspace, run_dir=run_dir, resilience=fast) as rt,
    ):
        ctx = await wf.run(rt, on_event=events.append)
    return ctx, events


async def test_a_finished_run_leaves_its_note_and_keeps_the_humans_text(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play([heir(), *S.two_rounds()])
    claude = workspace / "CLAUDE.md"
    claude.write_bytes(HAND_WRITTEN.encode("utf-8", "surrogateescape") + b"\xfe\n")
    before = claude.read_bytes()
    ctx, events = await run_starter(workspace, tmp_path / "runs")
    assert "_failed_at" not in ctx

    (request,) = scripted_model.requests_for("bequest")
    prompt = " ".join(str(m.get("content")) for m in request.messages)
    assert "目标已达成" in prompt and "hello.txt" in prompt  # it is told the outcome and brief
    written = claude.read_bytes()
    assert written.startswith(before)  # every byte the human wrote, first, untouched
    block = written[len(before) :].decode("utf-8")
    assert block.startswith("\r\n" + START)  # the file is mostly CRLF: so is the block
    assert block.rstrip().endswith(END)
    assert "一个只有 hello.txt 的小项目" in block and "机械" not in block
    assert ".flower" in block  # where the workbench is
    agents = (workspace / "AGENTS.md").read_text(encoding="utf-8")
    assert agents.startswith(START) and "一个只有 hello.txt 的小项目" in agents
    (done,) = [e.payload for e in events if e.kind == "bequest"]
    assert [(Path(f["path"]).name, f["action"]) for f in done["files"]] == [
        ("CLAUDE.md", "appended"),
        ("AGENTS.md", "created"),
    ]
    assert not done["mechanical"]

    # the round again, same answer: not a byte changes, neither file is rewritten
    scripted_model.play([heir()])
    mtimes = [p.stat().st_mtime_ns for p in (claude, workspace / "AGENTS.md")]
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        placed = await bequeath({**ctx, "_runtime": rt}, workspace=workspace, workbench=None)
    assert [p.action for p in placed] == ["unchanged", "unchanged"]
    assert claude.read_bytes() == written
    assert [p.stat().st_mtime_ns for p in (claude, workspace / "AGENTS.md")] == mtimes


async def test_broken_markers_get_a_new_block_and_a_failed_round_a_mechanical_one(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # The round alone, through the real CLI, after a run whose goal was met: the
    # starter flow's wiring is the test above.
    scripted_model.play([heir(Turn(text="x", fail_always=400))])
    claude = workspace / "CLAUDE.md"
    claude.write_text(f"notes\n{START}\nhalf a block someone cut short\n", encoding="utf-8")
    before = claude.read_bytes()
    events: list[Event] = []
    ctx = {
        BRIEF_KEY: Brief.parse(S.BRIEF),
        GOAL_KEY: Goal.parse(S.GOAL),
        VERDICT_KEY: Verdict.parse(S.ACHIEVED),
        "_on_event": events.append,
    }
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        await bequeath({**ctx, "_runtime": rt}, workspace=workspace, workbench=None)
    assert scripted_model.requests_for("bequest")  # the round did run, and failed
    written = claude.read_bytes()
    assert written.startswith(before)  # nothing deleted, the stray marker kept
    block = written[len(before) :].decode("utf-8")
    assert block.count(START) == 1 and block.count(END) == 1
    assert "机械拼装" in block and "400" in block  # marked, and why
    assert "cat hello.txt 输出 hi:已满足" in block  # from the goal and the last verdict
    (done,) = [e.payload for e in events if e.kind == "bequest"]
    assert done["mechanical"] and done["files"][0]["action"] == "appended"
    assert "marker" in done["files"][0]["warning"]
