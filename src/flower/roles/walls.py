"""Allow-lists in every thread: a role may use the tools it names, and nothing else.

``allowed_tools`` only says which tools run without a permission prompt; the CLI offers
every other tool it has, and it grows a few with every release (in 2.1.332: Workflow,
Skill, ScheduleWakeup, CronCreate, EnterWorktree, ListAgents, SendMessage, Monitor...).
An adversarial review drove each role through the real CLI and found them all usable:
a coordinator's ``CronCreate(durable=true)`` saved a prompt into the workspace for 30
days, the read-only oracle put text into the live coordinator with ``SendMessage``, and a
judge edited the files it judged through a subagent (general-purpose, or a project's
``.claude/agents/*.md`` with ``permissionMode: acceptEdits``), then ruled "achieved".

So flower walls every role in twice, both derived from one :class:`ToolWall`:

1. **The CLI's own tool set** (``ClaudeAgentOptions.tools``, the ``--tools`` flag): only
   the built-in tools some thread of the role may use exist in the session at all
   ("No such tool available: CronCreate. CronCreate is disabled for this session, in
   subagents as well as here"). A tool a new CLI release adds is absent until a role
   names it. MCP tools are not built-ins and are not affected.
2. **A PreToolUse hook** (:func:`tool_wall`) that tells the threads apart, because the
   tool set is session-wide: the coordinator's workers need Write while its main thread
   must not have it. The main thread may use what the role lists; a subagent only what
   its own definition lists, and only if it is one of the role's named workers (hook
   input carries ``agent_type``, measured equal to the ``subagent_type`` that started
   it). ``Agent`` may start only the role's named workers: no fork, no built-in agent
   (general-purpose, claude, Explore, Plan), no project or user agent. The legacy name
   ``Task`` reaches hooks as ``Agent`` (measured), and is mapped here anyway.

The four hands-on tools in the main thread (Bash, Write, Edit, NotebookEdit) are left to
the whitelist and delegate guards, which deny them with their own texts (and let a
coordinator's glances through); one refusal, one text. Everything else the wall answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flower.roles.deny_texts import REFUSAL_MARKS as REFUSAL_MARKS  # re-exported
from flower.roles.deny_texts import dispatch_text as dispatch_text  # re-exported
from flower.roles.deny_texts import missing_text as missing_text  # re-exported
from flower.roles.deny_texts import remote_text as remote_text  # re-exported
from flower.roles.deny_texts import stranger_text as stranger_text  # re-exported

if TYPE_CHECKING:
    from claude_agent_sdk import HookMatcher

    from flower.kernel.agent_spec import AgentSpec

__all__ = [
    "DISPATCH",
    "INFRASTRUCTURE",
    "INHERITED_TOOLS",
    "ToolWall",
    "is_refusal",
    "tool_wall",
    "wall_for",
]

#: The tool that starts a subagent, and the older names the CLI still accepts for it.
DISPATCH = "Agent"
ALIASES: Mapping[str, str] = {"Task": DISPATCH}
#: Tools every thread may use whatever its role lists: ToolSearch only loads the schema
#: of a deferred tool (an MCP ask tool, WebFetch), which the role must list to call.
INFRASTRUCTURE: frozenset[str] = frozenset({"ToolSearch"})
#: What a worker defined with ``tools=None`` ("inherit everything") may use: the working
#: set, never a tool that starts agents, schedules work or leaves the workspace.
INHERITED_TOOLS: tuple[str, ...] = (
    "Read", "Write", "Edit", "NotebookEdit", "Bash", "Glob", "Grep", "WebFetch", "WebSearch",
    "TodoWrite",
)  # fmt: skip
#: Owned in the main thread by the whitelist / delegate guard (their texts, their glances).
HANDS_ON: frozenset[str] = frozenset({"Bash", "Write", "Edit", "NotebookEdit"})
MCP_PREFIX = "mcp__"
#: Why a worker's Bash runs without a prompt (the allow decision's reason).
WORKER_BASH = "the worker's role lists Bash; flower's sandbox bounds what it can reach"


def canonical(tool: str) -> str:
    """The tool's own name for a name the CLI also accepts (``Task`` → ``Agent``)."""
    return ALIASES.get(tool, tool)


def tool_names(entries: Iterable[str]) -> frozenset[str]:
    """Tool names of ``allowed_tools``-style entries: ``"Bash(git:*)"`` counts as Bash."""
    return frozenset(canonical(entry.split("(", 1)[0].strip()) for entry in entries if entry)


def _listed(tool: str, names: frozenset[str]) -> bool:
    """Whether ``names`` grants ``tool``: by name, or an MCP tool by its server's name
    (``"mcp__human"`` grants ``mcp__human__ask``, as the CLI reads ``allowed_tools``)."""
    if tool in names or tool in INFRASTRUCTURE:
        return True
    if tool.startswith(MCP_PREFIX):
        server = tool.split("__", 2)[:2]
        return len(server) == 2 and "__".join(server) in names
    return False


