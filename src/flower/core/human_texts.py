"""What the human channel says: its MCP tool names and schemas, and the texts a model
gets instead of an answer. Wording apart from the machinery (``core/human.py``)."""

from __future__ import annotations

from typing import Any

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
