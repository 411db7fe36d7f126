"""Every hook flower offers to plugins.

flower is a small kernel plus plugins. The kernel calls these hooks; the default
plugins in :mod:`flower_plugins` (``flower.plugins.DEFAULT_PLUGINS``) implement every
hook but ``flower_event`` with ``trylast=True``, so an installed plugin's implementation
runs first (and, for ``firstresult`` hooks, wins by returning anything but ``None``).
Each hook's "Default:" line names the module that implements it.

Write a plugin as a module or class with functions named after these hooks, decorated
with :data:`flower.hookimpl`, and register it through the ``flower`` entry-point group::

    # pyproject.toml of flower-plugin-x
    [project.entry-points.flower]
    x = "flower_plugin_x"

An implementation may accept any subset of a hook's arguments, by name. A function
whose name starts with ``flower_`` but matches no hook here makes flower refuse the
plugin (it is shown as an error in ``flower plugins list``) instead of silently never
calling it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import click
    from claude_agent_sdk.types import HookMatcher, SessionStore

    from flower.kernel.agent_spec import AgentSpec
    from flower.kernel.channel_protocol import Channel
    from flower.kernel.events import Event
    from flower.kernel.terminal import Terminal
    from flower.plugin_types import (
        AuditRequest,
        ErrorClass,
        HandoffDocument,
        HandoffRequest,
        OpenItem,
        RoleFactory,
        SessionRequest,
        StoreSettings,
        View,
        WorkbenchView,
    )

PROJECT = "flower"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# --- storage ---------------------------------------------------------------------------


@hookspec(firstresult=True)
def flower_session_store(settings: StoreSettings) -> SessionStore | None:
    """Build the session store a Runtime mirrors every transcript to.

    Called once per Runtime. The store decides what "resume" feeds back to the model:
    the default returns ``PruningSessionStore(run_dir/"sessions.db", ...)`` with the
    Runtime's policies, so resumes drop retry-storm errors, old denials and stale
    one-off results. A storage plugin returns its own store when ``settings.url``
    names a backend it serves (the bundled Postgres plugin answers
    ``postgresql+psycopg://...``) and ``None`` otherwise.

    :param settings: Where the run lives and which load-time policies apply; see
        :class:`flower.plugin_types.StoreSettings`.
    :return: An object implementing the SDK's ``SessionStore`` protocol, or ``None``
        to let the next implementation decide.

    Stops at the first non-``None`` result (``firstresult``).

    Default: ``flower_plugins.store`` (the pruning SQLite store; it refuses a
    Postgres URL unless the bundled ``flower_plugins.postgres`` entry point is loaded).

    Example::

        @hookimpl
        def flower_session_store(settings):
            if settings.url and settings.url.startswith("redis://"):
                return RedisStore(settings.url)
            return None
    """


# --- resilience ------------------------------------------------------------------------


@hookspec(firstresult=True)
def flower_classify_error(text: str) -> ErrorClass | None:
    """Say whether a failed attempt is worth waiting for.

    The Runtime calls this with the error text of a failed attempt (the SDK's error
    message, the CLI's API error, stderr). ``"transient"`` means wait for the network
    and resume the same session; ``"fatal"`` means stop now (bad credentials, a
    malformed request); ``"unknown"`` is retried only when
    ``Resilience.retry_unknown`` is true. The default checks fatal patterns before
    transient ones, because texts such as a 401 often mention "connection".

    :param text: The error text, possibly several messages joined by newlines.
    :return: ``"transient"``, ``"fatal"``, ``"unknown"``, or ``None`` for no opinion.

    Stops at the first non-``None`` result (``firstresult``).

    Default: ``flower_plugins.resilience`` (fatal patterns, then transient ones).

    Example::

        @hookimpl
        def flower_classify_error(text):
            if "my-gateway: quota exhausted" in text:
                return "fatal"
            return None
    """


# --- handoff ---------------------------------------------------------------------------


@hookspec(firstresult=True)
def flower_handoff_writer(request: HandoffRequest) -> Awaitable[HandoffDocument] | None:
    """Produce the handoff document when a session's context is full.

    Instead of letting the CLI compact the conversation, flower asks the full session to
    write a readable handoff (what it is doing, what was decided, dead ends, what comes
    next, the scene), then starts a fresh session from it. The default runs
    ``HANDOFF_PROMPT`` as one more round of the same session with the budget lifted and
    no UI events, parses it with ``Handoff.parse``, and falls back to ``degraded()``
    when the round fails. The Runtime writes the result to disk and archives older
    documents; the writer only produces it.

    :param request: The Runtime, the spec, the step, the full session's id, the
        original prompt and the context figures; see
        :class:`flower.plugin_types.HandoffRequest`.
    :return: An awaitable resolving to a :class:`flower.records.handoff.Handoff`, or
        ``None`` to let the next implementation decide.

    Stops at the first non-``None`` result (``firstresult``).

    Default: ``flower_plugins.handoff`` (one more round of the full session).

    Example::

        @hookimpl
        def flower_handoff_writer(request):
            async def write():
                return Handoff(doing="...", next="...", step=request.step)
            return write()
    """


@hookspec
def flower_open_items(request: AuditRequest) -> Iterable[OpenItem] | None:
    """Name what is still open when a full session is retired, for the handoff audit.

    A handoff written by the model (or assembled mechanically) can drop something the
    old context held: a check the judge failed, a remark the human queued, a question
    still waiting. Before the session is retired, flower collects the open items from
    every implementation of this hook, checks the document for each (see
    :class:`flower.plugin_types.OpenItem`'s ``needles``) and appends the ones it does
    not mention to a marked section the successor reads.

    :param request: The Runtime, the step, the document, the workflow's ``ctx`` and
        the workspace; see :class:`flower.plugin_types.AuditRequest`.
    :return: :class:`flower.plugin_types.OpenItem` objects, or ``None`` for none.

    All results are collected. An implementation that raises is reported on stderr and
    skipped: the audit must never lose the handoff.

    Default: ``flower_plugins.audit`` (failed checks of the last verdict, undelivered
    inbox mail, pending questions, files changed since the last step, the brief's open
    unknowns).

    Example::

        @hookimpl
        def flower_open_items(request):
            return [OpenItem("ticket", f"ticket {t} is still open", needles=(t,))
                    for t in my_tracker.open_tickets()]
    """


# --- guards ----------------------------------------------------------------------------


@hookspec
def flower_guards(
    spec: AgentSpec,
    workbench: WorkbenchView | None,
    spill_threshold: int | None,
) -> dict[str, list[HookMatcher]] | None:
    """Contribute SDK hook matchers that every session of ``spec`` runs with.

    Guards are the walls a prompt cannot talk its way around: the tool wall that makes
    every thread's tool list exclusive and lets ``Agent`` start only the role's named
    workers, the whitelist and delegate guards for the hands-on tools in the main
    thread, spilling and redaction of results, the workbench index, worktree
    isolation. The default plugin returns that set for the spec
    (``flower.roles.guard.spec_guards``); the delegate and isolate guards stay on even
    without a workbench, so a ``delegate_only`` main thread is never left without a
    wall. A plugin's guard can only narrow: any hook's deny wins. Every implementation's
    result is merged with ``merge_hooks`` (in call order: plugins first, defaults
    last), after ``spec.hooks``.

    :param spec: The agent about to run.
    :param workbench: The Runtime's workbench, or ``None`` when the Runtime has none or
        the spec opts out (``spec.workbench`` false).
    :param spill_threshold: Characters above which a tool result is spilled to disk,
        or ``None`` for no spilling.
    :return: ``{"PreToolUse": [HookMatcher, ...], ...}``, or ``None`` for nothing.

    All results are collected.

    Default: ``flower_plugins.guards`` (the seed's guards for the spec).

    Example::

        @hookimpl
        def flower_guards(spec):
            async def no_curl(data, tool_use_id, context):
                if "curl " in data["tool_input"].get("command", ""):
                    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                            "permissionDecision": "deny",
                            "permissionDecisionReason": "No network from Bash here."}}
                return {}
            return {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_curl])]}
    """


# --- the human -------------------------------------------------------------------------


@hookspec(firstresult=True)
def flower_human_channel(
    log_path: Any,
    amend_path: Any,
    max_asks: int | None,
    timeout_s: float | None,
) -> Channel | None:
    """Build the channel through which agents ask the human and read the inbox.

    The default is :class:`flower.human.channel.HumanChannel`, a channel with no UI of
    its own: it serves the MCP tools ``mcp__human__ask`` and ``mcp__human__inbox``,
    reports every question and remark as ``Event("ask")`` / ``Event("mail")``, and any
    UI (the terminal, a web page, a chat bot) answers through its ``answer``,
    ``decline`` and ``send`` methods, from any thread. Return your own channel when the
    conversation must live elsewhere (a pager, a ticket queue); roles only need the
    small :class:`flower.kernel.channel_protocol.Channel` interface (tool names and MCP servers),
    while the starter flow also calls ``ask`` and ``amend``.

    :param log_path: Where the question-and-answer log goes (``<notes>/问答记录.md``),
        or ``None``.
    :param amend_path: The brief to which the human's later remarks are appended, or
        ``None``.
    :param max_asks: Most questions an agent may ask in one run, ``None`` for no limit.
    :param timeout_s: Seconds to wait for an answer; ``0`` answers "nobody is here"
        at once (unattended runs), ``None`` waits forever.
    :return: A channel, or ``None`` to let the next implementation decide.

    Stops at the first non-``None`` result (``firstresult``).

    Default: ``flower_plugins.human`` (:class:`flower.human.channel.HumanChannel`).

    Example::

        @hookimpl
        def flower_human_channel(log_path, timeout_s):
            return SlackChannel(os.environ["SLACK_WEBHOOK"], log_path=log_path)
    """


# --- roles -----------------------------------------------------------------------------


@hookspec
def flower_roles() -> Iterable[RoleFactory]:
    """Name the roles a plugin can build.

    The default plugin names the five documented roles: ``coordinator``, ``worker``,
    ``clarify``, ``judge`` and ``oracle``. A plugin adds its own (a reviewer, a
    researcher) or replaces one by registering the same name: later registrations win,
    so an installed plugin's role shadows the default.

    :return: :class:`flower.plugin_types.RoleFactory` objects.

    All results are collected.

    Default: ``flower_plugins.roles`` (the five documented roles).

    Example::

        @hookimpl
        def flower_roles():
            return [RoleFactory("reviewer", make_reviewer, returns="agent",
                                description="reads a diff and lists defects")]
    """


# --- observation -----------------------------------------------------------------------


@hookspec
def flower_event(event: Event) -> None:
    """Observe everything flower reports while it works.

    Called for every :class:`flower.kernel.events.Event` (steps, tool calls, retries,
    handoff phases, results), in addition to the ``on_event`` callback of the call that
    caused it. Use it to log, meter or forward progress. An exception raised here is
    reported on stderr and does not stop the run: observing must never break the work.

    :param event: The event.

    All implementations are called; return values are ignored.

    Default: none. Nothing observes events unless a plugin does.

    Example::

        @hookimpl
        def flower_event(event):
            if event.kind == "retry":
                metrics.increment("flower.retries")
    """


@hookspec
def flower_session_scope(session: SessionRequest) -> AbstractContextManager[Any] | None:
    """Wrap one session of the Claude Code CLI: an attempt of a step, or a handoff round.

    No event comes before a session starts: ``prompt`` is emitted once the CLI is up.
    A plugin that must act *before* (make a span the active one, so the SDK passes it
    to the CLI as ``TRACEPARENT``; add variables to the CLI's environment) returns a
    context manager here. The Runtime enters it in the task that starts the CLI, right
    before the SDK spawns the process, and exits it when the session ends: normally,
    with ``session.outcome`` final, or with the exception that ended it (the CLI died,
    the run was cancelled), which the scope sees and must not swallow.

    :param session: Which session; see :class:`flower.plugin_types.SessionRequest`.
        Variables added to ``session.env`` while entering reach the CLI.
    :return: A context manager, or ``None`` to leave this session alone.

    All results are collected and entered in call order. A scope that raises on entry
    or exit is reported on stderr and skipped: observing must never break the work,
    and a scope never changes how the session ended.

    Default: none.

    Example::

        @hookimpl
        def flower_session_scope(session):
            @contextlib.contextmanager
            def timed():
                started = time.monotonic()
                yield
                print(session.step, session.attempt, time.monotonic() - started)
            return timed()
    """


# --- the terminal ----------------------------------------------------------------------


@hookspec(firstresult=True)
def flower_renderer(terminal: Terminal, verbose: bool) -> View | None:
    """Build the run view: what turns events into lines on the terminal.

    ``flower``, ``flower once`` and ``flower run`` show a run through the view this hook
    returns; the default (``flower_plugins.render``) is :class:`flower.ui.render.Renderer`.
    A view is called with every :class:`~flower.kernel.events.Event` of the run and has
    ``banner(state, *, context, workspace)`` and ``closing(*, ok, cost, manifest,
    failed_at, aborted)`` (the :class:`flower.plugin_types.View` protocol). Print only
    through ``terminal.line``: it strips escape sequences from what the model and tools
    said, wraps by display width, keeps the input line alive and holds the lock that
    stops two flower processes from tearing each other's lines.

    :param terminal: The :class:`flower.kernel.terminal.Terminal` of the run.
    :param verbose: ``flower -v``: show prompts, thinking, subagents, every event.
    :return: A view, or ``None`` to let the next implementation decide.

    Stops at the first non-``None`` result (``firstresult``).

    Default: ``flower_plugins.render`` (:class:`flower.ui.render.Renderer`).

    Example::

        @hookimpl
        def flower_renderer(terminal, verbose):
            class Quiet(Renderer):
                def _text(self, payload, step):   # no model prose, just the actions
                    pass
            return Quiet(terminal, verbose=verbose)
    """


# --- the command line ------------------------------------------------------------------


@hookspec
def flower_cli_commands() -> Iterable[click.Command]:
    """Add subcommands to the ``flower`` command.

    Called when the command line is built. Keep the plugin module's import light (import
    heavy libraries inside the command), since ``flower --help`` loads plugins to list
    their commands.

    :return: ``click.Command`` objects; each becomes ``flower <name>``. A name that
        clashes with a built-in command is ignored with a warning.

    All results are collected.

    Default: ``flower_plugins.store`` (``flower db``) and
    ``flower_plugins.scripted_model`` (``flower scripted-model``).

    Example::

        @hookimpl
        def flower_cli_commands():
            @click.command()
            def hello():
                "Say hello."
                click.echo("hello")
            return [hello]
    """
