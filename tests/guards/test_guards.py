"""The guards as functions: every documented default and edge case, hook by hook.

The same hooks are exercised against the real CLI in test_walls_e2e.py; here they are
called the way the SDK calls them, with the hook input the CLI sends.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition, HookMatcher

from flower.records.workbench import Workbench
from flower.roles import ephemeral
from flower.roles.agent import AgentSpec
from flower.roles.guard import (
    BULKY,
    HANDS_ON,
    WRITE_ONLY,
    delegate_guard,
    index_guard,
    isolate_guard,
    isolated,
    merge_hooks,
    spec_guards,
    spill_guard,
    wants_isolation,
    whitelist_guard,
    workbench_hooks,
)
from flower.roles.hook_parts import is_main_thread

pytestmark = pytest.mark.anyio

SUB = {"agent_id": "a1b2", "agent_type": "coder"}


async def call(matcher: HookMatcher, tool: str, tool_input: dict[str, Any], **extra: Any) -> Any:
    """Run a matcher's hooks as the CLI would for one tool call; return the last answer."""
    data = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, **extra}
    answer: Any = None
    for hook in matcher.hooks:
        answer = await hook(data, "toolu_1", {"signal": None})
    return answer


def decision(answer: Any) -> str | None:
    return (answer or {}).get("hookSpecificOutput", {}).get("permissionDecision")


def reason(answer: Any) -> str:
    return answer["hookSpecificOutput"]["permissionDecisionReason"]


def test_tool_groups_are_the_documented_ones() -> None:
    assert HANDS_ON == "Bash|Write|Edit|NotebookEdit"
    assert WRITE_ONLY == "Write|Edit|NotebookEdit"
    assert BULKY == "Bash|Read|Grep|Glob|WebFetch|WebSearch"


def test_main_thread_is_told_apart_by_agent_id() -> None:
    assert is_main_thread({"tool_name": "Bash"})
    assert is_main_thread({"agent_id": ""}) and is_main_thread({"agent_id": None})
    assert not is_main_thread({"agent_id": "abc"})


# --- whitelist ---------------------------------------------------------------------------


def test_whitelist_bans_the_hands_on_tools_not_allowed() -> None:
    m = whitelist_guard(["mcp__human__ask", "Read", "Glob", "Grep"])
    assert m is not None and m.matcher == "Bash|Write|Edit|NotebookEdit"
    m = whitelist_guard(["Read", "Bash"])
    assert m is not None and m.matcher == "Write|Edit|NotebookEdit"
    m = whitelist_guard(["Read", "Bash(git status:*)"])  # a rule for Bash counts as Bash
    assert m is not None and "Bash" not in m.matcher.split("|")


def test_whitelist_has_nothing_to_stop_for_a_full_set_or_no_list() -> None:
    assert whitelist_guard(["Read", "Write", "Edit", "Bash", "NotebookEdit"]) is None
    assert whitelist_guard(None) is None


async def test_whitelist_denies_the_main_thread_only() -> None:
    m = whitelist_guard(["Read"], role="裁判")
    assert m is not None
    denied = await call(m, "Write", {"file_path": "/x", "content": "y"})
    assert decision(denied) == "deny"
    text = reason(denied)
    assert "裁判没有 Write" in text and "有意为之" in text and "回复正文" in text and "绕开" in text
    assert await call(m, "Write", {"file_path": "/x"}, **SUB) == {}
    assert await call(m, "Read", {"file_path": "/x"}) == {}


async def test_whitelist_default_role_word() -> None:
    m = whitelist_guard([])
    assert m is not None
    assert reason(await call(m, "Bash", {"command": "ls"})).startswith("这个角色没有 Bash")


# --- delegate ----------------------------------------------------------------------------


async def test_delegate_denies_hands_on_work_in_the_main_thread() -> None:
    m = delegate_guard()
    assert m.matcher == HANDS_ON
    for tool in ("Bash", "Write", "Edit", "NotebookEdit"):
        answer = await call(m, tool, {"command": "git status", "file_path": "/x"})
        assert decision(answer) == "deny", tool
        text = reason(answer)
        assert "Agent" in text and "验收标准" in text and ".flower/artifacts/" in text
        assert "路径和结论" in text and "可以直接用 Bash" not in text


async def test_delegate_lets_subagents_through() -> None:
    m = delegate_guard(allow_glance=True)
    for tool in ("Bash", "Write", "Edit"):
        assert await call(m, tool, {"command": "rm -rf build"}, **SUB) == {}


