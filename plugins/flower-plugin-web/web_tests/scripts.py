"""What the scripted model says in the plugin's end-to-end tests, by role: a clarifier
that asks which line ending to use, a goal setter, and the pieces both runs share."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from flower.testing import Conversation, conversation, text, tool

#: The ``flower`` command next to this Python.
FLOWER = str(Path(sys.executable).with_name("flower"))
CLARIFIER, JUDGE, COORDINATOR = "你是需求澄清者", "你是裁判", "你是协调者"
QUESTION = "hello.txt 用什么换行?"
BRIEF = (
    "## 目标\n写一个 hello.txt\n## 验收标准\nhello.txt 的内容是 hi\n"
    "## 边界\n只动 hello.txt\n## 未知与假设\n无"
)
GOAL = "## 目标\nhello.txt 写好\n## 判定清单\n- cat hello.txt 输出 hi"
#: The coordinator's dispatch of the one worker (a ``coder`` subagent, in the foreground).
DISPATCH = {
    "description": "write hello",
    "prompt": "create hello.txt containing hi",
    "subagent_type": "coder",
    "run_in_background": False,
}


def clarifier() -> Conversation:
    """Asks :data:`QUESTION` (LF / CRLF), then gives :data:`BRIEF`."""
    asked = tool("mcp__human__ask", {"question": QUESTION, "options": ["LF", "CRLF"]})
    return conversation("clarify", asked, text(BRIEF), system=CLARIFIER)


def goal_setter() -> Conversation:
    return conversation("goal", text(GOAL), system=JUDGE)


def coordinator(*turns: Any) -> Conversation:
    return conversation("work", *turns, system=COORDINATOR)
