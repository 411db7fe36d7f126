"""The tool wall's decisions, thread by thread (the real CLI runs in test_bypass_e2e.py)."""

from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition

from flower.roles.agent import AgentSpec
from flower.roles.factory import clarify, coordinator, judge, oracle, worker
from flower.roles.walls import (
    INHERITED_TOOLS,
    ToolWall,
    canonical,
    tool_names,
    tool_wall,
    wall_for,
)

from .conftest import MiniChannel

MAIN: dict[str, Any] = {}


def call(tool: str, *, agent: str | None = None, **tool_input: Any) -> dict[str, Any]:
    """Hook input as the CLI sends it: subagents carry agent_id and agent_type."""
    data: dict[str, Any] = {"tool_name": tool, "tool_input": tool_input}
    if agent is not None:
        data.update(agent_id="a123", agent_type=agent)
    return data


def test_names_of_allowed_tools_entries() -> None:
    assert tool_names(["Bash(git:*)", " Read ", "Task", ""]) == {"Bash", "Read", "Agent"}
    assert canonical("Task") == "Agent" and canonical("Read") == "Read"


def test_a_coordinators_wall() -> None:
    web = worker("reads", "p", tools=["Read", "WebFetch"])
    spec = coordinator("协调者", "", {"coder": worker("d", "p"), "reader": web},
                       channel=MiniChannel())  # fmt: skip
    wall = wall_for(spec)
    assert wall.main >= {"Agent", "Read", "Bash", "mcp__human__ask", "WebFetch"}
    assert wall.workers["reader"] == {"Read", "WebFetch"}
    assert wall.builtin_tools() == sorted(
        {"Agent", "TodoWrite", "Read", "Bash", "WebFetch", "WebSearch", "Write", "Edit", "Glob",
         "Grep", "ToolSearch"}
    )  # fmt: skip
    for tool in ("Agent", "Read", "mcp__human__ask", "ToolSearch", "Bash", "Write"):
        assert wall.refusal(call(tool, subagent_type="coder")) is None, tool
    for tool in ("Skill", "Workflow", "CronCreate", "SendMessage", "ListAgents", "Monitor",
                 "EnterWorktree", "ScheduleWakeup", "TaskCreate", "SomeNewTool"):  # fmt: skip
        reason = wall.refusal(call(tool))
        assert reason is not None and f"协调者没有 {tool}" in reason, tool


@pytest.mark.parametrize(
    "task",
    [
        {"subagent_type": "general-purpose"},
        {"subagent_type": "fork"},
        {"subagent_type": "claude"},
        {"subagent_type": "Explore"},
        {"subagent_type": "Plan"},
        {"subagent_type": "helper"},  # a project agent
        {},  # no type: the CLI starts general-purpose
        {"subagent_type": ["coder"]},
    ],
)
def test_only_named_workers_are_dispatched(task: dict[str, Any]) -> None:
    wall = wall_for(coordinator("协调者", "", {"coder": worker("d", "p")}))
    for name in ("Agent", "Task"):
        reason = wall.refusal(call(name, **task))
        assert reason is not None and "只能派给自己的 worker:coder" in reason


def test_a_named_worker_never_goes_remote() -> None:
    wall = wall_for(coordinator("协调者", "", {"coder": worker("d", "p")}))
    assert wall.refusal(call("Agent", subagent_type="coder", isolation="worktree")) is None
    reason = wall.refusal(call("Agent", subagent_type="coder", isolation="remote"))
    assert reason is not None and "isolation=remote" in reason


def test_subagent_threads_use_their_own_list() -> None:
    reader = worker("reads", "p", tools=["Read", "Grep"])
    spec = coordinator("协调者", "", {"coder": worker("d", "p"), "reader": reader})
    wall = wall_for(spec)
    assert wall.refusal(call("Write", agent="coder")) is None
    assert wall.refusal(call("Bash", agent="coder")) is None
    reason = wall.refusal(call("Write", agent="reader"))
    assert reason is not None and "reader没有 Write" in reason
    for tool in ("Agent", "Skill", "CronCreate", "SendMessage"):
        assert wall.refusal(call(tool, agent="coder")) is not None, tool
    assert wall.refusal(call("ToolSearch", agent="reader")) is None


