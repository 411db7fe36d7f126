"""Scripted-model conversations for an English starter run: who says what, routed by role.

The English twin of ``tests/workflow/scripts.py``: each role is told apart by the first
line of its English rule text in the system prompt ("You are the clarifier", ...), the
judge's rounds by the worker report quoted in their first message, the worker by the
subagent header. The texts the models answer with are English too, so whatever Chinese
reaches a request or a file is flower's own.
"""

from __future__ import annotations

import re
from typing import Any

from flower.testing import Conversation, bash, conversation, text, tool

CLARIFIER = "You are the clarifier"
JUDGE = "You are the judge"
COORDINATOR = "You are the coordinator"
HEIR = "You are the bequest writer"
SET_GOAL = "set the goal of this work and its checks"
VERIFY = "Decide whether this round's work is done"

BRIEF = (
    "Here is the brief.\n\n## Goal\nWrite hello.txt\n## Acceptance criteria\n"
    "hello.txt contains hi\n## Scope\nOnly hello.txt\n## Unknowns and assumptions\n"
    "Line endings: LF, assumed"
)
GOAL = (
    "## Goal\nhello.txt is written\n## Checks\n- cat hello.txt prints hi\n- no other file changed"
)
ROUND1 = "ROUND-1-REPORT wrote hello.txt"
ROUND2 = "ROUND-2-REPORT checked that no other file changed"
NOT_YET = (
    "## Verdict\nnot yet\n## Reason\nno proof that other files are untouched\n"
    "## Failed checks\n- no other file changed"
)
ACHIEVED = "## Verdict\nachieved\n## Reason\nchecked every item\n## Failed checks\nnone"
NOTE = (
    "## What this is\nA tiny project with hello.txt\n## Acceptance\n- hello.txt holds hi: met\n"
    "## Generated files\nnone\n## Dead ends\nnone"
)
ASK = {"question": "Which line endings for hello.txt?", "options": ["LF", "CRLF"]}

DISPATCH = tool(
    "Agent",
    {
        "description": "write hello",
        "prompt": "create hello.txt containing hi",
        "subagent_type": "coder",
        "run_in_background": False,
    },
)

#: Names that are keys and stay the seed's in every language: file and step names (a
#: request or a file may hold them, as paths or labels), and nothing else.
KEYS = (
    "需求.md", "目标.md", "问答记录.md", "判定记录.md", "交接-", "确认需求", "设定目标",
    "干活", "判定", "收尾", "旁路问答", "协调者",
)  # fmt: skip
_HAN = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")


def chinese(text: str) -> list[str]:
    """The runs of Chinese characters (and full-width punctuation) left in ``text`` once
    the keys are taken out."""
    for key in KEYS:
        text = text.replace(key, "")
    return _HAN.findall(text)


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


def heir() -> Conversation:
    return conversation("bequest", text(NOTE), system=HEIR)


def two_rounds() -> list[Conversation]:
    """Clarify with one question, a goal, round 1 not yet, round 2 achieved, the bequest."""
    return [
        coder(),
        heir(),
        judge("verdict-2", ROUND2, ACHIEVED),
        judge("verdict-1", ROUND1, NOT_YET),
        goal_setter(),
        clarifier(),
        coordinator(DISPATCH, text(ROUND1), text(ROUND2)),
    ]
