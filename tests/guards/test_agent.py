"""AgentSpec, the policies, default_window and build_options' mapping to the SDK."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import zipfile
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition, HookMatcher

import flower
from flower import hookimpl
from flower.plugins import get_plugin_manager
from flower.records.workbench import Workbench
from flower.roles import agent as agent_module
from flower.roles.agent import (
    CONSERVATIVE_WINDOW,
    PLUGIN_DIR,
    AgentSpec,
    CompactPolicy,
    GuessedWindow,
    HandoffPolicy,
    build_options,
    default_window,
)
from flower.roles.guard import isolated

REPO = Path(__file__).resolve().parents[2]


def test_agent_spec_defaults() -> None:
    spec = AgentSpec("a", "be brief")
    assert [f.name for f in fields(AgentSpec)] == [
        "name",
        "instructions",
        "allowed_tools",
        "disallowed_tools",
        "model",
        "effort",
        "max_turns",
        "max_budget_usd",
        "permission_mode",
        "agents",
        "mcp_servers",
        "hooks",
        "compact",
        "env",
        "glance",
        "workbench",
        "delegate_only",
        "read_only",
        "sealed",
    ]
    assert spec.allowed_tools == ["Read", "Glob", "Grep"]
    assert spec.allowed_tools is not AgentSpec("b", "").allowed_tools
    assert (spec.disallowed_tools, spec.mcp_servers, spec.env) == ([], {}, {})
    assert (spec.model, spec.effort, spec.max_turns, spec.max_budget_usd) == (None,) * 4
    assert (spec.agents, spec.hooks, spec.compact) == (None, None, None)
    assert spec.permission_mode == "default"
    assert (spec.glance, spec.workbench, spec.delegate_only) == (False, True, False)
    assert spec.read_only is False and spec.sealed is False


# --- policies ----------------------------------------------------------------------------


def test_compact_policy() -> None:
    assert (CompactPolicy().mode, CompactPolicy().window) == ("auto", None)
    assert CompactPolicy().env() == {}
    assert CompactPolicy(window=300_000).env() == {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "300000"}
    assert CompactPolicy("off").env() == {"DISABLE_AUTO_COMPACT": "1"}
    assert CompactPolicy("off", window=300_000).env() == {"DISABLE_AUTO_COMPACT": "1"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"mode": "never"}, "'auto' or 'off'"), ({"window": 99_999}, "at least 100,000")],
)
def test_compact_policy_refuses_bad_input(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CompactPolicy(**kwargs)


def test_handoff_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
    monkeypatch.delenv("ANTHROPIC_DEFAULT_OPUS_MODEL", raising=False)
    p = HandoffPolicy()
    assert (p.enabled, p.window, p.headroom, p.max_generations) == (True, 1_000_000, 50_000, 8)
    assert (p.at, p.warn_at) == (950_000, 930_000)
    small = HandoffPolicy(window=200_000)
    assert (small.at, small.warn_at) == (150_000, 130_000)
    tight = HandoffPolicy(window=40_000, headroom=10_000)
    assert (tight.at, tight.warn_at) == (30_000, 10_000)
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-haiku-4-5")
    assert HandoffPolicy().window == 200_000, "the window is read when the policy is made"


def test_a_guessed_window_gives_way_to_the_clis_and_a_given_one_never() -> None:
    guess = HandoffPolicy()
    assert guess.guessed and isinstance(guess.window, GuessedWindow)
    assert guess.window_for(200_000) == 200_000  # the CLI's report for the model in use
    assert guess.window_for(None) == min(int(guess.window), CONSERVATIVE_WINDOW)
    assert guess.window_for(30_000) == min(int(guess.window), CONSERVATIVE_WINDOW)  # no room
    given = HandoffPolicy(window=300_000)
    assert not given.guessed and given.window_for(200_000) == 300_000
    assert not dataclasses.replace(guess, window=500_000).guessed
    assert (guess.at_for(200_000), guess.warn_at_for(200_000)) == (150_000, 130_000)


@pytest.mark.parametrize(
    ("window", "headroom"), [(30_000, 50_000), (69_999, 50_000), (25_000, 10_000)]
)
def test_a_window_the_headroom_cannot_fit_is_refused_with_the_numbers(
    window: int, headroom: int
) -> None:
    with pytest.raises(ValueError) as refused:
        HandoffPolicy(window=window, headroom=headroom)
    said = str(refused.value)
    assert f"{window:,} tokens" in said and f"{headroom:,} free" in said
    assert f"at least {headroom + 20_000:,}" in said
    assert HandoffPolicy(enabled=False, window=window, headroom=headroom).window == window
    assert HandoffPolicy(window=headroom + 20_000, headroom=headroom).at == max(10_000, 20_000)
    with pytest.raises(ValueError, match="headroom must be 0 or more"):
        HandoffPolicy(headroom=-1)


@pytest.mark.parametrize(
    ("model", "opus", "window"),
    [
        ("", "", 1_000_000),
        ("claude-opus-5", "", 1_000_000),
        ("claude-sonnet-4-5[1m]", "", 1_000_000),
        ("sonnet[1m]", "", 1_000_000),
        ("claude-fable-5[2m]", "", 2_000_000),
        ("claude-haiku-4-5", "", 200_000),
        ("claude-3-5-sonnet-20241022", "", 200_000),
        ("claude-3-opus", "", 200_000),
        ("", "claude-haiku-5-5", 200_000),
        ("", "claude-opus-4-7[1m]", 1_000_000),
        ("claude-opus-5", "claude-haiku-4-5", 1_000_000),
        ("some-gateway-model", "", 1_000_000),
    ],
)
def test_default_window(
    monkeypatch: pytest.MonkeyPatch, model: str, opus: str, window: int
) -> None:
    for name, value in (("ANTHROPIC_MODEL", model), ("ANTHROPIC_DEFAULT_OPUS_MODEL", opus)):
        if value:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)
    assert default_window() == window


# --- build_options -----------------------------------------------------------------------


def test_every_field_reaches_its_option(workspace: Path, tmp_path: Path) -> None:
    async def mine(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {}

    own = HookMatcher(matcher="Bash", hooks=[mine])
    coder = AgentDefinition(description="d", prompt="p", tools=["Bash"])
    spec = AgentSpec(
        name="n",
        instructions="rules",
        allowed_tools=["Read", "Bash"],
        disallowed_tools=["WebSearch"],
        model="claude-opus-5",
        effort="high",
        max_turns=7,
        max_budget_usd=1.5,
        permission_mode="acceptEdits",
        agents={"coder": coder},
        mcp_servers={"srv": {"type": "stdio", "command": "x"}},
        hooks={"PreToolUse": [own]},
        compact=CompactPolicy("off"),
        env={"FOO": "1"},
        workbench=False,
    )
    store = object()
    o = build_options(
        spec,
        cwd=workspace,
        session_store=store,  # type: ignore[arg-type]
        resume="sid",
        fork=True,
        resume_at="uuid-1",
        add_dirs=[str(tmp_path)],
        flush="batched",
    )
    assert o.system_prompt == {"type": "preset", "preset": "claude_code", "append": "rules"}
    assert o.allowed_tools == ["Read", "Bash"] and o.disallowed_tools == ["WebSearch"]
    assert (o.model, o.effort, o.max_turns, o.max_budget_usd) == ("claude-opus-5", "high", 7, 1.5)
    assert o.permission_mode == "acceptEdits"
    assert o.agents == {"coder": coder}
    assert o.mcp_servers == {"srv": {"type": "stdio", "command": "x"}}
    assert o.hooks is not None and o.hooks["PreToolUse"][0] is own
    assert [m.hooks[0].__name__ for m in o.hooks["PreToolUse"][1:]] == ["wall_hook", "whitelist"]
    assert o.tools == ["Bash", "Read", "ToolSearch"]  # the main thread's and coder's built-ins
    assert o.env["DISABLE_AUTO_COMPACT"] == "1" and o.env["FOO"] == "1"
    assert o.cwd == str(workspace) and o.add_dirs == [str(tmp_path)]
    assert o.session_store is store and o.session_store_flush == "batched"
    assert (o.resume, o.fork_session, o.resume_session_at) == ("sid", True, "uuid-1")
    assert o.plugins == [{"type": "local", "path": str(PLUGIN_DIR)}]
    assert o.setting_sources == ["project"] and o.strict_mcp_config is True


def test_quiet_defaults(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)
    o = build_options(AgentSpec("n", ""), use_plugin=False, portable=False)
    assert o.system_prompt == {"type": "preset", "preset": "claude_code"}
    assert o.cwd == str(workspace)
    assert o.session_store is None and o.session_store_flush == "eager"
    assert (o.resume, o.fork_session, o.resume_session_at) == (None, False, None)
    assert o.plugins == [] and o.add_dirs == []
    assert o.setting_sources is None and o.strict_mcp_config is False
    assert o.agents is None and o.mcp_servers == {}


def test_prompt_order_prelude_instructions_workbench(workspace: Path) -> None:
    wb = Workbench(workspace)
    o = build_options(AgentSpec("n", "RULES"), prelude="PRELUDE", workbench=wb)
    append = o.system_prompt["append"]  # type: ignore[index]
    assert append.index("PRELUDE") < append.index("RULES") < append.index("## 工作台")
    assert "# 工作台索引" in append
    off = build_options(AgentSpec("n", "RULES", workbench=False), workbench=wb)
    assert off.system_prompt["append"] == "RULES"  # type: ignore[index]
    assert [m.hooks[0].__name__ for m in (off.hooks or {})["PostToolUse"]] == ["redact_output"]


def test_spec_env_wins_over_compact_and_config_dir_follows_the_store(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/cfg")
    spec = AgentSpec("n", "", compact=CompactPolicy(window=200_000))
    spec.env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "500000"}
    o = build_options(spec, cwd=workspace)
    assert o.env == {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "500000"}
    with_store = build_options(spec, cwd=workspace, session_store=object())  # type: ignore[arg-type]
    assert with_store.env["CLAUDE_CONFIG_DIR"] == "/cfg"
    spec.env["CLAUDE_CONFIG_DIR"] = "/mine"
    assert (
        build_options(spec, cwd=workspace, session_store=object()).env["CLAUDE_CONFIG_DIR"]
        == "/mine"
    )  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fork": True}, "need resume"),
        ({"resume_at": "u"}, "need resume"),
        ({"flush": "sometimes"}, "'eager' or 'batched'"),
    ],
)
def test_bad_input_is_one_clear_error(
    workspace: Path, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        build_options(AgentSpec("n", ""), cwd=workspace, **kwargs)


def test_isolation_needs_git(workspace: Path) -> None:
    marked = {"coder": isolated(AgentDefinition("d", "p")), "other": AgentDefinition("d", "p")}
    spec = AgentSpec("协调者", "", agents=marked)
    with pytest.raises(ValueError, match=r"coder of '协调者' must run isolated.*git init"):
        build_options(spec, cwd=workspace)
    (workspace / "sub").mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    # A repository without a commit is refused too: the CLI has no HEAD to base a worktree
    # on and fails the Agent call mid-run ("Failed to resolve base branch").
    with pytest.raises(ValueError, match=r"coder of '协调者'.*no commit.*git commit"):
        build_options(spec, cwd=workspace / "sub")
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=workspace, check=True)
    assert build_options(spec, cwd=workspace / "sub").agents == marked
    assert build_options(AgentSpec("n", "", agents={"x": AgentDefinition("d", "p")}), cwd="/")


def test_guards_come_through_the_kernel_after_spec_hooks(workspace: Path) -> None:
    async def extra(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {}

    seen: list[tuple[str, Any, Any]] = []

    class Plugin:
        @hookimpl
        def flower_guards(self, spec: AgentSpec, workbench: Any, spill_threshold: Any) -> Any:
            seen.append((spec.name, workbench, spill_threshold))
            return {"Stop": [HookMatcher(hooks=[extra])]}

    pm = get_plugin_manager()
    plugin = Plugin()
    pm.register(plugin, name="test-guards")
    try:
        wb = Workbench(workspace)
        o = build_options(AgentSpec("n", ""), workbench=wb, spill_threshold=123)
        build_options(AgentSpec("m", "", workbench=False), workbench=wb)
    finally:
        pm.unregister(plugin)
    assert seen == [("n", wb, 123), ("m", None, 4000)]
    assert o.hooks is not None and o.hooks["Stop"][0].hooks == [extra]
    assert [m.hooks[0].__name__ for m in o.hooks["PreToolUse"]] == ["wall_hook", "whitelist"]
    post = [m.hooks[0].__name__ for m in o.hooks["PostToolUse"]]
    assert post == ["index", "spill", "redact_output"]


# --- the plugin folder -------------------------------------------------------------------


def _front_matter(text: str) -> dict[str, str]:
    head = text.split("---")[1]
    return dict(line.split(": ", 1) for line in head.strip().splitlines())


def test_plugin_dir_is_a_claude_code_plugin_with_the_workbench_skill() -> None:
    assert PLUGIN_DIR.is_dir() and PLUGIN_DIR == REPO / "plugin"
    manifest = json.loads((PLUGIN_DIR / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "flower" and manifest["version"] == flower.__version__
    skill = (PLUGIN_DIR / "skills" / "workbench" / "SKILL.md").read_text()
    meta = _front_matter(skill)
    assert meta["name"] == "workbench" and meta["description"]
    for convention in ("scripts/", "artifacts/", "notes/", "# desc:", "2000"):
        assert convention in skill


def test_missing_plugin_dir_is_skipped(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_module, "PLUGIN_DIR", workspace / "nope")
    assert build_options(AgentSpec("n", ""), cwd=workspace).plugins == []


@pytest.mark.timeout(180)
def test_the_plugin_is_found_in_an_installed_wheel(flower_wheel: Path, tmp_path: Path) -> None:
    """Take the wheel as a user gets it, unpack it, import flower from there."""
    site = tmp_path / "site"
    with zipfile.ZipFile(flower_wheel) as zf:
        zf.extractall(site)
    assert (site / "flower" / "_plugin" / "skills" / "workbench" / "SKILL.md").is_file()
    probe = subprocess.run(
        [sys.executable, "-c", "from flower.roles.agent import PLUGIN_DIR; print(PLUGIN_DIR)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert probe.returncode == 0, probe.stderr
    found = Path(probe.stdout.strip())
    assert found == site / "flower" / "_plugin"
    assert (found / ".claude-plugin" / "plugin.json").is_file()


def test_top_level_exports() -> None:
    names = [
        "AgentSpec",
        "build_options",
        "CompactPolicy",
        "HandoffPolicy",
        "default_window",
        "Workbench",
        "whitelist_guard",
        "delegate_guard",
        "spill_guard",
        "index_guard",
        "isolate_guard",
        "isolated",
        "wants_isolation",
        "workbench_hooks",
        "merge_hooks",
        "coordinator",
        "worker",
        "clarify",
        "judge",
        "oracle",
        "COORDINATOR_RULES",
        "WORKER_RULES",
        "CLARIFY_RULES",
        "JUDGE_RULES",
        "ORACLE_RULES",
    ]
    for name in names:
        assert name in flower.__all__ and getattr(flower, name) is not None, name


def test_import_flower_core_agent_stays_light() -> None:
    code = (
        "import sys, flower.roles.agent, flower.records.workbench, flower.roles.guard, "
        "flower.roles.factory, flower_plugins.guards, flower_plugins.roles; "
        "print('claude_agent_sdk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