@pytest.mark.parametrize("stranger", ["general-purpose", "fork", "helper", "", None])
def test_a_subagent_the_role_never_named_may_use_nothing(stranger: str | None) -> None:
    wall = wall_for(coordinator("协调者", "", {"coder": worker("d", "p")}))
    data = {"tool_name": "Read", "tool_input": {}, "agent_id": "a1"}
    if stranger is not None:
        data["agent_type"] = stranger
    reason = wall.refusal(data)
    assert reason is not None and "不是协调者派出的 worker" in reason


def test_inherited_and_disallowed_tools_of_a_raw_definition() -> None:
    raw = AgentDefinition("d", "p")  # tools=None: inherit
    trimmed = AgentDefinition("d", "p", tools=["Read", "Bash(git:*)"], disallowedTools=["Bash"])
    spec = AgentSpec(
        "主", "", allowed_tools=["Agent", "mcp__human"], agents={"raw": raw, "trimmed": trimmed}
    )
    wall = wall_for(spec)
    assert wall.workers["raw"] == {*INHERITED_TOOLS, "mcp__human"}
    assert wall.workers["trimmed"] == {"Read"}
    assert wall.refusal(call("mcp__human__ask", agent="raw")) is None
    assert wall.refusal(call("mcp__other__x", agent="raw")) is not None
    assert wall.refusal(call("Agent", agent="raw")) is not None
    assert wall.refusal(call("Bash", agent="trimmed")) is not None


@pytest.mark.parametrize(
    "spec",
    [judge("裁判", MiniChannel()), clarify("澄清", MiniChannel()), oracle()],
    ids=["judge", "clarify", "oracle"],
)
def test_readers_start_nothing_and_schedule_nothing(spec: AgentSpec) -> None:
    wall = wall_for(spec)
    assert wall.workers == {}
    assert not set(wall.builtin_tools()) & {"Agent", "Bash", "Write", "Edit", "Skill"}
    for tool in ("Agent", "Task", "Skill", "Workflow", "CronCreate", "SendMessage",
                 "ListAgents", "EnterWorktree", "ScheduleWakeup", "TaskCreate"):  # fmt: skip
        assert wall.refusal(call(tool, subagent_type="general-purpose")) is not None, tool
    assert wall.refusal(call("Read")) is None


def test_hands_on_tools_are_left_to_their_own_guard_unless_told() -> None:
    guarded = ToolWall(role="r", main=frozenset({"Read"}))
    alone = ToolWall(role="r", main=frozenset({"Read"}), hands_on_guarded=False)
    for tool in ("Bash", "Write", "Edit", "NotebookEdit"):
        assert guarded.refusal(call(tool)) is None
        assert alone.refusal(call(tool)) is not None
        assert guarded.refusal(call(tool, agent="x")) is not None  # a stranger's, though


@pytest.mark.anyio
async def test_the_hook_denies_with_the_reason_and_passes_the_rest() -> None:
    matcher = tool_wall(wall_for(judge("裁判", MiniChannel())))
    assert matcher.matcher is None
    hook = matcher.hooks[0]
    out = await hook(call("CronCreate"), "t1", None)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "裁判没有 CronCreate" in out["hookSpecificOutput"]["permissionDecisionReason"]
    assert await hook(call("Read"), "t2", None) == {}


def test_bash_joins_the_main_thread_only_for_a_glancing_delegator() -> None:
    reader = AgentSpec("r", "", allowed_tools=["Read"], glance=True)  # glance needs delegating
    blind = AgentSpec("c", "", allowed_tools=["Read"], delegate_only=True, glance=False)
    looker = AgentSpec("c", "", allowed_tools=["Read"], delegate_only=True, glance=True)
    assert "Bash" not in wall_for(reader).main and "Bash" not in wall_for(reader).builtin_tools()
    assert "Bash" not in wall_for(blind).main
    assert "Bash" in wall_for(looker).main and "Bash" in wall_for(looker).builtin_tools()


def test_a_subagent_without_a_type_is_named_as_unknown() -> None:
    wall = wall_for(coordinator("协调者", "", {"coder": worker("d", "p")}))
    reason = wall.refusal({"tool_name": "Read", "tool_input": {}, "agent_id": "a1"})
    assert reason is not None and "这个 subagent(?)" in reason
