"""The human channel through the real SDK and the real bundled CLI, against the scripted model.

The scripted model calls ``mcp__human__ask`` / ``mcp__human__inbox`` the way a model does;
a thread plays the human. What the model receives is read back from the next request the
CLI sends, so these tests see exactly what a real model would.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from flower.human.channel import EMPTY_INBOX_TEXT, OVER_BUDGET_TEXT, TIMEOUT_TEXT, HumanChannel
from flower.kernel.events import Event
from flower.roles.agent import AgentSpec
from flower.runtime.runner import Runtime, StepResult
from flower.testing import ScriptedModel, ask, conversation, inbox, text, tool_search

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "make the thing"
ASK_ID = "toolu_main_0_0"  # the first tool call of conversation "main"


async def run(
    ch: HumanChannel,
    workspace: Path,
    tmp_path: Path,
    *,
    allowed: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> StepResult:
    spec = AgentSpec(
        name="clarifier",
        instructions="Ask first.",
        allowed_tools=[ch.tool_name, ch.inbox_tool_name] if allowed is None else allowed,
        mcp_servers=ch.mcp_servers(),
        env=env or {},
    )
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs", resilience=False) as rt:
        return await rt.run(spec, TASK)


def human(ch: HumanChannel, *, answer: str, remark: str = "", delay: float = 0.2) -> list[Any]:
    """Play the human from a thread of its own: on each question, wait, say ``remark``
    (unasked), then answer. Returns [(thread id, ask id), ...]."""
    seen: list[Any] = []

    def respond(ask_id: str) -> None:
        time.sleep(delay)
        if remark:
            ch.send(remark)
        seen.append((threading.get_ident(), ask_id))
        ch.answer(ask_id, answer)

    def on_event(event: Event) -> None:
        if event.kind == "ask" and event.payload["state"] == "asked":
            threading.Thread(target=respond, args=(event.payload["id"],), daemon=True).start()

    ch.on_event = on_event
    return seen


async def test_an_answer_from_a_ui_thread_reaches_the_model_and_so_does_a_remark(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [conversation("main", ask("用什么数据库?", ["SQLite", "Postgres"]), inbox(), text("好"))]
    )
    notes = tmp_path / "wb" / "notes"
    ch = HumanChannel(timeout_s=30, log_path=notes / "问答记录.md", amend_path=notes / "需求.md")
    seen = human(ch, answer="SQLite", remark="另外要能导出 CSV")

    started = time.monotonic()
    result = await run(ch, workspace, tmp_path)
    assert result.ok, result.error
    assert time.monotonic() - started < 25  # nowhere near the 30 s timeout
    assert seen and seen[0][0] != threading.get_ident()

    after_ask, after_inbox = scripted_model.requests_for("main")[1:3]
    assert after_ask.tool_results()[ASK_ID] == "SQLite"
    delivered = after_inbox.tool_results()["toolu_main_1_0"]
    assert "另外要能导出 CSV" in delivered and "已经追加到需求文件" in delivered

    (question,) = ch.asks
    assert (question.state, question.options) == ("answered", ["SQLite", "Postgres"])
    assert [(m.id, m.state) for m in ch.mail] == [("m2", "delivered")]
    assert "> 另外要能导出 CSV" in (notes / "需求.md").read_text(encoding="utf-8")
    log = (notes / "问答记录.md").read_text(encoding="utf-8")
    assert "问:用什么数据库?" in log and "答:SQLite" in log and "另外要能导出 CSV" in log
    assert ch.ui_errors == []


async def test_nobody_answering_times_out_and_the_quota_refuses_without_waiting(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [conversation("main", ask("在吗?"), ask("还在吗?"), inbox(), text("我自己定"))]
    )
    ch = HumanChannel(timeout_s=0.5, max_asks=1)
    result = await run(ch, workspace, tmp_path)
    assert result.ok, result.error
    reqs = scripted_model.requests_for("main")
    assert reqs[1].tool_results()[ASK_ID] == TIMEOUT_TEXT
    assert reqs[2].tool_results()["toolu_main_1_0"] == OVER_BUDGET_TEXT
    assert reqs[3].tool_results()["toolu_main_2_0"] == EMPTY_INBOX_TEXT
    assert reqs[1].at - reqs[0].at >= 0.5  # it did wait for the human
    assert reqs[2].at - reqs[1].at < reqs[1].at - reqs[0].at + 5
    assert [a.state for a in ch.asks] == ["timeout", "over_budget"]


@pytest.mark.parametrize("mode", ["deferred", "tool-search", "listed"])
async def test_deferred_mcp_tools_run_when_called_by_name(
    mode: str,
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    # The CLI defers MCP tools behind ToolSearch: they are missing from the request's
    # tools and only named in a reminder. A direct call still runs; so does the real
    # model's way (ToolSearch select: first); ENABLE_TOOL_SEARCH=false lists them fully.
    turns = [ask("确认一下?"), text("ok")]
    if mode == "tool-search":
        turns.insert(0, tool_search("mcp__human__ask", "mcp__human__inbox"))
    scripted_model.play([conversation("main", *turns)])
    ch = HumanChannel(timeout_s=0)
    env = {"ENABLE_TOOL_SEARCH": "false"} if mode == "listed" else {}
    result = await run(ch, workspace, tmp_path, env=env)
    assert result.ok, result.error

    first = scripted_model.requests_for("main")[0]
    advertised = first.tool_names()
    if mode == "listed":
        assert {"mcp__human__ask", "mcp__human__inbox"} <= set(advertised)
        (schema,) = [t for t in first.body["tools"] if t["name"] == "mcp__human__ask"]
        assert schema["input_schema"]["required"] == ["question"]
        assert "等待回答" in schema["description"]
    else:
        assert "ToolSearch" in advertised and "mcp__human__ask" not in advertised
        assert "mcp__human__ask" in first.text()  # named in the deferred-tools reminder
    last = scripted_model.requests_for("main")[-1]
    assert TIMEOUT_TEXT in last.tool_results().values()
    assert [a.question for a in ch.asks] == ["确认一下?"]


async def test_without_allowed_tools_the_wall_refuses_the_call_before_the_channel_sees_it(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """A connected channel's tool exists, but a role that does not list it may not use
    it (the tool wall; the CLI alone would only have asked for a permission)."""
    scripted_model.play([conversation("main", ask("能问吗?"), text("不能"))])
    ch = HumanChannel(timeout_s=0)
    await run(ch, workspace, tmp_path, allowed=["Read"])
    refused = scripted_model.requests_for("main")[1].tool_results()[ASK_ID]
    assert "没有 mcp__human__ask 工具" in refused
    assert ch.asks == []


async def test_the_cli_cutting_a_long_wait_settles_the_ask_as_cancelled(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # timeout_s=None waits forever on our side; the CLI still ends an MCP call after
    # MCP_TOOL_TIMEOUT (default 1e8 ms) and cancels the handler.
    scripted_model.play([conversation("main", ask("等多久都行?"), text("算了"))])
    ch = HumanChannel(timeout_s=None)
    result = await run(ch, workspace, tmp_path, env={"MCP_TOOL_TIMEOUT": "1000"})
    assert result.ok, result.error
    said = scripted_model.requests_for("main")[1].tool_results()[ASK_ID]
    assert "timed out" in said
    assert ch.asks[0].state == "cancelled" and ch.pending() == []
    assert ch.answer("q1", "来晚了") is False
