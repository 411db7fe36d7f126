"""The small interface a role needs from a human channel.

Roles (``coordinator``, ``clarify``, ``judge``) only need to know which tool names a
channel offers and which MCP servers serve them, so they accept any object with this
shape. The full ``HumanChannel`` (an in-process MCP server named ``human`` with the
tools ``ask`` and ``inbox``, a log, amendments, timeouts) implements it; tests and
plugins can pass something smaller.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Channel(Protocol):
    """Anything that lets an agent reach the human.

    Attributes:
        tool_name: The tool that asks the human a question and waits for the answer,
            as the model sees it (for the MCP server ``human``: ``"mcp__human__ask"``).
            Clarifier and judge get only this one.
        inbox_tool_name: The tool that reads what the human said unprompted
            (``"mcp__human__inbox"``). The coordinator gets it as well.
    """

    tool_name: str
    inbox_tool_name: str

    def mcp_servers(self) -> dict[str, Any]:
        """The ``ClaudeAgentOptions.mcp_servers`` entries that serve the tools."""
        ...


def channel_tools(channel: Channel | None, *, inbox: bool) -> list[str]:
    """Tool names a role gets from ``channel``: the ask tool, and the inbox when asked for."""
    if channel is None:
        return []
    tools = [channel.tool_name]
    if inbox and getattr(channel, "inbox_tool_name", None):
        tools.append(channel.inbox_tool_name)
    return tools
