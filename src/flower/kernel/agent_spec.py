"""What one agent is: its rules, tools, limits and context policies, as plain data.

An :class:`AgentSpec` (with its :class:`CompactPolicy` and :class:`HandoffPolicy`) is what
the role factories return, what the plugin hooks are handed (``flower_guards``,
``flower_role``) and what the guards and walls read. It lives in the kernel so that the
plugin system and every layer can name it without importing its compilation into SDK
options, which needs the guards, the walls and the sandbox
(:func:`flower.roles.agent.build_options`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

#: The CLI flag a sealed spec runs with (``AgentSpec.sealed``): no settings files, file
#: tools confined to the working directories.
SEALED_FLAG = "restricted"
#: The CLI variable that keeps every ``CLAUDE.md`` (and what it imports) out of a session.
SEALED_MEMORY = "CLAUDE_CODE_DISABLE_CLAUDE_MDS"
#: Values ``session_store_flush`` accepts.
FLUSH_MODES = ("eager", "batched")
#: The smallest window the CLI accepts for ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``.
MIN_COMPACT_WINDOW = 100_000
WINDOW_1M = 1_000_000
WINDOW_200K = 200_000
#: Model names whose window is 200k unless tagged ``[1m]``; anything else is guessed 1M.
_SMALL_WINDOW = re.compile(r"haiku|claude-(?:instant|2|3)\b|claude-3-|claude-2\.")
_WINDOW_TAG = re.compile(r"\[(\d+)m\]", re.IGNORECASE)


def default_window() -> int:
    """Guess the context window from ``ANTHROPIC_MODEL`` or ``ANTHROPIC_DEFAULT_OPUS_MODEL``.

    A ``[1m]`` / ``[2m]`` tag is taken at its word; Haiku and the Claude 2/3 families are
    200k; anything else, including no model set, is guessed at 1M. The guess is
    optimistic on purpose: overestimating is not fatal (the API answers "prompt is too
    long", the Runtime recognises it and hands off at once, with a degraded handoff),
    while underestimating would hand off a long-horizon run far too early, every time.
    """
    name = (
        (os.environ.get("ANTHROPIC_MODEL") or os.environ.get("ANTHROPIC_DEFAULT_OPUS_MODEL") or "")
        .strip()
        .lower()
    )
    tag = _WINDOW_TAG.search(name)
    if tag:
        return int(tag.group(1)) * 1_000_000
    if name and _SMALL_WINDOW.search(name):
        return WINDOW_200K
    return WINDOW_1M


@dataclass
class CompactPolicy:
    """The CLI's auto-compact switches, as environment variables for its process.

    The compaction algorithm lives inside the CLI and cannot be changed; flower only
    decides whether and when it fires. flower prefers a handoff (a readable document and
    a fresh session) to compaction, so the Runtime's handoff threshold normally comes
    first; this policy is the backstop.

    Attributes:
        mode: ``"auto"`` leaves auto-compact on (the CLI's default); ``"off"`` sets
            ``DISABLE_AUTO_COMPACT=1`` (a manual ``/compact`` still works).
        window: With ``"auto"``, the window the CLI should compact against
            (``CLAUDE_CODE_AUTO_COMPACT_WINDOW``, at least 100,000); ``None`` keeps the
            CLI's own figure for the model.
    """

    mode: str = "auto"
    window: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "off"):
            raise ValueError(f"CompactPolicy mode must be 'auto' or 'off', not {self.mode!r}")
        if self.window is not None and self.window < MIN_COMPACT_WINDOW:
            raise ValueError(
                f"CompactPolicy window must be at least {MIN_COMPACT_WINDOW:,} tokens"
                f" (the CLI's minimum), not {self.window:,}"
            )

    def env(self) -> dict[str, str]:
        """The variables that make the CLI behave as this policy says."""
        if self.mode == "off":
            return {"DISABLE_AUTO_COMPACT": "1"}
        if self.window is not None:
            return {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(self.window)}
        return {}


class GuessedWindow(int):
    """A context window flower guessed from the model's name, not one it was given.

    The CLI knows the window of the model in use (``get_context_usage()``'s
    ``rawMaxTokens``), and the guess is wrong for some models (measured: CLI 2.1.332
    reports 200,000 for ``claude-opus-4-5`` and ``claude-sonnet-4-5``, which the name
    alone would guess at 1M). A window of this type is replaced by the CLI's figure at
    the start of every session; a plain ``int`` (``HandoffPolicy(window=…)``,
    ``--window``) is the caller's decision and always wins.
    """

    def __repr__(self) -> str:
        return f"GuessedWindow({int(self)})"


#: The window assumed for a guessed model until the CLI reports the real one: the
#: smallest window of a current Claude model, so a handoff comes too early, never too late.
CONSERVATIVE_WINDOW = WINDOW_200K
#: The least a window must leave for work beside the headroom (the CLI's own prompt and
#: tools take about 15,000 tokens before the first word of the task).
MIN_WORKING_ROOM = 20_000


def guessed_window() -> GuessedWindow:
    """:func:`default_window`, marked as a guess the CLI's report replaces."""
    return GuessedWindow(default_window())


@dataclass
class HandoffPolicy:
    """When a full context is handed off to a fresh session instead of compacted.

    Attributes:
        enabled: Hand off at all.
        window: The context window assumed. By default a guess from the model's name
            (:func:`default_window`, marked :class:`GuessedWindow`) that every session
            replaces with the window the CLI reports for the model in use; a window you
            pass is used as it is.
        headroom: Tokens kept free: the handoff round itself needs room to write.
        max_generations: Most handoffs one step may do before it stops with a diagnostic
            (a step that fills a window eight times is going in circles).

    Raises:
        ValueError: An enabled policy whose window leaves less than
            :data:`MIN_WORKING_ROOM` tokens beside its headroom: it would hand off the
            moment a session starts, in a loop (the reference accepted
            ``HandoffPolicy(window=30_000)`` and did exactly that).
    """

    enabled: bool = True
    window: int = field(default_factory=guessed_window)
    headroom: int = 50_000
    max_generations: int = 8

    def __post_init__(self) -> None:
        if self.headroom < 0:
            raise ValueError(f"HandoffPolicy headroom must be 0 or more, not {self.headroom:,}")
        if self.enabled:
            self.check(self.window)

    def check(self, window: int) -> None:
        """Refuse a ``window`` this policy's headroom leaves no room to work in."""
        if window - self.headroom < MIN_WORKING_ROOM:
            raise ValueError(
                f"a context window of {window:,} tokens leaves no room to work: the handoff"
                f" keeps {self.headroom:,} free (headroom), and a session needs at least"
                f" {MIN_WORKING_ROOM:,} more; give a window of at least"
                f" {self.headroom + MIN_WORKING_ROOM:,} or a smaller headroom"
            )

    @property
    def guessed(self) -> bool:
        """Whether :attr:`window` is a guess the CLI's report should replace."""
        return isinstance(self.window, GuessedWindow)

    @property
    def at(self) -> int:
        """Context size that triggers the handoff."""
        return self.at_for(self.window)

    @property
    def warn_at(self) -> int:
        """Context size that announces it (``Event("handoff", phase="near")``)."""
        return self.warn_at_for(self.window)

    def at_for(self, window: int) -> int:
        """The handoff point for a session whose window is ``window``."""
        return max(10_000, window - self.headroom)

    def warn_at_for(self, window: int) -> int:
        """The warning point for a session whose window is ``window``."""
        return max(1_000, self.at_for(window) - 20_000)

    def window_for(self, reported: int | None) -> int:
        """The window to plan a session with: the one given, else the CLI's report, else
        (no report) the smaller of the guess and :data:`CONSERVATIVE_WINDOW`. A report
        that leaves no room beside the headroom keeps the planned figure instead."""
        if not self.guessed:
            return int(self.window)
        if reported and reported - self.headroom >= MIN_WORKING_ROOM:
            return int(reported)
        return min(int(self.window), CONSERVATIVE_WINDOW)


@dataclass
class AgentSpec:
    """Everything about one specialised agent that runs its own session.

    Attributes:
        name: Who this is, for events, the manifest and deny texts; not sent to the CLI.
        instructions: Rules appended to Claude Code's own system prompt.
        allowed_tools: The tools the main thread may use, and nothing else: the CLI
            offers only these built-ins (plus those of the subagents), and the tool
            wall denies the rest in the main thread (:mod:`flower.roles.walls`). They
            also run without a permission prompt, session-wide: a subagent's tools
            need to be here too, or they stall on a prompt nobody answers.
        disallowed_tools: Tools removed from the session. Session-wide as well: never
            use it to stop a coordinator doing the work, it also disarms its workers;
            use ``delegate_only``.
        model, effort, max_turns, max_budget_usd, permission_mode: As the SDK's options.
        agents: Subagents (``AgentDefinition``) the Agent tool may start.
        mcp_servers: MCP servers for the session (a channel's ``ask``/``inbox``).
        hooks: Your own SDK hooks; flower's guards are merged after them.
        compact: Auto-compact switches; ``None`` leaves the CLI's defaults.
        env: Extra environment for the CLI process (wins over ``compact``'s).
        glance: With ``delegate_only``, let the main thread run read-only one-off
            commands (``git status``, ``ls``) itself, exactly those
            :func:`flower.roles.ephemeral.is_ephemeral` accepts.
        workbench: Whether this agent uses the Runtime's workbench (its index in the
            prompt, spilling, the index refresh).
        delegate_only: The main thread may not use Bash/Write/Edit/NotebookEdit: it
            delegates to subagents, which still can.
        read_only: The role changes nothing: its Bash runs in a sandbox whose workspace
            is read-only (a judge allowed to run the checks), :mod:`flower.roles.sandbox`.
        sealed: The role reads no instruction a worker could have written, and nothing
            outside the workspace: the CLI runs it ``--restricted`` (no user, project or
            local settings files, so no project hooks, agents, skills or permission
            rules; Read, Glob and Grep confined to the workspace and ``add_dirs``) with
            ``CLAUDE_CODE_DISABLE_CLAUDE_MDS=1`` (no ``CLAUDE.md``, ``AGENTS.md``,
            ``.claude/rules`` or ``@`` imports) and without flower's plugin. What it
            needs, flower hands it in the prompt. The judge, the clarifier, the oracle
            and the bequest round are sealed; workers keep the project's memory.
    """

    name: str
    instructions: str
    allowed_tools: list[str] = field(default_factory=lambda: ["Read", "Glob", "Grep"])
    disallowed_tools: list[str] = field(default_factory=list)
    model: str | None = None
    effort: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    permission_mode: str = "default"
    agents: dict[str, Any] | None = None
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, Any] | None = None
    compact: CompactPolicy | None = None
    env: dict[str, str] = field(default_factory=dict)
    glance: bool = False
    workbench: bool = True
    delegate_only: bool = False
    read_only: bool = False
    sealed: bool = False
