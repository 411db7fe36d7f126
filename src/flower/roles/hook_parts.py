"""What every guard of :mod:`flower.roles.guard` and its neighbours is built from.

The tool groups the walls name, a hook callback's shape, and the four small verbs of a
PreToolUse answer (deny, decide, wrap a callback in a matcher, read tool names), plus
:func:`is_main_thread`: every guard that only stops the main thread tells it apart here
(a subagent's tool-lifecycle hook input carries ``agent_id``, the main thread's does not).
A module of its own so the guards can live in modules by concern without importing
each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claude_agent_sdk import HookMatcher


HANDS_ON = "Bash|Write|Edit|NotebookEdit"
WRITE_ONLY = "Write|Edit|NotebookEdit"
BULKY = "Bash|Read|Grep|Glob|WebFetch|WebSearch"

ISOLATE_ATTR = "_flower_isolate"

#: A hook callback as the SDK calls it.
HookFn = Callable[[Any, "str | None", Any], Any]


def is_main_thread(data: Mapping[str, Any]) -> bool:
    """True for the session's own thread: subagents' hook input carries ``agent_id``."""
    return not data.get("agent_id")


def deny_call(reason: str) -> dict[str, Any]:
    return decide("deny", reason)


def decide(decision: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def hook_matcher(matcher: str | None, hook: HookFn) -> HookMatcher:
    from claude_agent_sdk import HookMatcher

    return HookMatcher(matcher=matcher, hooks=[hook])


def tool_names(entries: list[str]) -> set[str]:
    """Tool names of ``allowed_tools`` entries (``"Bash(git:*)"`` counts as Bash)."""
    return {entry.split("(", 1)[0].strip() for entry in entries}


def resolve_path(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def from_cwd(path: str, data: Mapping[str, Any]) -> Path:
    candidate = Path(path)
    cwd = data.get("cwd")
    if not candidate.is_absolute() and isinstance(cwd, str) and cwd:
        candidate = Path(cwd) / candidate
    return candidate