@dataclass(frozen=True)
class ToolWall:
    """Which tools each thread of one role may use.

    Attributes:
        role: The role's name, for the deny texts.
        main: What the main thread may use (``allowed_tools`` names).
        workers: ``agent_type`` -> what that subagent may use; the only agents ``Agent``
            may start.
        hands_on_guarded: Whether the whitelist/delegate guard answers the hands-on tools
            in the main thread (the default assembly); ``False`` makes the wall deny an
            unlisted one itself.
    """

    role: str
    main: frozenset[str]
    workers: Mapping[str, frozenset[str]] = field(default_factory=dict)
    hands_on_guarded: bool = True

    def builtin_tools(self) -> list[str]:
        """The CLI's tool set for the session: every built-in some thread may use.

        Sorted, so the same role gives the same ``--tools`` flag every time.
        """
        every = set(self.main) | INFRASTRUCTURE
        for tools in self.workers.values():
            every |= tools
        return sorted(t for t in every if not t.startswith(MCP_PREFIX))

    def refusal(self, data: Mapping[str, Any]) -> str | None:
        """Why this tool call may not run (a text for the model), or ``None``."""
        tool = canonical(str(data.get("tool_name") or ""))
        if data.get("agent_id"):
            agent_type = str(data.get("agent_type") or "")
            allowed = self.workers.get(agent_type)
            if allowed is None:
                return stranger_text(self.role, agent_type or "?")
            if not _listed(tool, allowed):
                return missing_text(agent_type, tool)
        else:
            if tool in HANDS_ON and self.hands_on_guarded:
                return None
            if not _listed(tool, self.main):
                return missing_text(self.role, tool)
        if tool == DISPATCH:
            return self._dispatch_refusal(data.get("tool_input") or {})
        return None

    def approves(self, data: Mapping[str, Any]) -> bool:
        """Whether this call runs without a permission prompt: a subagent's Bash when its
        definition lists Bash.

        The CLI asks for approval of any Bash command it does not judge harmless
        (``python3 w.py``, ``python3 -m pytest``, ``bash -c …``, anything with a
        variable), and in an unattended run nobody answers, so the command is refused
        ("This command requires approval"). ``allowed_tools`` approves a tool for the
        main thread only when it names it, and naming Bash there would approve the
        coordinator's own Bash too. So the wall answers "allow" for exactly the threads
        whose role lists Bash; what such a command can reach is the sandbox's business
        (:mod:`flower.roles.sandbox`), not a list of harmless commands.
        """
        if not data.get("agent_id") or canonical(str(data.get("tool_name") or "")) != "Bash":
            return False
        allowed = self.workers.get(str(data.get("agent_type") or ""))
        return allowed is not None and "Bash" in allowed

    def _dispatch_refusal(self, tool_input: Mapping[str, Any]) -> str | None:
        wanted = tool_input.get("subagent_type") or "general-purpose"
        if not isinstance(wanted, str) or wanted not in self.workers:
            return dispatch_text(self.role, str(wanted), sorted(self.workers))
        if tool_input.get("isolation") not in (None, "worktree"):
            return remote_text(self.role, str(tool_input.get("isolation")))
        return None


def is_refusal(text: str) -> bool:
    """Whether a tool result is a wall's refusal (the call never ran), in either language."""
    return any(mark in text for mark in REFUSAL_MARKS)


def _worker_tools(definition: Any, inherited: frozenset[str]) -> frozenset[str]:
    """A subagent definition's own list, or the inherited working set for ``tools=None``."""
    listed = getattr(definition, "tools", None)
    tools = tool_names(listed) if listed is not None else inherited
    banned = tool_names(getattr(definition, "disallowedTools", None) or [])
    return tools - banned


def wall_for(spec: AgentSpec) -> ToolWall:
    """The :class:`ToolWall` a spec implies.

    The main thread gets ``allowed_tools``; a ``delegate_only`` spec with ``glance`` also
    needs Bash in the session for its glances (the delegate guard still decides each).
    Each entry of ``spec.agents`` gets its definition's ``tools`` (``None``: the
    :data:`INHERITED_TOOLS` plus the MCP servers the spec allows), minus its
    ``disallowedTools``.
    """
    main = tool_names(spec.allowed_tools)
    if spec.delegate_only and spec.glance:
        main |= {"Bash"}
    inherited = frozenset(INHERITED_TOOLS) | {t for t in main if t.startswith(MCP_PREFIX)}
    workers = {
        name: _worker_tools(definition, inherited)
        for name, definition in (spec.agents or {}).items()
    }
    return ToolWall(role=spec.name or "这个角色", main=main, workers=workers)


def tool_wall(wall: ToolWall) -> HookMatcher:
    """The PreToolUse hook that holds ``wall`` in every thread (matcher: every tool):
    "deny" for what the thread's role does not list, "allow" for a worker's Bash
    (:meth:`ToolWall.approves`), no opinion otherwise."""
    from claude_agent_sdk import HookMatcher

    async def wall_hook(data: Any, tool_use_id: str | None, context: Any) -> Any:
        reason = wall.refusal(data)
        if reason is None and not wall.approves(data):
            return {}
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny" if reason is not None else "allow",
                "permissionDecisionReason": reason if reason is not None else WORKER_BASH,
            }
        }

    return HookMatcher(matcher=None, hooks=[wall_hook])
