"""The workflow layer, run offline against flower's scripted model: no account, no cost.

    .venv/bin/python examples/workflow_offline.py

Part 1 is the continuation example of the docs: one step, run by two processes' worth
of Runtimes in a row; the second continues the first one's session. Part 2 is the
starter flow (clarify -> goal -> work, judged every round) with nobody at the keyboard
(``timeout_s=0``): the clarifier's question settles at once, the judge sends round 1
back, round 2 passes. The real Claude Code CLI runs every session; only the model's
replies are scripted.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

from flower import AgentSpec, Runtime, Step, Workflow, starter_flow
from flower.testing import ScriptedModel, bash, conversation, text, tool

TERSE = AgentSpec(
    name="terse",
    instructions="回答极简,一行以内,不解释不寒暄。",
    allowed_tools=["Read", "Glob"],
    max_turns=4,
)

BRIEF = (
    "## 目标\n写 hello.txt\n## 验收标准\n内容是 hi\n## 边界\n只动 hello.txt\n"
    "## 未知与假设\n无人应答,按 LF"
)
GOAL = "## 目标\nhello.txt 写好\n## 判定清单\n- cat hello.txt 输出 hi"


def script(workspace: Path) -> list:
    """Who says what. Roles are told apart by their rule text in the system prompt."""
    dispatch = {
        "description": "write hello",
        "prompt": "create hello.txt containing hi",
        "subagent_type": "coder",
        "run_in_background": False,
    }
    return [
        # part 1: read the word, then answer again when the session is continued
        conversation(
            "取词",
            tool("Read", {"file_path": str(workspace / "seed.txt")}),
            text("苹果"),
            text("还是苹果"),
            first_user="读 seed.txt",
        ),
        # part 2: the worker subagent, the judge's two rulings, the goal, the clarifier
        conversation("coder", bash("printf hi > hello.txt"), text("done"), subagent=True),
        conversation(
            "verdict-2",
            text("## 结论\n已达成\n## 理由\n核对过"),
            first_user="ROUND-2",
            system="你是裁判",
        ),
        conversation(
            "verdict-1",
            text("## 结论\n未达成\n## 理由\n没给验证证据\n## 未通过\n- cat hello.txt 输出 hi"),
            first_user="ROUND-1",
            system="你是裁判",
        ),
        conversation("goal", text(GOAL), system="你是裁判"),
        conversation(
            "clarify",
            tool(
                "mcp__human__ask", {"question": "换行用 LF 还是 CRLF?", "options": ["LF", "CRLF"]}
            ),
            text(BRIEF),
            system="你是需求澄清者",
        ),
        conversation(
            "work",
            tool("Agent", dispatch),
            text("ROUND-1 写好了"),
            text("ROUND-2 cat hello.txt 输出 hi"),
            system="你是协调者",
        ),
    ]


async def continuation(workspace: Path, run_dir: Path) -> None:
    (workspace / "seed.txt").write_text("苹果\n", encoding="utf-8")
    for _ in range(2):  # as if `python this.py` ran twice
        wf = Workflow([Step("取词", TERSE, "读 seed.txt,只回文件里那个词。")])
        with Runtime(workspace=workspace, run_dir=run_dir) as rt:
            ctx = await wf.run(rt)
        print(f"woke {ctx['_woke']}: session {ctx['_sessions']['取词']} said {ctx['取词']!r}")


async def starter(workspace: Path, run_dir: Path) -> None:
    wf = starter_flow("写个 hello.txt", workspace=workspace, run_dir=run_dir, timeout_s=0)

    def show(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind in ("step", "verdict", "ask"):
            print(f"  {event.kind:8} {event.step or ''} {event.payload}")

    with Runtime(workspace=workspace, run_dir=run_dir) as rt:
        ctx = await wf.run(rt, on_event=show)
        print(f"failed at: {ctx.get('_failed_at')}; cost ${rt.total_cost():.4f}")
    print("hello.txt:", (workspace / "hello.txt").read_text())
    print("steps in the manifest:", [row["step"] for row in rt.manifest.read()])


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with ScriptedModel() as model:
            for name, value in model.env(home=root / "home").items():
                os.environ[name] = value  # this process only: the CLI talks to the script
            for part, (name, run) in enumerate((("取词", continuation), ("hello", starter)), 1):
                workspace = root / name
                workspace.mkdir()
                model.play(script(workspace))
                print(f"--- part {part}")
                await run(workspace, root / name / "runs")


if __name__ == "__main__":
    asyncio.run(main())
