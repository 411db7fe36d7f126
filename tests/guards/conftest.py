"""Shared pieces for the guard, workbench and role tests.

``human_channel`` is the realistic minimal channel: an in-process MCP server named
``human`` with the tools ``ask`` and ``inbox`` (the full HumanChannel comes later), so
roles are tested against the same shape they will meet.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query


class MiniChannel:
    """The smallest real channel: ``ask`` answers from a list, ``inbox`` is empty."""

    tool_name = "mcp__human__ask"
    inbox_tool_name = "mcp__human__inbox"

    def __init__(self, answers: list[str] | None = None) -> None:
        self.answers = list(answers or ["随你定"])
        self.asked: list[str] = []

    def mcp_servers(self) -> dict[str, Any]:
        from claude_agent_sdk import create_sdk_mcp_server, tool

        @tool("ask", "Ask the human one question and wait for the answer", {"question": str})
        async def ask(args: dict[str, Any]) -> dict[str, Any]:
            self.asked.append(str(args.get("question", "")))
            answer = self.answers.pop(0) if self.answers else "(nobody answered)"
            return {"content": [{"type": "text", "text": answer}]}

        @tool("inbox", "Read what the human said unprompted", {})
        async def inbox(args: dict[str, Any]) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": "(empty)"}]}

        return {"human": create_sdk_mcp_server("human", tools=[ask, inbox])}


@pytest.fixture
def human_channel() -> MiniChannel:
    return MiniChannel()


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    """``workspace`` as a git repository with one commit (worktrees need a HEAD)."""
    run = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=workspace, check=True)
    (workspace / "README.md").write_text("hello\n")
    subprocess.run([*run[:1], "add", "README.md"], cwd=workspace, check=True)
    subprocess.run([*run, "commit", "-q", "-m", "init"], cwd=workspace, check=True)
    return workspace


async def run_query(prompt: str, options: ClaudeAgentOptions) -> ResultMessage:
    """Drive the real SDK and CLI to the end; return the final result."""
    stream = query(prompt=prompt, options=options)
    results = [m async for m in stream if isinstance(m, ResultMessage)]
    assert results, "the CLI produced no ResultMessage"
    return results[-1]
