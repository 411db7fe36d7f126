"""Agent definitions and their compilation into SDK options.

An :class:`AgentSpec` (:mod:`flower.kernel.agent_spec`, re-exported here) says everything
about one specialised agent (rules, tools, limits, subagents, hooks); :func:`build_options`
turns it into the SDK's ``ClaudeAgentOptions``,
adding what flower enforces around every session: the guards (from the plugin kernel),
the workbench's place in the system prompt, flower's Claude Code plugin, the session
store. The role factories return specs; build your own when no role fits.

The SDK is imported lazily, so importing this module (and ``flower``) stays cheap.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.agent_spec import CONSERVATIVE_WINDOW as CONSERVATIVE_WINDOW  # re-exported
from flower.kernel.agent_spec import FLUSH_MODES as FLUSH_MODES  # re-exported
from flower.kernel.agent_spec import MIN_COMPACT_WINDOW as MIN_COMPACT_WINDOW  # re-exported
from flower.kernel.agent_spec import MIN_WORKING_ROOM as MIN_WORKING_ROOM  # re-exported
from flower.kernel.agent_spec import SEALED_FLAG as SEALED_FLAG  # re-exported
from flower.kernel.agent_spec import SEALED_MEMORY as SEALED_MEMORY  # re-exported
from flower.kernel.agent_spec import WINDOW_1M as WINDOW_1M  # re-exported
from flower.kernel.agent_spec import WINDOW_200K as WINDOW_200K  # re-exported
from flower.kernel.agent_spec import AgentSpec as AgentSpec  # re-exported
from flower.kernel.agent_spec import CompactPolicy as CompactPolicy  # re-exported
from flower.kernel.agent_spec import GuessedWindow as GuessedWindow  # re-exported
from flower.kernel.agent_spec import HandoffPolicy as HandoffPolicy  # re-exported
from flower.kernel.agent_spec import default_window as default_window  # re-exported
from flower.kernel.agent_spec import guessed_window as guessed_window  # re-exported

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