async def test_glance_lets_one_off_looks_through_and_nothing_else() -> None:
    m = delegate_guard(allow_glance=True)
    looks = ("git status", "ls", "git log --oneline -5", "cat README.md | head -5", "echo hi")
    for look in looks:
        answer = await call(m, "Bash", {"command": look, "timeout": 5})
        assert decision(answer) == "allow", look
        # it runs with GLANCE_ENV exported, the model's other fields kept
        updated = answer["hookSpecificOutput"]["updatedInput"]
        assert updated["timeout"] == 5 and f"( {look}\n )" in updated["command"]
        ran = subprocess.run(["bash", "-c", updated["command"]], capture_output=True, text=True)
        assert ran.returncode == 0  # always: a failed glance's output still gets redacted
        failed = await call(m, "Bash", {"command": "ls no-such-file"})
        wrapped = failed["hookSpecificOutput"]["updatedInput"]["command"]
        done = subprocess.run(["bash", "-c", wrapped], capture_output=True, text=True)
        assert done.returncode == 0 and "(exit status 2)" in done.stdout, done
        assert "GIT_OPTIONAL_LOCKS=0" in updated["command"].split(";")[0]
        assert "PIP_DISABLE_PIP_VERSION_CHECK=1" in updated["command"].split(";")[0]
    for work in ("rm victim.txt", "pytest", "ls > listing.txt", "echo $(whoami)", "", "env"):
        answer = await call(m, "Bash", {"command": work})
        assert decision(answer) == "deny", work
        assert "可以直接用 Bash" in reason(answer)
        assert "这条命令不算只读查看" in reason(answer), work  # with explain()'s reason
    answer = await call(m, "Bash", {"command": "find . -name x -rm"})
    assert "-rm" in reason(answer), reason(answer)
    assert decision(await call(m, "Write", {"file_path": "/x", "content": "ls"})) == "deny"
    assert decision(await call(m, "Bash", {})) == "deny"


