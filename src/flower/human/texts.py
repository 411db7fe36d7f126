"""What the human channel says: its MCP tool names and schemas, and the texts a model
gets instead of an answer. Wording apart from the machinery (``human/channel.py``).

Each text has its English beside it (``*_EN``); the channel takes the one of the language
in effect (:mod:`flower.kernel.lang`) when it says it. The tool names are the same in both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flower.kernel.lang import EN, current, pick

SERVER = "human"
ASK_TOOL = "ask"
INBOX_TOOL = "inbox"
TOOL_NAME = f"mcp__{SERVER}__{ASK_TOOL}"
INBOX_TOOL_NAME = f"mcp__{SERVER}__{INBOX_TOOL}"

#: Every state an :class:`Ask` can end in. ``cancelled``: the tool call itself was
#: abandoned (an interrupt, the CLI's MCP_TOOL_TIMEOUT), so nobody needs to answer.
SETTLED_STATES = frozenset(
    {"answered", "timeout", "declined", "over_budget", "invalid", "cancelled"}
)

TIMEOUT_TEXT = (
    "现在没有人能回答这个问题。请按你自己的判断继续做下去,"
    "把这个问题和你采用的假设写进「未知与假设」一节;不要重复提问,也不要停下来等。"
)
OVER_BUDGET_TEXT = (
    "这次运行能问人的次数已经用完,问题没有发出去。剩下拿不准的地方请自己判断,"
    "把假设写进「未知与假设」一节,然后继续。"
)
DECLINED_TEXT = "对方决定不回答这个问题。请自己判断后继续,并把采用的假设写进「未知与假设」一节。"
INVALID_TEXT = "问题是空的,没有发给任何人。请把要问的内容写进 question 参数后再问。"
EMPTY_INBOX_TEXT = "收件箱里没有新消息,按原计划继续。"

ASK_DESCRIPTION = (
    "向人提一个问题,并等待回答;回答就是这个工具的结果。一次只问一个具体的问题,"
    "能列出候选答案时放进 options,人选起来更快。人可能不在场:那时结果会说明情况,"
    "请照说明自己拿主意,不要卡住。"
)
INBOX_DESCRIPTION = (
    "查看人在运行期间主动补充的话(新要求、改方向、纠错)。立即返回,从不等待;"
    "没有新消息也会直接说明。每做完一段工作就看一次。"
)
#: Full JSON Schemas: the SDK passes a dict with ``type`` and ``properties`` through
#: unchanged, the only way to declare an optional array parameter.
ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "description": "要问的问题,写具体,一次一个。"},
        "options": {
            "type": "array",
            "items": {"type": "string"},
            "description": "可选的候选答案;给得出来就给。",
        },
    },
    "required": ["question"],
}
INBOX_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

TIMEOUT_TEXT_EN = (
    "Nobody can answer this question now. Go on by your own judgement, and write the question"
    ' and the assumption you made under "Unknowns and assumptions"; do not ask again and do'
    " not stop to wait."
)
OVER_BUDGET_TEXT_EN = (
    "This run has used up the questions it may ask; the question was not sent. Decide what"
    ' you are still unsure of yourself, write your assumptions under "Unknowns and'
    ' assumptions", and go on.'
)
DECLINED_TEXT_EN = (
    "The human chose not to answer this question. Decide for yourself and go on, and write"
    ' the assumption you made under "Unknowns and assumptions".'
)
INVALID_TEXT_EN = (
    "The question was empty and went to nobody. Put what you want to ask in the question"
    " parameter and ask again."
)
EMPTY_INBOX_TEXT_EN = "Nothing new in the inbox; go on as planned."
ASK_DESCRIPTION_EN = (
    "Ask the human one question and wait for the answer; the answer is this tool's result."
    " Ask one concrete question at a time, and put the likely answers in options when you"
    " can: choosing is quicker. The human may be away: the result then says so, and you"
    " decide as it tells you instead of getting stuck."
)
INBOX_DESCRIPTION_EN = (
    "See what the human added on their own during the run (a new requirement, a change of"
    " direction, a correction). Returns at once and never waits; says so when there is"
    " nothing new. Look after each piece of work."
)
ASK_SCHEMA_EN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {
            "type": "string",
            "description": "The question to ask: concrete, one at a time.",
        },
        "options": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Likely answers to choose from; give them when you can.",
        },
    },
    "required": ["question"],
}

#: What the inbox says around the remarks it hands over, by language.
_INBOX = {
    "head": (
        "人在运行期间补充了下面这些话(按时间先后):",
        "The human added these during the run (oldest first):",
    ),
    "amended": (
        "这些话已经追加到需求文件末尾,后面的步骤也读得到;与原需求冲突时以补充为准。",
        "They were appended to the requirements file, so later steps read them too; where"
        " they contradict the requirements, they win.",
    ),
    "loose": (
        "这些话没有写进需求文件:如果它们改变了目标或边界,"
        "请把它们写进你交给后续步骤的文档,否则下一个会话看不到。",
        "They were not written into the requirements file: if they change the goal or the"
        " scope, put them in the document you hand to the next steps, or the next session"
        " will never see them.",
    ),
}


def tool_texts(lang: str | None = None) -> tuple[str, dict[str, Any], str]:
    """The ask tool's description and schema and the inbox tool's description."""
    if (lang or current()) == EN:
        return ASK_DESCRIPTION_EN, ASK_SCHEMA_EN, INBOX_DESCRIPTION_EN
    return ASK_DESCRIPTION, ASK_SCHEMA, INBOX_DESCRIPTION


def inbox_text(remarks: Sequence[str], *, amended: bool) -> str:
    """What the inbox tool returns: the remarks, numbered, and whether they reached the
    brief (``amended``: all of them did)."""
    if not remarks:
        return pick(EMPTY_INBOX_TEXT, EMPTY_INBOX_TEXT_EN)
    lines = [pick(*_INBOX["head"]), ""]
    lines += [f"{n}. {text}" for n, text in enumerate(remarks, 1)]
    lines.append("")
    lines.append(pick(*_INBOX["amended" if amended else "loose"]))
    return "\n".join(lines)


def declined_note(reason: str) -> str:
    """What follows the declined text when the human gave a reason."""
    return pick(f"(对方的说明:{reason})", f" (the human's note: {reason})")
