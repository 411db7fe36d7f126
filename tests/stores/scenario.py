"""The long session the e2e resume test and the context-economy benchmark share.

One main-thread session, played by the scripted model through the real CLI:
three refused ``rm`` calls (a PreToolUse deny hook), two large Bash outputs, a
read-only ``git status`` repeated over many turns, and a retry storm of 529s at the end
(``CLAUDE_CODE_MAX_RETRIES=2``) that leaves synthetic API-error lines as the leaf.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, SystemMessage, query

from flower.testing import ScriptedModel, Turn, bash, conversation, text

PROMPT = "tidy the build and report the repository state"
RESUME_PROMPT = "continue where you stopped"
DENIED = ("rm -rf build", "rm -rf dist", "rm -rf cache")
LARGE = ("seq 1 3000", "seq 100000 101400")
STATUS = "git status"
STATUS_TIMES = 10
STORM = (529, 529, 529)
MAX_RETRIES = "2"


def turns() -> list[Turn]:
    """Denials and large outputs early, ``git status`` throughout, the storm last."""
    plan: list[Turn] = [bash(DENIED[0]), bash(LARGE[0]), bash(STATUS), bash(DENIED[1])]
    plan += [bash(STATUS), bash(LARGE[1]), bash(STATUS), bash(DENIED[2])]
    plan += [bash(STATUS) for _ in range(STATUS_TIMES - 3)]
    plan.append(text("all tidy", faults=STORM))
    return plan


async def deny_rm(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    if data["tool_input"].get("command", "").startswith("rm "):
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "not on the main thread: dispatch a worker",
            }
        }
    return {}


async def collect(prompt: str, options: ClaudeAgentOptions) -> list[Any]:
    """Every message of one query; an error result (the storm) ends it without raising."""
    messages: list[Any] = []
    try:
        async for message in query(prompt=prompt, options=options):
            messages.append(message)
    except Exception as exc:  # the SDK raises ResultError after the last 529
        messages.append(exc)
    return messages


def session_id(messages: list[Any]) -> str:
    return next(
        m.data["session_id"]
        for m in messages
        if isinstance(m, SystemMessage) and m.subtype == "init"
    )


async def play_long_session(model: ScriptedModel, store: Any, workspace: Path, home: Path) -> str:
    """Run the session into ``store``; returns its id."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    model.play([conversation("main", *turns(), first_user=PROMPT)])
    options = ClaudeAgentOptions(
        cwd=workspace,
        env=model.env(home=home, max_retries=int(MAX_RETRIES)),
        allowed_tools=["Bash"],
        session_store=store,
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny_rm])]},
    )
    return session_id(await collect(PROMPT, options))


async def resume(
    model: ScriptedModel, store: Any, workspace: Path, home: Path, sid: str, *, fork: bool = False
) -> list[Any]:
    """Resume ``sid`` from ``store`` in a fresh ``home`` (nothing of the session on disk)."""
    options = ClaudeAgentOptions(
        cwd=workspace,
        env=model.env(home=home),
        allowed_tools=["Bash"],
        session_store=store,
        resume=sid,
        fork_session=fork,
    )
    return await collect(RESUME_PROMPT, options)
