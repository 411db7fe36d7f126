"""The five roles: tool sets, fixed fields, rule texts, channels and the roles hook."""

from __future__ import annotations

import re
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition

from flower import hookimpl
from flower.plugin_types import RoleFactory
from flower.plugins import get_plugin_manager
from flower.roles.agent import AgentSpec, CompactPolicy
from flower.roles.factory import (
    CLARIFY_RULES,
    COORDINATOR_RULES,
    COORDINATOR_TOOLS,
    JUDGE_RULES,
    ORACLE_RULES,
    WEB_TOOLS,
    WORKER_RULES,
    WORKER_TOOLS,
    clarify,
    coordinator,
    judge,
    oracle,
    role_factories,
    worker,
)
from flower.roles.guard import wants_isolation

from .conftest import MiniChannel

ASK, INBOX = "mcp__human__ask", "mcp__human__inbox"
HANDS = {"Write", "Edit", "Bash", "NotebookEdit"}


def test_tool_groups_are_the_documented_ones() -> None:
    assert COORDINATOR_TOOLS == ["Agent", "TodoWrite", "Read"]
    assert WEB_TOOLS == ["WebFetch", "WebSearch"]
    assert WORKER_TOOLS == [
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Glob",
        "Grep",
        "WebFetch",
        "WebSearch",
    ]


# --- coordinator -------------------------------------------------------------------------


def test_coordinator_fixed_fields_and_defaults(human_channel: MiniChannel) -> None:
    workers = {"coder": worker("writes code", "be careful")}
    spec = coordinator("协调者", "", workers, channel=human_channel)
    assert isinstance(spec, AgentSpec)
    assert spec.delegate_only is True and spec.agents is workers and spec.workbench is True
    assert spec.glance is True and spec.permission_mode == "acceptEdits"
    assert spec.allowed_tools == ["Agent", "TodoWrite", "Read", ASK, INBOX, "WebFetch", "WebSearch"]
    assert set(spec.mcp_servers) == {"human"}
    assert spec.instructions == COORDINATOR_RULES
    assert (spec.model, spec.effort, spec.max_turns, spec.max_budget_usd) == (None,) * 4
    assert (spec.compact, spec.hooks, spec.env) == (None, None, {})


def test_coordinator_passes_its_options_through() -> None:
    policy = CompactPolicy("off")
    hooks: dict[str, Any] = {"Stop": []}
    spec = coordinator(
        "c",
        "只做后端",
        {},
        can_read=False,
        glance=False,
        model="m",
        effort="low",
        max_turns=3,
        max_budget_usd=2.0,
        permission_mode="default",
        compact=policy,
        hooks=hooks,
        env={"A": "1"},
    )
    assert spec.allowed_tools == ["Agent", "TodoWrite"]
    assert spec.instructions == COORDINATOR_RULES + "\n\n只做后端"
    assert (spec.glance, spec.model, spec.effort, spec.max_turns) == (False, "m", "low", 3)
    assert (spec.max_budget_usd, spec.permission_mode) == (2.0, "default")
    assert spec.compact is policy and spec.hooks is hooks and spec.env == {"A": "1"}
    assert spec.mcp_servers == {}


def test_only_the_workers_web_tools_are_merged() -> None:
    hands_only = worker("d", "p", tools=["Read", "Write", "Edit", "Bash"])
    assert coordinator("c", "", {"w": hands_only}).allowed_tools == COORDINATOR_TOOLS
    fetcher = worker("d", "p", tools=["Bash", "WebFetch"])
    searcher = AgentDefinition("d", "p", tools=["WebSearch"])
    merged = coordinator("c", "", {"a": fetcher, "b": searcher, "c": fetcher}).allowed_tools
    assert merged == [*COORDINATOR_TOOLS, "WebFetch", "WebSearch"]
    inherits = AgentDefinition("d", "p")  # tools=None: inherits every tool
    assert coordinator("c", "", {"x": inherits}).allowed_tools[-2:] == WEB_TOOLS
    assert not HANDS & set(coordinator("c", "", {"x": worker("d", "p")}).allowed_tools)


# --- worker ------------------------------------------------------------------------------


def test_worker_defaults() -> None:
    w = worker("writes code", "use pytest")
    assert isinstance(w, AgentDefinition)
    assert w.description == "writes code"
    assert w.prompt == WORKER_RULES + "\n\nuse pytest"
    assert w.tools == WORKER_TOOLS and w.tools is not WORKER_TOOLS
    assert w.model == "inherit" and w.skills == ["flower:workbench"]
    assert (w.effort, w.maxTurns, w.permissionMode) == (None, None, None)
    assert not wants_isolation(w)


def test_worker_options() -> None:
    w = worker(
        "d",
        "p",
        tools=["Read"],
        model="haiku",
        effort=3,
        max_turns=9,
        permission_mode="acceptEdits",
        skills=["mine:x"],
        discipline=False,
        isolate=True,
    )
    assert w.prompt == "p" and w.tools == ["Read"] and w.model == "haiku"
    assert (w.effort, w.maxTurns, w.permissionMode) == (3, 9, "acceptEdits")
    assert w.skills == ["mine:x"]
    assert wants_isolation(w)
    assert worker("d", "p", discipline=False).skills is None
    assert worker("d", "p", skills=["a"]).skills == ["a", "flower:workbench"]


