"""flower.testing's turns for MCP tool calls: ask, inbox, tool_search."""

from __future__ import annotations

import pytest

from flower.testing import RecordedRequest, ScriptError, ToolCall, ask, inbox, tool_search


def test_ask_calls_the_human_servers_ask_tool() -> None:
    turn = ask("用什么数据库?", ("SQLite", "Postgres"), say="先问一下")
    assert turn.text == "先问一下" and turn.stop_reason == "tool_use"
    assert turn.tools == (
        ToolCall(
            "mcp__human__ask", {"question": "用什么数据库?", "options": ["SQLite", "Postgres"]}
        ),
    )
    assert ask("x").tools[0].input == {"question": "x"}  # no options key unless given
    assert ask("x", [], server="pager").tools[0] == ToolCall(
        "mcp__pager__ask", {"question": "x", "options": []}
    )
    assert ask("x", delay=0.5).delay == 0.5


def test_inbox_and_tool_search() -> None:
    assert inbox().tools == (ToolCall("mcp__human__inbox", {}),)
    assert inbox(server="chat").tools[0].name == "mcp__chat__inbox"
    assert tool_search("mcp__human__ask", "mcp__human__inbox").tools == (
        ToolCall("ToolSearch", {"query": "select:mcp__human__ask,mcp__human__inbox"}),
    )
    with pytest.raises(ScriptError, match="at least one tool name"):
        tool_search()


def test_tool_names_lists_what_the_request_advertises() -> None:
    rec = RecordedRequest(
        path="/v1/messages",
        headers={},
        body={"tools": [{"name": "Bash"}, {"name": "ToolSearch"}, "junk"]},
    )
    assert rec.tool_names() == ["Bash", "ToolSearch"]
    assert RecordedRequest(path="/", headers={}, body={}).tool_names() == []
