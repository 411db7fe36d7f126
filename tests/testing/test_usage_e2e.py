"""Through the real CLI: the scripted model's usage is what the API would bill, the
cache follows the CLI's own breakpoints, and the CLI's cost is the list price of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

from flower.testing import ScriptedModel, bash, conversation, text
from flower.testing.prices import cost_of

pytestmark = pytest.mark.anyio


async def run(model: ScriptedModel, ws: Path, home: Path) -> ResultMessage:
    options = ClaudeAgentOptions(cwd=ws, env=model.env(home=home), allowed_tools=["Bash"])
    result = None
    async for message in query(prompt="work", options=options):
        if isinstance(message, ResultMessage):
            result = message
    assert result is not None
    return result


async def test_the_cli_s_breakpoints_make_later_turns_read_the_cache(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = [conversation("c", bash("seq 1 400"), bash("seq 1 300"), text("done", elapse=301))]
    with ScriptedModel(script) as model:
        result = await run(model, ws, tmp_path / "h")
    first, second, third = [r.usage for r in model.requests]
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 1000
    # the second request reads all the first one wrote and writes only what is new
    assert second["cache_read_input_tokens"] >= first["cache_creation_input_tokens"]
    assert 0 < second["cache_creation_input_tokens"] < first["cache_creation_input_tokens"]
    # 301 s passed before the third (a worker's pause): the 5-minute entries are gone
    assert third["cache_read_input_tokens"] == 0
    assert third["cache_creation_input_tokens"] > second["cache_creation_input_tokens"]
    assert all(u["output_tokens"] >= 1 for u in (first, second, third))
    # the CLI's own total is the list price of the usage the model reported
    ours = sum(cost_of(r.usage, r.body.get("model")) for r in model.requests)
    assert result.total_cost_usd == pytest.approx(ours, rel=0.01)
