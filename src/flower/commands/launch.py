"""From parsed flags to a running workflow: the part ``go`` and ``run`` share.

Order matters and is chosen so nothing is spent before everything is known to work:
the terminal and the environment first (``-v`` prints the endpoint), then the Runtime
(which refuses missing credentials; on a terminal that starts ``flower setup``), then
the wake banner and the question of what to do, then the workflow (whose refusals are
one-line errors), and only then the run, inside a block that writes the step in flight
to the manifest on SIGTERM/SIGHUP.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.commands import EXIT_OK, EXIT_QUIT, EXIT_USAGE
from flower.commands.asking import AGAIN, ask_too_big, read_ask
from flower.commands.session import Outcome, Session, print_error

if TYPE_CHECKING:
    from flower.commands.options import Globals, SandboxChoice
    from flower.runtime.runner import Runtime
    from flower.workflow.base import Workflow


def make_view(g: Globals) -> tuple[Any, Any, bool]:
    """The terminal, the renderer the plugins pick, and whether a human can type here."""
    from flower.kernel.terminal import Terminal
    from flower.ui.render import renderer_for

    terminal = Terminal()
    renderer = renderer_for(terminal, verbose=g.verbose)
    interactive = bool(terminal.is_tty and sys.stdin is not None and sys.stdin.isatty())
    return terminal, renderer, interactive


def open_runtime(
    g: Globals,
    terminal: Any,
    interactive: bool,
    *,
    sandbox: SandboxChoice | None = None,
    bash: bool = True,
    **policies: Any,
) -> Runtime | None:
    """The Runtime, or ``None`` after printing why not. Missing credentials on a terminal
    start the interactive setup once, then try again; a setup ended with Ctrl-C exits
    130 at once (setup said it in one line), one that saved no usable key returns
    ``None`` without the long "no credentials" paragraph after setup's own line.

    ``sandbox`` (the command's flags) becomes the Runtime's policy; when the agents will
    have Bash (``bash``), a sandbox this machine cannot start is refused here, in one
    line, before the run folder or the store exists (``roles/sandbox.py``)."""
    from flower.kernel.credentials import MissingCredentials
    from flower.runtime.runner import Runtime

    if sandbox is not None:
        from flower.roles.sandbox import problem

        policy = sandbox.policy()
        why = problem() if bash and policy.enabled else None
        if why:
            print_error(why)
            return None
        policies["sandbox"] = policy
    for attempt in (1, 2):
        try:
            return Runtime(workspace=g.workspace, run_dir=g.run_dir, **policies)
        except RuntimeError as exc:
            if attempt == 1 and interactive and isinstance(exc, MissingCredentials):
                from flower.commands.setup import as_setup_io, setup_flow

                terminal.line("No credentials for the Claude API yet: let's set them up.", "bold")
                done = setup_flow(as_setup_io(terminal))
                if done.cancelled:  # Ctrl-C: setup's own line ("cancelled; ...") is enough
                    sys.exit(EXIT_QUIT)
                if done.usable:
                    continue
                return None  # no key, or one refused: setup's last line said which
            print_error(str(exc))
            return None
        except ValueError as exc:
            print_error(str(exc))
            return None
        except OSError as exc:
            _cannot_start(exc, g)
            return None
    return None


def hold_run(g: Globals, stack: ExitStack, rt: Runtime, *, force: bool) -> bool:
    """Take the run's lock (:mod:`flower.records.runlock`) for the rest of ``stack``; False
    after printing who holds it (or why it cannot be taken)."""
    from flower.records.runlock import RunActive, run_lock

    url = getattr(rt.store, "url", None)
    try:
        stack.enter_context(run_lock(g.run_dir, force=force, store_url=url, workspace=g.workspace))
    except RunActive as exc:
        print_error(str(exc))
        return False
    except OSError as exc:
        _cannot_start(exc, g)
        return False
    return True


def _cannot_start(exc: OSError, g: Globals) -> None:
    """One line for a folder or file flower cannot use (``commands/startup.py``)."""
    from flower.commands.startup import startup_problem

    print_error(startup_problem(exc, g.run_dir))


def launch_starter(
    ask: str,
    g: Globals,
    settings: dict[str, Any],
    *,
    new: bool,
    window: int | None,
    handoff: bool,
    trim: bool,
    force: bool = False,
    sandbox: SandboxChoice | None = None,
    recover: bool = False,
    rewound: bool = False,
) -> int:
    """``flower go``: build the starter flow for ``ask`` and drive it. A run whose store
    is gone stops in one line unless ``recover`` (``records/state_copy.py``); ``rewound``:
    ``flower rewind`` has just asked what to tell the agents, so nothing is asked again."""
    from flower.commands.startup import dead_endpoint, lost_store, unwritable_workspace
    from flower.kernel.agent_spec import HandoffPolicy
    from flower.stores.trim import TrimPolicy

    refusal = unwritable_workspace(g.workspace)  # before the run folder, store and lock
    if refusal is not None:
        print_error(refusal)
        return EXIT_USAGE
    dead = dead_endpoint(g.workspace)  # in seconds, not after the CLI's 3.5 minutes
    if dead is not None:
        print_error(dead)
        return EXIT_USAGE
    lost = None if new else lost_store(g.workspace, g.run_dir, _bench(g, settings))
    if lost is not None and not recover:  # never a silent reset of the budget or ledger
        print_error(lost[1])
        return EXIT_USAGE
    terminal, renderer, interactive = make_view(g)
    _verbose(g, terminal)
    # a window you give is the one planned with (the CLI's report is for a guess only);
    # a small one keeps a quarter free for the handoff instead of the default 50,000
    sized = {"window": window, "headroom": min(50_000, window // 4)} if window else {}
    policy = HandoffPolicy(enabled=handoff, **sized)
    rt = open_runtime(
        g, terminal, interactive, sandbox=sandbox, trim=TrimPolicy(enabled=trim), handoff=policy
    )
    if rt is None:
        return EXIT_USAGE
    with ExitStack() as held:
        if not hold_run(g, held, rt, force=force):
            rt.close()
            return EXIT_USAGE
        if lost is not None:
            from flower.records.state_copy import recover as carry_over
            from flower.records.state_copy import state_path

            put = carry_over(rt.store, lost[0])
            terminal.line(
                f"recovered {put} record(s) of the run from {state_path(lost[0])};"
                " its conversations start over",
                "yellow",
            )
        return _continue_starter(
            ask, g, settings, rt, terminal, renderer, interactive, new=new, rewound=rewound
        )


def _continue_starter(
    ask: str,
    g: Globals,
    settings: dict[str, Any],
    rt: Runtime,
    terminal: Any,
    renderer: Any,
    interactive: bool,
    *,
    new: bool,
    rewound: bool = False,
) -> int:
    """The banner, the question of what to do, the workflow, the run (the lock is held)."""
    from flower.commands.pending import ask_stale
    from flower.records.ledger import goal_met
    from flower.records.outcome import describe as describe_outcome
    from flower.records.outcome import read_outcome
    from flower.records.pending import drop_stale
    from flower.records.runstate import marked_run
    from flower.workflow import starter_flow, wake_state

    try:
        state = wake_state(g.workspace, run_dir=g.run_dir, isolate=settings["isolate"])
        last = read_outcome(g.run_dir)
        # finished: the last run here ended with the goal met, or (runs/ left behind on
        # another machine) the judge's last word in the store's ledger was "achieved";
        # never when a later run here was cut short or stopped
        cut_short = last.get("state") in ("running", "killed", "quit", "stopped")
        run_id = marked_run(Path(state["workbench"]))  # the clone's brief names its run
        met = bool(last.get("met")) or (not last and bool(run_id) and goal_met(rt, run_id))
        finished = state["continuing"] and not cut_short and met
        if state["continuing"] and not new:
            work = state["steps"].get("干活")
            renderer.banner(state, context=rt.context_of(work), workspace=g.workspace)
            if describe_outcome(last):
                terminal.line(f"   {describe_outcome(last)}", "dim")
        if new:  # the conversation that asked is archived: its questions go with it
            drop_stale(g.run_dir)
        elif interactive and not ask_stale(terminal, g.run_dir):
            return EXIT_QUIT
        if rewound:  # `flower rewind` took the words: on as Enter would, finished or not
            finished = False
        elif not ask and not new:
            waking = state["continuing"]
            read = read_ask(terminal, waking=waking, interactive=interactive, finished=finished)
            if read is None:
                return EXIT_QUIT
            ask, new = read
            too_big = ask_too_big(ask)
            if too_big:
                print_error(too_big)
                return EXIT_USAGE
        if finished and ask == AGAIN:  # another round anyway, as Enter would on a wake
            ask = ""
        elif finished and not ask and not new:  # done: nothing is spent without being asked
            terminal.line(finished_hint())
            return EXIT_OK
        elif not ask and new and interactive:
            read = read_ask(terminal, waking=False, interactive=True)
            if read is None:
                return EXIT_QUIT
            ask = read[0]
        try:
            workflow = starter_flow(
                ask, workspace=g.workspace, run_dir=g.run_dir, new=new, **settings
            )
        except ValueError as exc:
            print_error(str(exc))
            return EXIT_USAGE
        except OSError as exc:  # the workbench could not be made (a folder turned read-only)
            why = (exc.strerror or str(exc)).lower()
            print_error(f"cannot write {exc.filename or g.workspace}: {why}; check its permissions")
            return EXIT_USAGE
        return drive(workflow, rt, terminal, renderer, interactive)
    finally:
        rt.close()


def finished_hint() -> str:
    """What to do with a run that finished: in the demo, the demo's own commands (the
    main job's would run in the user's folder with their real credentials)."""
    from flower.ui.render import SIMULATED_ENV

    if os.environ.get(SIMULATED_ENV) == "1":
        return (
            "left as it is: the demo finished last time. flower demo --new plays it again;"
            " /again at its prompt plays one more round."
        )
    return (
        "left as it is: it finished last time. Say what more to do"
        ' (flower "…"), or flower --new for something else.'
    )


def drive(workflow: Workflow, rt: Runtime, terminal: Any, renderer: Any, interactive: bool) -> int:
    """Run ``workflow`` to its end in this terminal; the exit code."""
    session = Session(workflow, rt, terminal, renderer, interactive=interactive)

    async def run_and_collect() -> Outcome:
        try:
            return await session.run()
        finally:
            # A quit can leave a stopped CLI's subprocess transport unreferenced but not yet
            # collected; collected after the loop closes, it prints "Event loop is closed"
            # with a traceback on the way out. Collect it while the loop still runs.
            gc.collect()
            await asyncio.sleep(0)

    with rt.rescue_on_signals():
        outcome = asyncio.run(run_and_collect())
    return outcome.code


def _bench(g: Globals, settings: dict[str, Any]) -> Path:
    """The starter flow's workbench root for these flags (where its run id is)."""
    from flower.workflow import workbench_for

    return workbench_for(g.workspace, isolate=bool(settings.get("isolate"))).root


def _verbose(g: Globals, terminal: Any) -> None:
    if not g.verbose:
        return
    from flower.kernel.credentials import endpoint_lines

    for line in endpoint_lines(g.workspace):
        terminal.line(line, "dim")


__all__ = ["drive", "hold_run", "launch_starter", "make_view", "open_runtime"]
