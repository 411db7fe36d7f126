"""Agent definitions and their compilation into SDK options.

An :class:`AgentSpec` says everything about one specialised agent (rules, tools, limits,
subagents, hooks); :func:`build_options` turns it into the SDK's ``ClaudeAgentOptions``,
adding what flower enforces around every session: the guards (from the plugin kernel),
the workbench's place in the system prompt, flower's Claude Code plugin, the session
store. The role factories return specs; build your own when no role fits.

The SDK is imported lazily, so importing this module (and ``flower``) stays cheap.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeAgentOptions
    from claude_agent_sdk.types import SessionStore

    from flower.records.workbench import Workbench


def _plugin_dir() -> Path:
    """The Claude Code plugin shipped with flower: inside the installed package first
    (a wheel carries ``plugin/`` as ``flower/_plugin``), the checkout's ``plugin/``
    second. Callers check ``is_dir()``: a source tree without it is not an error."""
    package = Path(__file__).resolve().parents[1] / "_plugin"
    if package.is_dir():
        return package
    return Path(__file__).resolve().parents[3] / "plugin"


#: flower's Claude Code plugin (a skill telling subagents the workbench conventions).
PLUGIN_DIR: Path = _plugin_dir()


def plugin_dir(lang: str | None = None) -> Path:
    """The plugin a session gets: ``PLUGIN_DIR``, or its English twin ``PLUGIN_DIR/en``
    (same plugin name, so the skill is ``flower:workbench`` in both) when the language
    (``lang``, else the one in effect) is English and the twin is there."""
    from flower.kernel.lang import EN, current

    english = PLUGIN_DIR / "en"
    return english if (lang or current()) == EN and english.is_dir() else PLUGIN_DIR


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


def build_options(
    spec: AgentSpec,
    *,
    cwd: str | Path | None = None,
    session_store: SessionStore | None = None,
    resume: str | None = None,
    fork: bool = False,
    resume_at: str | None = None,
    use_plugin: bool = True,
    portable: bool = True,
    add_dirs: list[str] | None = None,
    flush: str = "eager",
    prelude: str = "",
    workbench: Workbench | None = None,
    spill_threshold: int | None = 4000,
    protected: Iterable[Path] | None = None,
    sandbox: Mapping[str, Any] | None = None,
) -> ClaudeAgentOptions:
    """Compile ``spec`` into ``ClaudeAgentOptions``; the Runtime calls this for every attempt.

    Mapping (spec field or parameter -> SDK option):

    - ``instructions`` (+ ``prelude`` before it, + the workbench's ``prompt_block()``
      after it) -> ``system_prompt={"type": "preset", "preset": "claude_code",
      "append": ...}``: Claude Code's own prompt stays, flower's rules are added.
    - ``allowed_tools`` and each subagent's ``tools`` -> ``tools`` (the CLI's tool set:
      only the built-in tools some thread of the role may use exist in the session;
      :func:`flower.roles.walls.wall_for`), and ``allowed_tools`` as is.
    - ``allowed_tools``, ``disallowed_tools``, ``model``, ``effort``, ``max_turns``,
      ``max_budget_usd``, ``permission_mode``, ``agents``, ``mcp_servers`` -> the
      options of the same names.
    - ``hooks`` -> ``hooks``, merged (``merge_hooks``) with what every plugin's
      ``flower_guards`` hook contributes for this spec (the defaults: whitelist or
      delegate guard, spill, index, isolation).
    - ``compact.env()`` then ``env`` -> ``env``. ``CLAUDE_CONFIG_DIR`` from the process
      environment is copied in when a session store is given (the SDK mirrors nothing
      to a store unless the variable is in the options' env).
    - ``glance``, ``delegate_only``, ``workbench`` -> which guards are installed.
    - ``name`` -> nothing: it names the agent for flower, not for the CLI.
    - ``cwd`` -> ``cwd``; ``add_dirs`` -> ``add_dirs``; ``session_store`` ->
      ``session_store``; ``flush`` (``"eager"`` / ``"batched"``) ->
      ``session_store_flush``; ``resume`` -> ``resume``; ``fork`` -> ``fork_session``;
      ``resume_at`` (a transcript message uuid) -> ``resume_session_at``.
    - ``use_plugin`` -> ``plugins=[{"type": "local", "path": PLUGIN_DIR}]`` when that
      folder exists (its English twin in English: :func:`plugin_dir`) and the spec is
      not ``sealed``.
    - ``sealed`` -> ``extra_args={"restricted": None}`` and
      ``CLAUDE_CODE_DISABLE_CLAUDE_MDS=1`` in ``env``.
    - ``portable=True`` -> ``setting_sources=["project"]`` and
      ``strict_mcp_config=True``: the run ignores this machine's user and local settings
      (``~/.claude/settings.json``, ``.claude/settings.local.json``: their hooks,
      permissions, model, env) and MCP servers configured outside flower, so the same
      spec behaves the same on any machine. The project's own shared settings and
      ``CLAUDE.md`` travel with the project and still load. ``portable=False`` loads
      everything, as the bare CLI does.

    Keyword-only parameters that extend the documented signature for the Runtime:
    ``workbench`` (used only when ``spec.workbench`` is true), ``spill_threshold``
    (passed to the guards; ``None`` disables spilling), ``protected`` (paths no Write,
    Edit or NotebookEdit of any thread may touch: :func:`flower.roles.guard.state_guard`,
    installed before every other guard, with :func:`flower.roles.guard.reach_guard`, which
    keeps Read, Glob and Grep out of the homes and the system's secrets) and ``sandbox``
    (the CLI's sandbox settings,
    :mod:`flower.roles.sandbox`; the Runtime sets it per session).

    Raises:
        ValueError: ``fork`` or ``resume_at`` without ``resume``; an unknown ``flush``;
            a subagent marked ``isolated()`` while ``cwd`` is not in a git repository or
            the repository has no commit yet (refused here, before a session is paid for,
            rather than by the Agent tool mid-run).
    """
    from claude_agent_sdk import ClaudeAgentOptions

    from flower.plugins import get_plugin_manager
    from flower.roles.guard import merge_hooks, reach_guard, state_guard, wants_isolation
    from flower.roles.walls import wall_for
    from flower.stores.calls import CallLedger, durable_calls
    from flower.stores.transcript import MAX_FRAME_BYTES

    if flush not in FLUSH_MODES:
        raise ValueError(f"flush must be 'eager' or 'batched', not {flush!r}")
    if (fork or resume_at) and not resume:
        raise ValueError("fork and resume_at need resume=<session id> to say what to continue")
    where = Path(cwd).expanduser().absolute() if cwd is not None else Path.cwd()
    isolated_roles = sorted(n for n, a in (spec.agents or {}).items() if wants_isolation(a))
    if isolated_roles:
        why = worktree_problem(where)
        if why:
            raise ValueError(
                f"{', '.join(isolated_roles)} of {spec.name!r} must run isolated in a git"
                f" worktree, but {where} {why}, or drop isolate=True"
            )

    wb = workbench if spec.workbench else None
    append = "\n\n".join(
        part.strip()
        for part in (prelude, spec.instructions, wb.prompt_block() if wb else "")
        if part and part.strip()
    )
    system_prompt: dict[str, Any] = {"type": "preset", "preset": "claude_code"}
    if append:
        system_prompt["append"] = append

    env: dict[str, str] = {}
    if spec.compact is not None:
        env.update(spec.compact.env())
    if spec.sealed:  # no CLAUDE.md, AGENTS.md, rules or @imports: a worker could write them
        env[SEALED_MEMORY] = "1"
    env.update(spec.env)
    if session_store is not None and "CLAUDE_CONFIG_DIR" not in env:
        config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
        if config_dir:
            env["CLAUDE_CONFIG_DIR"] = config_dir

    contributed = get_plugin_manager().hook.flower_guards(
        spec=spec, workbench=wb, spill_threshold=spill_threshold
    )
    hooks = merge_hooks(spec.hooks, *contributed)
    if protected is not None:  # flower's own state and the credentials, whatever plugins add
        from flower.roles.sandbox import read_roots

        seen = {**os.environ, **env}
        hidden, shown = read_roots(where, [Path(d) for d in add_dirs or []], seen)
        keys = _secret_files(where, seen) if spec.sealed else None
        reach = reach_guard(hidden, [*shown, _own_results(where, seen)], secret_files=keys)
        walls = [state_guard(list(protected)), reach]
        hooks = merge_hooks({"PreToolUse": walls}, hooks)
    ledger = getattr(session_store, "calls", None)
    if isinstance(ledger, CallLedger):  # a call is in the store before it runs
        hooks = merge_hooks(durable_calls(ledger), hooks)

    plugins: list[Any] = []
    if use_plugin and not spec.sealed and PLUGIN_DIR.is_dir():
        plugins.append({"type": "local", "path": str(plugin_dir())})

    return ClaudeAgentOptions(
        system_prompt=system_prompt,  # type: ignore[arg-type]
        tools=wall_for(spec).builtin_tools(),
        allowed_tools=list(spec.allowed_tools),
        disallowed_tools=list(spec.disallowed_tools),
        model=spec.model,
        effort=spec.effort,  # type: ignore[arg-type]
        max_turns=spec.max_turns,
        max_budget_usd=spec.max_budget_usd,
        permission_mode=spec.permission_mode,  # type: ignore[arg-type]
        agents=dict(spec.agents) if spec.agents else None,
        mcp_servers=dict(spec.mcp_servers),
        hooks=hooks or None,  # type: ignore[arg-type]
        env=env,
        cwd=str(where),
        add_dirs=[str(d) for d in add_dirs or []],
        session_store=session_store,
        session_store_flush=flush,  # type: ignore[arg-type]
        resume=resume,
        fork_session=fork,
        resume_session_at=resume_at,
        plugins=plugins,
        setting_sources=["project"] if portable else None,
        strict_mcp_config=portable,
        max_buffer_size=MAX_FRAME_BYTES,  # a fork's copy of a big session is one line
        sandbox=dict(sandbox) if sandbox is not None else None,  # type: ignore[arg-type]
        extra_args={SEALED_FLAG: None} if spec.sealed else {},
    )


def _secret_files(workspace: Path, environ: Mapping[str, str]) -> list[Path]:
    """The ``.env`` files flower reads credentials from that exist (the workspace's, the
    current folder's, ``$FLOWER_ENV``, the user config): what a count must not probe."""
    from flower.kernel.env import env_files

    return [path for _label, path in env_files(workspace, environ) if path.is_file()]


def _own_results(workspace: Path, environ: Mapping[str, str]) -> Path:
    """Where the CLI saves this workspace's over-long tool results for the model to Read
    (``<config>/projects/<project key>``): the one place in a hidden home a session may
    read, since its own output is there."""
    from claude_agent_sdk import project_key_for_directory

    config = environ.get("CLAUDE_CONFIG_DIR") or str(Path(environ.get("HOME") or "~") / ".claude")
    return Path(config).expanduser() / "projects" / project_key_for_directory(str(workspace))


def in_git_repo(path: Path) -> bool:
    """Whether ``path`` is inside a git work tree (a ``.git`` folder or file above it)."""
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return True
    return False


def worktree_problem(where: Path) -> str:
    """Why the CLI could not make a worktree from ``where`` ("" when it can).

    A worktree starts from ``HEAD``, so a repository without a commit fails as surely as
    no repository: the Agent call errors mid-run ("Failed to resolve base branch").
    """
    if not in_git_repo(where):
        return "is not in a git repository: run `git init` there and commit once"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            cwd=where,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not be checked with git ({exc})"
    if head.returncode != 0:
        return (
            "has no commit yet for a worktree to start from:"
            " commit once (`git commit --allow-empty -m init`)"
        )
    return ""
