"""Scripted-model conversations for the starter flow: who says what, routed by role.

Each role's rule text is in its system prompt, so the clarifier, the goal setter, the
judge and the coordinator are told apart by ``system=``; the judge's rounds by the
worker report quoted in their first message; the worker subagent by its header.
"""

from __future__ import annotations

from typing import Any

from flower.testing import Conversation, bash, conversation, text, tool

CLARIFIER = "你是需求澄清者"
JUDGE = "你是裁判"
COORDINATOR = "你是协调者"
SET_GOAL = "设定这件事的目标和判定清单"
VERIFY = "判定这一轮的活做完了没有"

BRIEF = (
    "好的,需求如下。\n\n## 目标\n写一个 hello.txt\n## 验收标准\nhello.txt 的内容是 hi\n"
    "## 边界\n只动 hello.txt\n## 未知与假设\n语言按人选的来"
)
GOAL = "## 目标\nhello.txt 写好\n## 判定清单\n- cat hello.txt 输出 hi\n- 没有改动别的文件"
ROUND1 = "ROUND-1-REPORT 写好了 hello.txt"
ROUND2 = "ROUND-2-REPORT 核对过,没有动别的文件"
NOT_YET = "## 结论\n未达成\n## 理由\n没有证明别的文件没动\n## 未通过\n- 没有改动别的文件"
ACHIEVED = "## 结论\n已达成\n## 理由\n逐条核对过\n## 未通过\n无"
UNREACHABLE = (
    "## 结论\n无法验证\n## 理由\n要在 macOS 上验证,这里是 Linux\n## 未通过\n- cat hello.txt 输出 hi"
)
ASK = {"question": "hello.txt 用什么换行?", "options": ["LF", "CRLF"]}

DISPATCH = tool(
    "Agent",
    {
        "description": "write hello",
        "prompt": "create hello.txt containing hi",
        "subagent_type": "coder",
        "run_in_background": False,
    },
)


def clarifier(*, ask: bool = True) -> Conversation:
    turns = [tool("mcp__human__ask", ASK)] if ask else []
    return conversation("clarify", *turns, text(BRIEF), system=CLARIFIER)


def goal_setter(goal: str = GOAL) -> Conversation:
    return conversation("goal", text(goal), system=JUDGE, first_user=SET_GOAL)


def judge(name: str, report: str, verdict: str) -> Conversation:
    return conversation(name, text(verdict), system=JUDGE, first_user=report)


def coder() -> Conversation:
    return conversation("coder", bash("printf hi > hello.txt"), text("done"), subagent=True)


def coordinator(*turns: Any) -> Conversation:
    return conversation("work", *turns, system=COORDINATOR, subagent=False)


def one_round(verdict: str, *work: Any, ask: bool = False) -> list[Conversation]:
    """Clarify (with the question when ``ask``), a goal, the coordinator's ``work`` turns,
    and the judge's ``verdict`` on round 1."""
    return [
        coder(),
        judge("verdict-1", ROUND1, verdict),
        goal_setter(),
        clarifier(ask=ask),
        coordinator(*work),
    ]


def two_rounds() -> list[Conversation]:
    """Clarify with one question, a goal, round 1 not yet, round 2 achieved."""
    return [
        coder(),
        judge("verdict-2", ROUND2, ACHIEVED),
        judge("verdict-1", ROUND1, NOT_YET),
        goal_setter(),
        clarifier(),
        coordinator(DISPATCH, text(ROUND1), text(ROUND2)),
    ]