async def test_glance_uses_the_one_is_ephemeral(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the coordinator may run and what expires are one set: the guard must consult
    ``flower.roles.ephemeral.is_ephemeral`` itself, not a copy."""
    asked: list[str] = []

    def only_magic(cmd: str) -> bool:
        asked.append(cmd)
        return cmd == "magic"

    monkeypatch.setattr(ephemeral, "is_ephemeral", only_magic)
    m = delegate_guard(allow_glance=True)
    assert decision(await call(m, "Bash", {"command": "magic"})) == "allow"
    assert decision(await call(m, "Bash", {"command": "git status"})) == "deny"
    assert asked == ["magic", "git status"]


async def test_delegate_custom_tools_and_artifacts() -> None:
    m = delegate_guard(tools="Write", artifacts="/abs/bench/artifacts/")
    assert m.matcher == "Write"
    assert "/abs/bench/artifacts/" in reason(await call(m, "Write", {}))
    assert await call(m, "Bash", {"command": "rm x"}) == {}


# --- spill -------------------------------------------------------------------------------


async def post(
    matcher: HookMatcher, tool: str, response: Any, tool_input: Any = None, **extra: Any
) -> Any:
    data = {
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input or {},
        "tool_response": response,
        **extra,
    }
    return await matcher.hooks[0](data, "toolu_1", {"signal": None})


def updated(answer: Any) -> Any:
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse"
    return out["updatedToolOutput"]


def spilled_path(wb: Workbench, text: str) -> Path:
    return wb.spill / (hashlib.sha256(text.encode()).hexdigest()[:16] + ".txt")


async def test_spill_defaults(workspace: Path) -> None:
    m = spill_guard(Workbench(workspace))
    assert m.matcher == BULKY
    long = "x" * 4000
    assert await post(m, "Bash", {"stdout": long, "stderr": "", "interrupted": False}) == {}
    assert not Workbench(workspace).spill.exists() or not any(Workbench(workspace).spill.iterdir())


async def test_spill_replaces_only_the_long_field_and_keeps_the_structure(workspace: Path) -> None:
    wb = Workbench(workspace)
    m = spill_guard(wb)
    big = "".join(chr(0x4E00 + i % 500) for i in range(10_000))  # non-ASCII on purpose
    response = {"stdout": big, "stderr": "warn", "interrupted": False, "isImage": False}
    out = updated(await post(m, "Bash", response))
    assert set(out) == set(response)
    assert out["stderr"] == "warn" and out["interrupted"] is False and out["isImage"] is False
    path = spilled_path(wb, big)
    assert path.read_text(encoding="utf-8") == big
    assert out["stdout"].startswith(f"[结果太长(10000 字),全文已存到 {path} 。")
    assert out["stdout"].endswith("]\n" + big[:400])
    assert response["stdout"] == big, "the hook input is not mutated"


async def test_spill_reaches_nested_fields_but_never_lists(workspace: Path) -> None:
    wb = Workbench(workspace)
    m = spill_guard(wb, threshold=100)
    long = "y" * 500
    read = {"type": "text", "file": {"filePath": "/w/f.txt", "content": long, "numLines": 1}}
    out = updated(await post(m, "Read", read, {"file_path": "/w/f.txt"}))
    assert out["type"] == "text" and out["file"]["numLines"] == 1
    assert out["file"]["content"].startswith("[结果太长(500 字)")
    blocks = {"content": [{"type": "text", "text": long}], "note": "short"}
    assert await post(m, "WebFetch", blocks) == {}


async def test_spill_of_a_plain_string_result(workspace: Path) -> None:
    m = spill_guard(Workbench(workspace), threshold=10)
    assert updated(await post(m, "WebFetch", "z" * 50)).startswith("[结果太长(50 字)")
    assert await post(m, "WebFetch", None) == {}
    assert await post(m, "Bash", 12345) == {}


async def test_spill_only_for_its_tools_and_main_only(workspace: Path) -> None:
    wb = Workbench(workspace)
    long = {"stdout": "q" * 5000, "stderr": "", "interrupted": False}
    m = spill_guard(wb, tools="Grep")
    assert await post(m, "Bash", long) == {}
    main_only = spill_guard(wb, main_only=True)
    assert await post(main_only, "Bash", long, **SUB) == {}
    assert updated(await post(main_only, "Bash", long))["stdout"].startswith("[结果太长")
    everyone = spill_guard(wb)
    assert updated(await post(everyone, "Bash", long, **SUB))["stdout"].startswith("[结果太长")


async def test_reading_a_spilled_file_passes_untouched(workspace: Path) -> None:
    wb = Workbench(workspace)
    m = spill_guard(wb)
    big = "line\n" * 2000
    await post(m, "Bash", {"stdout": big, "stderr": "", "interrupted": False})
    path = spilled_path(wb, big)
    read = {"type": "text", "file": {"filePath": str(path), "content": big}}
    assert await post(m, "Read", read, {"file_path": str(path)}) == {}
    cat = {"stdout": big, "stderr": "", "interrupted": False}
    assert await post(m, "Bash", cat, {"command": f"cat {path.relative_to(workspace)}"}) == {}
    # the same name elsewhere is no spill file: it is spilled like anything else
    other = workspace / path.name
    other.write_text(big)
    read_other = {"type": "text", "file": {"filePath": str(other), "content": big}}
    assert "updatedToolOutput" in str(await post(m, "Read", read_other, {"file_path": str(other)}))
    # a made-up spill name that does not exist does not open the door
    fake = {"command": "cat .flower/spill/ffffffffffffffff.txt; cat big.log"}
    assert "updatedToolOutput" in str(await post(m, "Bash", cat, fake))


async def test_spilling_the_same_text_twice_writes_once(workspace: Path) -> None:
    wb = Workbench(workspace)
    m = spill_guard(wb, threshold=10)
    text = "same " * 100
    await post(m, "WebFetch", text)
    path = spilled_path(wb, text)
    os.utime(path, (1, 1))
    await post(m, "WebFetch", text)
    assert path.stat().st_mtime == 1
    assert [p.name for p in wb.spill.glob("*.txt")] == [path.name]


async def test_spill_never_fails_the_tool(workspace: Path, tmp_path: Path, capsys: Any) -> None:
    wb = Workbench(workspace)
    wb.root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (wb.root / "spill").symlink_to(outside)
    m = spill_guard(wb, threshold=10)
    assert await post(m, "WebFetch", "w" * 50) == {}
    assert list(outside.iterdir()) == []
    assert "could not spill" in capsys.readouterr().err


# --- index -------------------------------------------------------------------------------


async def test_index_refreshes_for_writes_inside_the_workbench(workspace: Path) -> None:
    wb = Workbench(workspace)
    m = index_guard(wb)
    assert m.matcher == "Write|Edit"
    script = wb.scripts / "x.py"
    script.parent.mkdir(parents=True)
    script.write_text("# desc: 做 x\n")
    assert await post(m, "Write", {}, {"file_path": str(script)}) == {}
    assert "scripts/x.py — 做 x" in wb.index.read_text()


async def test_index_resolves_relative_paths_from_the_call_cwd(workspace: Path) -> None:
    wb = Workbench(workspace)
    m = index_guard(wb)
    (wb.notes).mkdir(parents=True)
    (wb.notes / "n.md").write_text("# 决定\n")
    rel = {"file_path": ".flower/notes/n.md"}
    assert await post(m, "Edit", {}, rel, cwd=str(workspace)) == {}
    assert "notes/n.md" in wb.index.read_text()


async def test_index_never_fails_the_tool(workspace: Path, tmp_path: Path, capsys: Any) -> None:
    """A ``.flower`` replaced by a link out of the workspace is refused by the workbench;
    the Write that landed there still succeeds, with the refusal on stderr."""
    outside = tmp_path / "elsewhere"
    (outside / "notes").mkdir(parents=True)
    (workspace / ".flower").symlink_to(outside)
    wb = Workbench(workspace)
    (outside / "notes" / "n.md").write_text("# n\n")
    m = index_guard(wb)
    answer = await post(m, "Write", {}, {"file_path": str(wb.notes / "n.md")})
    assert answer == {}
    assert "could not refresh" in capsys.readouterr().err
    assert not (outside / "INDEX.md").exists()


async def test_index_ignores_writes_elsewhere(workspace: Path) -> None:
    wb = Workbench(workspace)
    m = index_guard(wb)
    for path in (workspace / "src.py", workspace / ".flower" / ".." / "x.py", "/etc/hosts"):
        assert await post(m, "Write", {}, {"file_path": str(path)}) == {}
    assert await post(m, "Write", {}, {}) == {}
    assert not wb.index.exists()


# --- isolation ---------------------------------------------------------------------------


def test_isolated_marks_without_leaking_into_the_cli() -> None:
    agent = AgentDefinition(description="d", prompt="p")
    assert not wants_isolation(agent) and not wants_isolation(None)
    assert isolated(agent) is agent and wants_isolation(agent)
    assert "_flower_isolate" not in dataclasses.asdict(agent)
    assert not wants_isolation(isolated(agent, False))
    # the documented price: replace() drops the mark
    assert not wants_isolation(dataclasses.replace(isolated(agent)))


async def test_isolate_injects_worktree_for_marked_roles_only() -> None:
    agents = {"coder": isolated(AgentDefinition("d", "p")), "reader": AgentDefinition("d", "p")}
    seen: list[tuple[str, dict[str, Any]]] = []
    m = isolate_guard(agents, on_inject=lambda role, new: seen.append((role, new)))
    assert m.matcher == "Agent"
    task = {"description": "d", "prompt": "p", "subagent_type": "coder"}
    answer = await call(m, "Agent", task)
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow"
    assert out["updatedInput"] == {**task, "isolation": "worktree"}
    assert seen == [("coder", {**task, "isolation": "worktree"})]
    assert "isolation" not in task
    # isolation is the role's property: a model's own cwd or isolation cannot switch it off
    for escape in ({**task, "isolation": None}, {**task, "cwd": "/elsewhere"},
                   {**task, "isolation": "none", "cwd": "."}):  # fmt: skip
        out = (await call(m, "Agent", escape))["hookSpecificOutput"]
        assert out["permissionDecision"] == "allow", escape
        assert out["updatedInput"] == {**task, "isolation": "worktree"}, escape
    for untouched in (
        {**task, "subagent_type": "reader"},
        {**task, "subagent_type": "unknown"},
        {"description": "d", "prompt": "p"},
    ):
        assert await call(m, "Agent", untouched) == {}, untouched
    assert await call(m, "Bash", {"subagent_type": "coder"}) == {}


async def test_isolate_survives_a_failing_reporter(capsys: Any) -> None:
    def boom(role: str, new: dict[str, Any]) -> None:
        raise RuntimeError("reporter down")

    m = isolate_guard({"coder": isolated(AgentDefinition("d", "p"))}, on_inject=boom)
    answer = await call(m, "Agent", {"subagent_type": "coder"})
    assert decision(answer) == "allow"
    assert "reporter down" in capsys.readouterr().err


# --- assembling --------------------------------------------------------------------------


def _kinds(hooks: dict[str, list[HookMatcher]]) -> dict[str, list[str]]:
    return {event: [m.hooks[0].__name__ for m in ms] for event, ms in hooks.items()}


def test_workbench_hooks_defaults(workspace: Path) -> None:
    wb = Workbench(workspace)
    assert _kinds(workbench_hooks(wb)) == {
        "PreToolUse": ["delegate"],
        "PostToolUse": ["index", "spill"],
    }


def test_workbench_hooks_variants(workspace: Path) -> None:
    wb = Workbench(workspace)
    marked = {"coder": isolated(AgentDefinition("d", "p"))}
    plain = {"coder": AgentDefinition("d", "p")}
    assert _kinds(workbench_hooks(wb, agents=marked))["PreToolUse"] == ["delegate", "isolate"]
    assert _kinds(workbench_hooks(wb, agents=plain))["PreToolUse"] == ["delegate"]
    assert _kinds(workbench_hooks(wb, delegate_only=False, spill_threshold=None)) == {
        "PostToolUse": ["index"]
    }
    assert _kinds(workbench_hooks(wb, delegate_only=False, spill_threshold=0)) == {
        "PostToolUse": ["index"]
    }
    assert _kinds(workbench_hooks(wb, delegate_only=False, agents=marked)) == {
        "PreToolUse": ["isolate"],
        "PostToolUse": ["index", "spill"],
    }


async def test_workbench_hooks_pass_glance_threshold_and_the_real_artifacts(
    workspace: Path, tmp_path: Path
) -> None:
    wb = Workbench(workspace, home=tmp_path / "bench")
    hooks = workbench_hooks(wb, allow_glance=True, spill_threshold=10)
    delegate = hooks["PreToolUse"][0]
    assert decision(await call(delegate, "Bash", {"command": "ls"})) == "allow"
    assert f"{tmp_path / 'bench' / 'artifacts'}/" in reason(await call(delegate, "Write", {}))
    spill = hooks["PostToolUse"][1]
    assert "updatedToolOutput" in str(await post(spill, "WebFetch", "a" * 11))


def test_merge_hooks_extends_in_order_and_keeps_duplicates() -> None:
    a, b, c = (HookMatcher(matcher=n) for n in "abc")
    merged = merge_hooks({"PreToolUse": [a]}, None, {}, {"PreToolUse": [b, a], "Stop": [c]})
    assert merged == {"PreToolUse": [a, b, a], "Stop": [c]}
    assert merge_hooks({"PostToolUse": []}) == {}
    assert merge_hooks() == {}
    first = {"PreToolUse": [a]}
    merge_hooks(first, {"PreToolUse": [b]})
    assert first == {"PreToolUse": [a]}, "inputs are not mutated"


def test_spec_guards_for_a_judge_a_coordinator_and_a_worker_like_spec(workspace: Path) -> None:
    wb = Workbench(workspace)
    judge = AgentSpec("裁判", "", allowed_tools=["Read"], workbench=False)
    assert _kinds(spec_guards(judge, None, 4000)) == {
        "PreToolUse": ["wall_hook", "whitelist"],
        "PostToolUse": ["redact_output"],
    }
    coord = AgentSpec("协调者", "", delegate_only=True, glance=True)
    assert _kinds(spec_guards(coord, wb, 4000)) == {
        "PreToolUse": ["wall_hook", "delegate"],
        "PostToolUse": ["index", "spill", "redact_output"],
    }
    full = AgentSpec("w", "", allowed_tools=["Bash", "Write", "Edit", "NotebookEdit", "Read"])
    assert _kinds(spec_guards(full, None, 4000)) == {
        "PreToolUse": ["wall_hook"],
        "PostToolUse": ["redact_output"],
    }
    assert _kinds(spec_guards(full, wb, None)) == {
        "PreToolUse": ["wall_hook"],
        "PostToolUse": ["index", "redact_output"],
    }


def test_spec_guards_keep_the_walls_without_a_workbench() -> None:
    """Deliberate difference from the seed: no workbench must not mean no wall."""
    marked = {"coder": isolated(AgentDefinition("d", "p"))}
    coord = AgentSpec("协调者", "", delegate_only=True, agents=marked)
    assert _kinds(spec_guards(coord, None, 4000)) == {
        "PreToolUse": ["wall_hook", "delegate", "isolate"],
        "PostToolUse": ["redact_output"],
    }


def test_guard_module_does_not_import_the_sdk_at_import_time() -> None:
    # A fresh interpreter: in this one the SDK is long imported, and a top-level
    # `from claude_agent_sdk import HookMatcher` would not show in guard.__dict__ anyway.
    code = (
        "import sys, flower.roles.guard, flower_plugins.guards; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'claude_agent_sdk'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
