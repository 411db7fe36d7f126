"""The scripted starter run the tests and the benchmark trace: two real ``flower``
processes against the scripted model.

1. ``flower --window 60000 --rounds 1 "写个 hello.txt ..."``: the clarifier reads a file
   and asks a question (nobody answers: ``--timeout 0``), the goal is set, the first work
   round's coordinator crosses the handoff point (50,000 of a 60,000 window) on its
   first reply, so the session hands off (the handoff round writes the document) and a
   successor finishes round 1; the judge says "not yet" and the process stops after its
   one round.
2. ``flower --window 60000`` in the same folder: the wake. The successor's session goes
   on (round 2), the judge agrees, the bequest is written.

Marker words sit where content would leak from: the ask, the file the clarifier reads
(a tool result), the question, the model's replies. None may reach an exported span.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.testing import conversation, text, tool

CLARIFIER = "你是需求澄清者"
JUDGE = "你是裁判"
COORDINATOR = "你是协调者"
HEIR = "你是收尾记录者"
SET_GOAL = "设定这件事的目标和判定清单"

#: Words that must never leave the process unless content is opted in.
MARKERS = {
    "ask": "MARKER-ASK-4417",
    "file": "MARKER-FILE-9917",
    "question": "MARKER-QUESTION-2203",
    "reply": "MARKER-REPLY-6120",
}
KEY = "sk-ant-scripted-offline"
ASK = f"写个 hello.txt {MARKERS['ask']}"
NOTES_FILE = "notes.txt"

BRIEF = (
    f"需求如下 {MARKERS['reply']}\n\n## 目标\n写一个 hello.txt\n"
    "## 验收标准\nhello.txt 的内容是 hi\n"
    "## 边界\n只动 hello.txt\n## 未知与假设\n无"
)
GOAL = "## 目标\nhello.txt 写好\n## 判定清单\n- cat hello.txt 输出 hi\n- 没有改动别的文件"
ROUND1 = "ROUND-1-REPORT 写好了 hello.txt"
ROUND2 = "ROUND-2-REPORT 核对过,没有动别的文件"
NOT_YET = "## 结论\n未达成\n## 理由\n没有证明别的文件没动\n## 未通过\n- 没有改动别的文件"
ACHIEVED = "## 结论\n已达成\n## 理由\n逐条核对过\n## 未通过\n无"
DOC = "## 正在做\n写 hello.txt\n## 已决定\n用 printf\n## 下一步\n核对\n## 现场\nhello.txt"
NOTE = "## 这是什么\nhello\n## 验收\n已满足\n## 生成的文件\nhello.txt\n## 死路\n无"
WINDOW = "60000"
FULL = {"input_tokens": 50_000, "output_tokens": 20}


def script(workspace: Path) -> list[Any]:
    notes = str(workspace / NOTES_FILE)
    question = {"question": f"换行用什么? {MARKERS['question']}", "options": ["LF", "CRLF"]}
    return [
        conversation("handoff", text(DOC), after_user="只写交接"),
        conversation("successor", text(ROUND1), text(ROUND2), first_user="你接手"),
        conversation("verdict-2", text(ACHIEVED), system=JUDGE, first_user=ROUND2),
        conversation("verdict-1", text(NOT_YET), system=JUDGE, first_user=ROUND1),
        conversation("goal", text(GOAL), system=JUDGE, first_user=SET_GOAL),
        conversation(
            "clarify",
            tool("Read", {"file_path": notes}),
            tool("mcp__human__ask", question),
            text(BRIEF),
            system=CLARIFIER,
        ),
        conversation("heir", text(NOTE), system=HEIR),
        conversation(
            "work",
            tool("Glob", {"pattern": "*.txt"}, usage=FULL),
            text(ROUND1),
            system=COORDINATOR,
        ),
    ]


def flower_command() -> str:
    found = shutil.which("flower", path=str(Path(sys.executable).parent))
    return found or "flower"


@dataclass
class Ran:
    """One ``flower`` process: its exit code, output and wall time."""

    code: int
    out: str
    err: str
    seconds: float


def prepare(workspace: Path) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / NOTES_FILE).write_text(f"背景资料 {MARKERS['file']}\n", encoding="utf-8")


def run_flower(workspace: Path, env: dict[str, str], *args: str, ask: str = "") -> Ran:
    started = time.monotonic()
    done = subprocess.run(
        [flower_command(), "-w", str(workspace), "--timeout", "0", "--window", WINDOW, *args],
        input=ask,
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=workspace,
    )
    return Ran(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def both(workspace: Path, env: dict[str, str]) -> tuple[Ran, Ran]:
    """The two processes of the story, in ``workspace`` (prepared here)."""
    prepare(workspace)
    first = run_flower(workspace, env, "--rounds", "1", ask=ASK)
    second = run_flower(workspace, env)
    return first, second
