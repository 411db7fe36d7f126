"""The walls hold against the real CLI, not only in unit tests.

Every test compiles a role with ``build_options`` and drives ``claude_agent_sdk.query``
(the real SDK and the bundled Claude Code CLI) against the scripted model; the guards
arrive through the plugin kernel exactly as the Runtime will get them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AssistantMessage, HookMatcher, ResultMessage, query

from flower.records.workbench import Workbench
from flower.roles.agent import AgentSpec, build_options
from flower.roles.factory import clarify, coordinator, judge, worker
from flower.testing import ScriptedModel, bash, conversation, text, tool

from .conftest import MiniChannel, run_query

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

WHITELIST_MARK = "这是有意为之"
DELEGATE_MARK = "主线程不亲自动手"


def agent_call(role: str, prompt: str = "do the task") -> Any:
    return tool(
        "Agent",
        {
            "description": f"{role} task",
            "prompt": prompt,
            "subagent_type": role,
            "run_in_background": False,
        },
    )


def results_of(model: ScriptedModel, conv: str) -> dict[str, str]:
    """Every tool result the model saw in conversation ``conv`` (the last request holds all)."""
    return model.last(conv).tool_results()


# --- judge -------------------------------------------------------------------------------


def judge_script(ws: Path) -> list[Any]:
    return [
        conversation(
            "main",
            tool("Write", {"file_path": str(ws / "new.txt"), "content": "written by the judge"}),
            tool(
                "Edit",
                {"file_path": str(ws / "kept.txt"), "old_string": "original", "new_string": "new"},
            ),
            bash("echo ran > ran.txt"),
            text("verdict: 未达成"),
        )
    ]


async def test_judge_is_denied_write_edit_and_bash(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    human_channel: MiniChannel,
) -> None:
    (workspace / "kept.txt").write_text("original\n")
    scripted_model.play(judge_script(workspace))
    spec = judge("裁判", human_channel)

    result = await run_query("judge it", build_options(spec, cwd=workspace))

    assert result.subtype == "success"
    assert not (workspace / "new.txt").exists()
    assert (workspace / "kept.txt").read_text() == "original\n"
    assert not (workspace / "ran.txt").exists()
    seen = results_of(scripted_model, "main")
    for call, name in (("0", "Write"), ("1", "Edit"), ("2", "Bash")):
        denial = seen[f"toolu_main_{call}_0"]
        assert f"No such tool available: {name}" in denial, denial  # not even offered
    offered = {t["name"] for t in scripted_model.last("main").body["tools"]}
    assert not offered & {"Write", "Edit", "Bash", "Agent", "Skill", "Workflow"}, offered


async def test_judge_that_can_run_runs_bash_but_still_cannot_write(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    human_channel: MiniChannel,
) -> None:
    (workspace / "kept.txt").write_text("original\n")
    scripted_model.play(judge_script(workspace))
    spec = judge("裁判", human_channel, can_run=True)

    await run_query("judge it", build_options(spec, cwd=workspace))

    assert (workspace / "ran.txt").read_text().strip() == "ran"
    assert not (workspace / "new.txt").exists()
    assert (workspace / "kept.txt").read_text() == "original\n"
    seen = results_of(scripted_model, "main")
    assert "No such tool available: Write" in seen["toolu_main_0_0"]
    assert "No such tool available: Edit" in seen["toolu_main_1_0"]
    assert "No such tool" not in seen["toolu_main_2_0"]


# --- coordinator -------------------------------------------------------------------------

COMMANDS = ("rm victim.txt", "git status", "ls")


async def test_coordinator_main_thread_delegates_but_glances_and_its_worker_works(
    scripted_model: ScriptedModel, claude_env: dict[str, str], git_workspace: Path
) -> None:
    ws = git_workspace
    (ws / "victim.txt").write_text("still here\n")
    scripted_model.play(
        [
            conversation(
                "worker", *(bash(c) for c in COMMANDS), text("worker: done"), subagent=True
            ),
            conversation(
                "main",
                *(bash(c) for c in COMMANDS),
                agent_call("coder"),
                text("all delegated"),
                subagent=False,
            ),
        ]
    )
    spec = coordinator("协调者", "", {"coder": worker("does the work", "work carefully")})
    assert spec.glance is True  # the documented default

    ran_rm: list[bool] = []  # one entry per rm that actually ran: is it the main thread?

    async def victim_state(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if data.get("tool_input", {}).get("command") == "rm victim.txt":
            ran_rm.append(not data.get("agent_id"))
        return {}

    spec.hooks = {"PostToolUse": [HookMatcher(matcher="Bash", hooks=[victim_state])]}
    result = await run_query("clean up", build_options(spec, cwd=ws, workbench=Workbench(ws)))

    assert result.subtype == "success" and result.result == "all delegated"
    main = scripted_model.requests_for("main")[4].tool_results()  # before the Agent call
    assert DELEGATE_MARK in main["toolu_main_0_0"]
    assert "Agent" in main["toolu_main_0_0"] and ".flower/artifacts/" in main["toolu_main_0_0"]
    assert "On branch main" in main["toolu_main_1_0"]
    assert "README.md" in main["toolu_main_2_0"] and "victim.txt" in main["toolu_main_2_0"]
    assert ran_rm == [False], "only the worker's rm runs, never the main thread's"

    worker_seen = results_of(scripted_model, "worker")
    assert all(DELEGATE_MARK not in v for v in worker_seen.values()), worker_seen
    assert "On branch main" in worker_seen["toolu_worker_1_0"]
    assert not (ws / "victim.txt").exists(), "the worker's rm runs"
    assert "victim.txt" not in worker_seen["toolu_worker_2_0"]


async def test_a_glance_runs_even_where_the_cli_would_ask_first(
    scripted_model: ScriptedModel, claude_env: dict[str, str], git_workspace: Path
) -> None:
    """What glance lets through must run: the CLI's own classifier asks before ``awk``
    (read-only, but not on its list), and nobody answers in an autonomous run. The glance
    runs with GLANCE_ENV exported (``git var GIT_PAGER`` shows the pager it got), and a
    refused look (``env``: it prints the API key) says why."""
    looks = ("awk '{print $1}' README.md", "git var GIT_PAGER", "env")
    scripted_model.play([conversation("main", *(bash(c) for c in looks), text("looked"))])
    spec = coordinator("协调者", "", {"coder": worker("d", "p")})

    options = build_options(spec, cwd=git_workspace, workbench=Workbench(git_workspace))
    await run_query("look", options)

    seen = results_of(scripted_model, "main")
    assert seen["toolu_main_0_0"].strip() == "hello", seen["toolu_main_0_0"]
    assert seen["toolu_main_1_0"].strip() == "cat", seen["toolu_main_1_0"]
    refused = seen["toolu_main_2_0"]
    assert "prints the environment" in refused and "sk-ant" not in refused, refused


async def test_coordinator_without_glance_is_denied_even_git_status(
    scripted_model: ScriptedModel, claude_env: dict[str, str], git_workspace: Path
) -> None:
    scripted_model.play([conversation("main", bash("git status"), text("ok"))])
    spec = coordinator("协调者", "", {"coder": worker("d", "p")}, glance=False)

    options = build_options(spec, cwd=git_workspace, workbench=Workbench(git_workspace))
    await run_query("look", options)

    denial = results_of(scripted_model, "main")["toolu_main_0_0"]
    assert DELEGATE_MARK in denial and "可以直接用 Bash" not in denial


async def test_worker_web_tools_are_granted_session_wide_through_the_coordinator(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    # Skip the WebFetch domain preflight (it would call api.anthropic.com); the fetch
    # itself goes to the scripted model on loopback and fails there, after permission.
    (workspace / ".claude").mkdir()
    settings = {"skipWebFetchPreflight": True}
    (workspace / ".claude" / "settings.json").write_text(json.dumps(settings))
    url = scripted_model.base_url + "/page"
    script = [
        conversation(
            "worker",
            tool("WebFetch", {"url": url, "prompt": "summarise"}),
            text("fetched"),
            subagent=True,
        ),
        conversation("main", agent_call("reader"), text("done"), subagent=False),
    ]
    researcher = worker("reads the web", "read it", tools=["Read", "WebFetch"])
    spec = coordinator("协调者", "", {"reader": researcher})
    assert "WebFetch" in spec.allowed_tools and "WebSearch" not in spec.allowed_tools

    scripted_model.play(script)
    await run_query("research", build_options(spec, cwd=workspace))
    granted = results_of(scripted_model, "worker")["toolu_worker_0_0"]

    # The control: the same session without the merge stalls on a permission prompt.
    spec.allowed_tools.remove("WebFetch")
    scripted_model.reset()
    scripted_model.play(script)
    await run_query("research", build_options(spec, cwd=workspace))
    refused = results_of(scripted_model, "worker")["toolu_worker_0_0"]

    assert "haven't granted it yet" in refused
    assert "haven't granted" not in granted and "requested permissions" not in granted


# --- spill -------------------------------------------------------------------------------

# 10,000 characters in 200 lines; Bash output loses a trailing newline, so there is none.
BIG = "\n".join(f"line{i:04d} " + "abcdefghij" * 4 for i in range(200)) + "!"


async def test_a_long_bash_result_reaches_the_model_as_a_pointer_and_spills_intact(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    assert len(BIG) == 10_000
    (workspace / "big.txt").write_text(BIG)
    wb = Workbench(workspace)
    spill = wb.spill / (hashlib.sha256(BIG.encode()).hexdigest()[:16] + ".txt")
    scripted_model.play(
        [
            conversation(
                "main",
                bash("cat big.txt"),
                tool("Read", {"file_path": str(spill)}),
                text("read both"),
            )
        ]
    )
    reads: list[Any] = []

    async def record_read(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        reads.append(data.get("tool_response"))
        return {}

    spec = AgentSpec(
        "工人",
        "work",
        allowed_tools=["Bash", "Read"],
        hooks={"PostToolUse": [HookMatcher(matcher="Read", hooks=[record_read])]},
    )
    await run_query("look at big.txt", build_options(spec, cwd=workspace, workbench=wb))

    seen = results_of(scripted_model, "main")
    pointer = seen["toolu_main_0_0"]
    assert str(spill) in pointer
    # the CLI trims trailing whitespace of a tool result; BIG[:400] ends with a newline
    assert pointer.partition("]\n")[2] == BIG[:400].rstrip("\n")
    assert len(pointer) < 600
    assert spill.read_text() == BIG

    read_back = seen["toolu_main_1_0"]
    assert "全文已存到" not in read_back
    for line in BIG.splitlines():
        assert line in read_back
    assert reads and reads[0]["file"]["content"] == BIG


# --- workbench index ---------------------------------------------------------------------


async def test_a_workers_script_lands_in_the_index_and_the_next_coordinator_prompt(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    wb = Workbench(workspace)
    script_path = wb.scripts / "x.py"
    scripted_model.play(
        [
            conversation(
                "worker",
                tool(
                    "Write",
                    {
                        "file_path": str(script_path),
                        "content": "#!/usr/bin/env python3\n# desc: 数一数日志里的错误\nprint(0)\n",
                    },
                ),
                text("wrote scripts/x.py"),
                subagent=True,
            ),
            conversation("main", agent_call("coder"), text("round one done"), subagent=False),
        ]
    )
    spec = coordinator("协调者", "", {"coder": worker("d", "p")})
    first = build_options(spec, cwd=workspace, workbench=wb)
    assert "scripts/x.py" not in first.system_prompt["append"]  # type: ignore[index]

    await run_query("write a script", first)

    index = wb.index.read_text()
    assert "scripts/x.py — 数一数日志里的错误" in index  # refreshed by index_guard

    scripted_model.reset()
    scripted_model.play([conversation("main", text("I see the script"))])
    await run_query("next round", build_options(spec, cwd=workspace, workbench=wb))
    system = scripted_model.last("main").system_text
    assert "scripts/x.py — 数一数日志里的错误" in system
    assert "工作台" in system and "artifacts/" in system


# --- isolation ---------------------------------------------------------------------------


async def test_an_isolated_worker_runs_in_its_own_worktree_and_a_plain_one_does_not(
    scripted_model: ScriptedModel, claude_env: dict[str, str], git_workspace: Path
) -> None:
    ws = git_workspace
    scripted_model.play(
        [
            conversation("apart", bash("pwd"), text("where I was"), system="TASK-APART"),
            conversation("here", bash("pwd"), text("where I was"), system="TASK-HERE"),
            conversation(
                "main", agent_call("coder"), agent_call("helper"), text("done"), subagent=False
            ),
        ]
    )
    injected: list[Any] = []

    async def see_agent(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        injected.append(dict(data.get("tool_input") or {}))
        return {}

    workers = {"coder": worker("d", "TASK-APART", isolate=True), "helper": worker("d", "TASK-HERE")}
    spec = coordinator("协调者", "", workers)
    spec.hooks = {"PostToolUse": [HookMatcher(matcher="Agent", hooks=[see_agent])]}
    await run_query("isolate", build_options(spec, cwd=ws, workbench=Workbench(ws)))

    apart = results_of(scripted_model, "apart")["toolu_apart_0_0"].strip()
    assert "/.claude/worktrees/agent-" in apart, apart
    assert Path(apart).resolve() != ws.resolve()
    here = results_of(scripted_model, "here")["toolu_here_0_0"].strip()
    assert Path(here).resolve() == ws.resolve()  # a plain worker is not isolated
    assert [call.get("isolation") for call in injected] == ["worktree", None]


async def test_isolation_outside_git_is_refused_before_any_session(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play([conversation("main", agent_call("coder"), text("done"))])
    spec = coordinator("协调者", "", {"coder": worker("d", "p", isolate=True)})

    with pytest.raises(ValueError, match="not in a git repository"):
        build_options(spec, cwd=workspace, workbench=Workbench(workspace))
    assert scripted_model.requests == []


# --- the plugin --------------------------------------------------------------------------


async def test_the_workbench_skill_is_preloaded_into_workers_not_offered_to_the_coordinator(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    """The coordinator has no Skill tool (a skill can fork a hands-on subagent); its own
    prompt carries the workbench conventions, and a disciplined worker gets the skill
    preloaded, which needs no Skill tool."""
    scripted_model.play(
        [
            conversation("worker", text("ok"), subagent=True),
            conversation("main", agent_call("coder"), text("done"), subagent=False),
        ]
    )
    spec = coordinator("协调者", "", {"coder": worker("d", "p")})
    await run_query("hi", build_options(spec, cwd=workspace, workbench=Workbench(workspace)))

    main = scripted_model.last("main")
    assert "Skill" not in {t["name"] for t in main.body["tools"]}
    assert "工作台" in main.system_text and "artifacts/" in main.system_text
    assert "flower:workbench" in scripted_model.last("worker").text()


# --- a role with a channel ---------------------------------------------------------------


async def test_clarify_asks_through_the_channel_and_cannot_write(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
) -> None:
    channel = MiniChannel(answers=["做成命令行工具"])
    scripted_model.play(
        [
            conversation(
                "main",
                tool("mcp__human__ask", {"question": "要做成什么形式?"}),
                tool("Write", {"file_path": str(workspace / "brief.md"), "content": "x"}),
                text("## 目标\n命令行工具\n## 验收标准\n能跑\n## 边界\n无\n## 未知与假设\n无"),
            )
        ]
    )
    spec = clarify("澄清", channel)
    await run_query("帮我做一个 X", build_options(spec, cwd=workspace))

    assert channel.asked == ["要做成什么形式?"]
    seen = results_of(scripted_model, "main")
    assert seen["toolu_main_0_0"] == "做成命令行工具"
    assert "No such tool available: Write" in seen["toolu_main_1_0"]
    assert not (workspace / "brief.md").exists()


# --- resume_at ---------------------------------------------------------------------------


async def test_resume_at_forks_from_an_earlier_message(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path
) -> None:
    scripted_model.play(
        [
            conversation(
                "main",
                text("first: tulip"),
                text("second: rose"),
                text("after the fork"),
            )
        ]
    )
    spec = AgentSpec("a", "", workbench=False)
    first_uuid: list[str] = []
    async for message in query(prompt="prompt-alpha", options=build_options(spec, cwd=workspace)):
        if isinstance(message, AssistantMessage) and message.uuid:
            first_uuid.append(message.uuid)
        if isinstance(message, ResultMessage):
            sid = message.session_id
    await run_query("prompt-beta", build_options(spec, cwd=workspace, resume=sid))

    options = build_options(spec, cwd=workspace, resume=sid, fork=True, resume_at=first_uuid[0])
    result = await run_query("prompt-gamma", options)

    last = scripted_model.last("main")
    assert "first: tulip" in last.text() and "prompt-alpha" in last.text()
    assert "prompt-gamma" in last.text()
    assert "second: rose" not in last.text() and "prompt-beta" not in last.text()
    assert result.session_id != sid
