"""The scripted model drives the real SDK and the real bundled Claude Code CLI.

No mocks: every test here starts the CLI through ``claude_agent_sdk.query`` against
``flower.testing.ScriptedModel`` on loopback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    HookMatcher,
    ResultMessage,
    SystemMessage,
    query,
)

from flower.testing import ScriptedModel, bash, conversation, text, tool

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def collect(prompt: str, options: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=options)]


def result_of(messages: list[Any]) -> ResultMessage:
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert results, f"no ResultMessage in {messages!r}"
    return results[-1]


async def test_bash_runs_and_its_result_reaches_the_next_request(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play([conversation("main", bash("echo made > proof.txt && cat proof.txt"), text("done"))])
    options = ClaudeAgentOptions(cwd=workspace, env=claude_env, allowed_tools=["Bash"])

    result = result_of(await collect("make proof", options))

    assert result.subtype == "success" and result.result == "done"
    assert (workspace / "proof.txt").read_text().strip() == "made"
    second = scripted_model.requests_for("main")[1]
    assert second.turn == 1
    assert second.tool_results() == {"toolu_main_0_0": "made"}
