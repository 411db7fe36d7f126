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
    ResultError,
    ResultMessage,
    SystemMessage,
    query,
)

from flower.testing import ScriptedModel, bash, conversation, text, tool

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def collect(prompt: str, options: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=options)]


def result_of(messages: list[Any]) -> ResultMessage:
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert results, f"no ResultMessage in {messages!r}"
    return results[-1]


async def test_bash_runs_and_its_result_reaches_the_next_request(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play(
        [conversation("main", bash("echo made > proof.txt && cat proof.txt"), text("done"))]
    )
    options = ClaudeAgentOptions(cwd=workspace, env=claude_env, allowed_tools=["Bash"])

    result = result_of(await collect("make proof", options))

    assert result.subtype == "success" and result.result == "done"
    assert (workspace / "proof.txt").read_text().strip() == "made"
    second = scripted_model.requests_for("main")[1]
    assert second.turn == 1
    assert second.tool_results() == {"toolu_main_0_0": "made"}


async def test_pre_tool_use_deny_stops_the_command(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play([conversation("main", bash("touch forbidden.txt"), text("understood"))])
    seen: list[dict[str, Any]] = []

    async def deny(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(dict(data))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "not here: ask a worker",
            }
        }

    options = ClaudeAgentOptions(
        cwd=workspace,
        env=claude_env,
        allowed_tools=["Bash"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny])]},
    )
    result = result_of(await collect("make the file", options))

    assert result.subtype == "success"
    assert not (workspace / "forbidden.txt").exists()
    assert [d["tool_name"] for d in seen] == ["Bash"]
    assert "agent_id" not in seen[0], "main-thread hook input must not carry agent_id"
    denial = scripted_model.requests_for("main")[1].tool_results()["toolu_main_0_0"]
    assert "not here: ask a worker" in denial


async def test_subagent_runs_its_own_conversation_and_hooks_see_agent_id(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play(
        [
            conversation(
                "worker",
                bash("echo from-worker > worker.txt"),
                text("worker finished: wrote worker.txt"),
                subagent=True,
            ),
            conversation(
                "main",
                tool(
                    "Agent",
                    {
                        "description": "write a file",
                        "prompt": "write worker.txt",
                        "subagent_type": "general-purpose",
                        "run_in_background": False,
                    },
                ),
                text("the worker is done"),
                subagent=False,
            ),
        ]
    )
    calls: list[dict[str, Any]] = []

    async def record(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        calls.append(dict(data))
        return {}

    options = ClaudeAgentOptions(
        cwd=workspace,
        env=claude_env,
        allowed_tools=["Bash", "Agent"],
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[record])]},
    )
    result = result_of(await collect("delegate it", options))

    assert result.subtype == "success" and result.result == "the worker is done"
    assert (workspace / "worker.txt").read_text().strip() == "from-worker"
    worker_requests = scripted_model.requests_for("worker")
    assert worker_requests and all(r.is_subagent for r in worker_requests)
    assert not any(r.is_subagent for r in scripted_model.requests_for("main"))
    by_tool = {c["tool_name"]: c for c in calls}
    assert "agent_id" not in by_tool["Agent"]
    assert by_tool["Bash"].get("agent_id"), "a subagent's tool call must carry agent_id"
    hand_back = scripted_model.requests_for("main")[-1].tool_results()["toolu_main_0_0"]
    assert "worker finished" in hand_back


async def test_a_529_a_cut_stream_and_a_dropped_connection_are_retried_by_the_cli(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play([conversation("main", text("survived", faults=(529, "cut", "drop")))])
    options = ClaudeAgentOptions(cwd=workspace, env={**claude_env, "CLAUDE_CODE_MAX_RETRIES": "3"})

    result = result_of(await collect("hello", options))

    assert result.subtype == "success" and result.result == "survived"
    outcomes = [r.outcome for r in scripted_model.requests_for("main")]
    assert outcomes == ["529", "cut", "drop", "reply"]
    assert [r.attempt for r in scripted_model.requests_for("main")] == [1, 2, 3, 4]


async def test_529_without_retries_surfaces_the_sdk_error(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play([conversation("main", text("never", fail_always=529))])
    options = ClaudeAgentOptions(cwd=workspace, env=claude_env)  # CLAUDE_CODE_MAX_RETRIES=0
    received: list[Any] = []

    with pytest.raises(ResultError) as caught:
        async for message in query(prompt="hello", options=options):
            received.append(message)

    assert caught.value.api_error_status == 529
    assert "529" in (caught.value.result or "")
    assert [r.outcome for r in scripted_model.requests_for("main")] == ["529"]
    assert result_of(received).is_error


async def test_resume_by_id_continues_the_conversation(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play(
        [
            conversation(
                "main", text("first answer: the word is tulip"), text("you said tulip before")
            )
        ]
    )
    options = ClaudeAgentOptions(cwd=workspace, env=claude_env)
    first = await collect("remember a word", options)
    session_id = result_of(first).session_id
    init = next(m for m in first if isinstance(m, SystemMessage) and m.subtype == "init")
    assert init.data["session_id"] == session_id

    second = await collect(
        "what was it?", ClaudeAgentOptions(cwd=workspace, env=claude_env, resume=session_id)
    )

    assert result_of(second).session_id == session_id
    assert result_of(second).result == "you said tulip before"
    resumed = scripted_model.requests_for("main")[-1]
    assert resumed.turn == 1
    assert "first answer: the word is tulip" in resumed.text()
    assert "remember a word" in resumed.text() and "what was it?" in resumed.text()


async def test_overflow_reaches_the_caller_as_prompt_too_long(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play([conversation("main", text("never", fail_always="overflow"))])
    texts: list[str] = []
    with pytest.raises(ResultError) as caught:
        async for message in query(
            prompt="hello", options=ClaudeAgentOptions(cwd=workspace, env=claude_env)
        ):
            if isinstance(message, ResultMessage):
                texts.append(message.result or "")
    assert "prompt is too long" in ((caught.value.result or "") + "".join(texts)).lower()


async def test_scripted_usage_reaches_the_sdk(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    usage = {
        "input_tokens": 1234,
        "cache_read_input_tokens": 100_000,
        "cache_creation_input_tokens": 50,
    }
    scripted_model.play([conversation("main", text("big context", usage=usage))])

    messages = await collect("hello", ClaudeAgentOptions(cwd=workspace, env=claude_env))

    reported = next(m.usage for m in messages if isinstance(m, AssistantMessage))
    assert reported is not None
    assert {k: reported[k] for k in usage} == usage
