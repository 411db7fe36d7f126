"""Isolation: which subagent runs in its own git worktree, and the wall that keeps it there.

:func:`isolated` marks an ``AgentDefinition``; :func:`isolate_guard` injects
``isolation="worktree"`` into the Agent call that starts it (the model cannot be trusted
to pass it); :func:`confine_guard` refuses a write outside its worktree. Split from
:mod:`flower.roles.guard` by concern; the guard module re-exports every public name.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.roles.deny_texts import confined_text
from flower.roles.hook_parts import (
    ISOLATE_ATTR,
    hook_matcher,
)

if TYPE_CHECKING:
    from claude_agent_sdk import AgentDefinition, HookMatcher


# --- isolation ---------------------------------------------------------------------------


def isolated(agent: AgentDefinition, flag: bool = True) -> AgentDefinition:
    """Mark a subagent definition as needing its own git worktree; returns it.

    The mark is a Python-side attribute set with ``object.__setattr__``, not a dataclass
    field: the SDK serialises definitions with ``asdict()``, which sees declared fields
    only, so the mark never reaches the CLI. The price: ``dataclasses.replace()`` on the
    definition drops it and isolation is silently off.
    """
    object.__setattr__(agent, ISOLATE_ATTR, bool(flag))
    return agent


def wants_isolation(agent: AgentDefinition | None) -> bool:
    """Whether ``agent`` was marked with :func:`isolated`."""
    return agent is not None and bool(getattr(agent, ISOLATE_ATTR, False))


def isolate_guard(agents: dict[str, AgentDefinition], *, on_inject: Any = None) -> HookMatcher:
    """Give subagents of isolated roles their own git worktree, always.

    On PreToolUse of ``Agent``: when the role named by ``subagent_type`` is marked
    :func:`isolated`, the call is allowed with ``isolation: "worktree"`` and without a
    ``cwd``. Roles that need no isolation are not touched by a byte.

    Deliberately unlike the reference, which respected a model's own ``cwd`` or
    ``isolation``: ``cwd`` and ``isolation`` exclude each other in the Agent tool, so a
    model that named ``cwd`` (the shared checkout, say) ran an isolated worker straight
    in it. Isolation is the role's property, not the model's choice per call (the tool
    wall refuses ``isolation: "remote"``).

    ``on_inject``, if given, is called as ``on_inject(subagent_type, updated_input)``
    after each injection (to report it); its errors are printed, not raised.
    """

    async def isolate(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if data.get("tool_name") != "Agent":
            return {}
        tool_input = dict(data.get("tool_input") or {})
        role = tool_input.get("subagent_type")
        if not isinstance(role, str) or not wants_isolation(agents.get(role)):
            return {}
        updated = {k: v for k, v in tool_input.items() if k != "cwd"}
        updated["isolation"] = "worktree"
        if on_inject is not None:
            try:
                on_inject(role, updated)
            except Exception as exc:  # reporting must not cost the isolation
                print(f"flower: isolate_guard on_inject failed: {exc!r}", file=sys.stderr)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": updated,
            }
        }

    return hook_matcher("Agent", isolate)


def confine_guard(
    workspace: Path,
    roles: frozenset[str],
    quarantine: Path,
    *,
    on_moved: Callable[[str], None] | None = None,
) -> dict[str, list[HookMatcher]]:
    """Move out what an isolated worker's Bash left at the top of the shared checkout.

    The sandbox mounts every existing entry of the checkout read-only for a session
    whose workers all run in worktrees (:func:`flower.roles.sandbox.checkout_entries`),
    but the checkout's own folder stays writable (the worktrees and ``.git`` are below
    it), so a command could still create a new file or folder there. PreToolUse notes
    the entries before a worker's Bash (``roles``: the isolated ones); PostToolUse moves
    any new one into ``quarantine/<time>/`` (nothing is deleted), tells the model with
    ``additionalContext`` and calls ``on_moved(text)`` (the Runtime records a refusal).
    """
    before: dict[str, set[str]] = {}

    def names() -> set[str]:
        try:
            return {entry.name for entry in os.scandir(workspace)}
        except OSError:
            return set()

    async def note(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if tool_use_id and data.get("agent_id") and data.get("agent_type") in roles:
            before[tool_use_id] = names()
        return {}

    async def sweep(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen = before.pop(tool_use_id, None) if tool_use_id else None
        new = sorted(names() - seen) if seen is not None else []
        if not new:
            return {}
        import shutil
        import time

        place = quarantine / time.strftime("%Y%m%d-%H%M%S")
        moved: list[str] = []
        for name in new:
            try:
                place.mkdir(parents=True, exist_ok=True)
                shutil.move(str(workspace / name), str(place / name))
                moved.append(name)
            except OSError as exc:
                print(f"flower: could not move {workspace / name} out: {exc}", file=sys.stderr)
        text = confined_text(moved or new, str(place), str(data.get("cwd") or ""))
        if on_moved is not None:
            try:
                on_moved(text)
            except Exception as exc:  # reporting must not fail the tool
                print(f"flower: confine_guard on_moved failed: {exc!r}", file=sys.stderr)
        event = str(data.get("hook_event_name") or "PostToolUse")
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}

    return {
        "PreToolUse": [hook_matcher("Bash", note)],
        "PostToolUse": [hook_matcher("Bash", sweep)],
        "PostToolUseFailure": [hook_matcher("Bash", sweep)],
    }