# --- clarify, judge, oracle --------------------------------------------------------------


def test_clarify(human_channel: MiniChannel) -> None:
    spec = clarify("澄清", human_channel)
    assert spec.allowed_tools == [ASK, "Read", "Glob", "Grep", "WebFetch", "WebSearch"]
    assert INBOX not in spec.allowed_tools and not HANDS & set(spec.allowed_tools)
    assert "Agent" not in spec.allowed_tools
    assert set(spec.mcp_servers) == {"human"}
    assert spec.workbench is False and spec.permission_mode == "default"
    assert spec.delegate_only is False and spec.instructions == CLARIFY_RULES
    blind = clarify("澄清", human_channel, can_read=False, instructions="只问范围", max_turns=5)
    assert blind.allowed_tools == [ASK]
    assert blind.instructions.endswith("只问范围") and blind.max_turns == 5


def test_judge(human_channel: MiniChannel) -> None:
    spec = judge("裁判", human_channel)
    assert spec.allowed_tools == [ASK, "Read", "Glob", "Grep"]
    assert spec.workbench is False and spec.permission_mode == "default"
    assert set(spec.mcp_servers) == {"human"} and spec.instructions == JUDGE_RULES
    runner = judge("裁判", human_channel, can_run=True, model="m", max_budget_usd=1.0)
    assert runner.allowed_tools == [ASK, "Read", "Glob", "Grep", "Bash"]
    assert (runner.model, runner.max_budget_usd) == ("m", 1.0)


def test_oracle() -> None:
    spec = oracle()
    assert spec.name == "旁路问答"
    assert spec.allowed_tools == ["Read", "Glob", "Grep"] and spec.mcp_servers == {}
    assert spec.workbench is True and spec.delegate_only is False
    assert (spec.max_turns, spec.max_budget_usd) == (12, 0.5)
    assert spec.instructions == ORACLE_RULES


def test_roles_take_no_channel_too() -> None:
    assert judge("j", None).allowed_tools == ["Read", "Glob", "Grep"]
    assert coordinator("c", "", {}).mcp_servers == {}


# --- the rule texts ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules", [COORDINATOR_RULES, WORKER_RULES, CLARIFY_RULES, JUDGE_RULES, ORACLE_RULES]
)
def test_rule_texts_are_chinese(rules: str) -> None:
    assert len(re.findall(r"[\u4e00-\u9fff]", rules)) > 80


def test_rule_texts_carry_what_each_role_must_do() -> None:
    # the coordinator restates the workbench, since the index never reaches subagents
    for needle in ("Agent", "验收标准", "artifacts/", "绝对路径", "收件箱", "不亲自动手"):
        assert needle in COORDINATOR_RULES, needle
    # the worker verifies as it goes; real paths come from the Workbench, never from here
    assert "每改一处就跑一次验证" in WORKER_RULES
    assert ".flower" not in WORKER_RULES and "artifacts" not in WORKER_RULES
    # the clarifier only asks and ends with exactly the brief's four sections
    assert re.findall(r"^## (.+)$", CLARIFY_RULES, re.M) == [
        "目标",
        "验收标准",
        "边界",
        "未知与假设",
    ]
    assert "只问,不做" in CLARIFY_RULES
    # the judge first learns its environment, marks what cannot be verified here
    for needle in ("先搞清你在什么环境里", "[此环境无法验证:", "无法验证", "含糊的一律算没达成"):
        assert needle in JUDGE_RULES, needle
    assert re.findall(r"^## (.+)$", JUDGE_RULES, re.M) == ["结论", "理由", "未通过"]
    assert "不改任何东西" in ORACLE_RULES and "工作台" in ORACLE_RULES


# --- the roles hook ----------------------------------------------------------------------


def test_the_default_roles_come_through_the_kernel() -> None:
    roles = role_factories()
    assert set(roles) >= {"coordinator", "worker", "clarify", "judge", "oracle"}
    assert roles["worker"].returns == "agent" and roles["worker"].factory is worker
    assert all(roles[n].returns == "spec" for n in ("coordinator", "clarify", "judge", "oracle"))
    assert all(r.description for r in roles.values())


def test_a_plugin_adds_a_role_and_shadows_a_default() -> None:
    def reviewer(name: str) -> AgentSpec:
        return AgentSpec(name, "review")

    def strict_judge(name: str, channel: Any, **kw: Any) -> AgentSpec:
        return AgentSpec(name, "strict")

    class Plugin:
        @hookimpl
        def flower_roles(self) -> list[RoleFactory]:
            return [RoleFactory("reviewer", reviewer), RoleFactory("judge", strict_judge)]

    pm = get_plugin_manager()
    plugin = Plugin()
    pm.register(plugin, name="test-roles")
    try:
        roles = role_factories()
    finally:
        pm.unregister(plugin)
    assert roles["reviewer"].factory is reviewer
    assert roles["judge"].factory is strict_judge
    assert roles["coordinator"].factory is coordinator
    assert role_factories()["judge"].factory is judge
