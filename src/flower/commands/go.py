"""``flower "make X"``: the main job (clarify, set a goal, work until the judge agrees).

A bare ask, flags alone, or nothing at all all mean ``go``. With no ask on a terminal it
asks what to do; in a folder that already has a frozen brief it shows where it would
continue and asks whether to (Enter), what to add (a line), or to start over (``/new``).
Without a terminal the ask is read from standard input, so ``echo "make X" | flower
--timeout 0`` runs unattended.

Exit codes: 0 the goal was met (or the work ended without a goal), 1 the workflow
stopped on a failed step, 2 bad input (a flag, the workspace, credentials), 3 the run's
budget is spent (``--budget``: stopped at a safe point, a higher budget goes on), 4 stuck
(the same checks failed ``--stuck-after`` rounds in a row and nobody said to go on), 130
quit.

Only click is imported at load time: ``flower --help`` must stay light.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from flower.commands import EXIT_BUDGET, EXIT_QUIT, EXIT_USAGE
from flower.commands.asking import ask_too_big, rewound
from flower.commands.options import (
    FORCE_HELP,
    Globals,
    budget_option,
    check_asks,
    check_rounds,
    check_stuck,
    check_timeout,
    check_window,
    sandbox_options,
    with_globals,
)
from flower.commands.words import NEW, whole_ask

if TYPE_CHECKING:
    from flower.commands.options import SandboxChoice
    from flower.runtime.budget import BudgetReached

_ASKS = "Questions the agents may ask: -1 no limit, 0 none."
_ROUNDS = "Total work rounds the judge may ask for."
_STUCK = (
    "Rounds in a row with the same failed checks before the run asks what to do (or stops"
    " with exit 4 when nobody can answer); 0 = never."
)
_NO_GOAL = "No goal and no judge: the work ends when the coordinator says so."
_JUDGE_CAN_RUN = "Let the judge run commands (a harder verdict; in the sandbox it cannot write)."
_TIMEOUT = "Seconds a question waits; 0 = nobody is here, the agents decide and note why."
_ISOLATE = "Each worker task in its own git worktree (needs git with a commit)."
_WINDOW = "Context window in tokens (default: what the CLI reports for the model in use)."
_NO_BEQUEST = "When the run ends, leave CLAUDE.md and AGENTS.md alone (no note for the next tool)."
_NEW = "Do not continue: archive the last brief, goal and lineage, start over."
_RECOVER = (
    "The run's store is gone: carry on from the copy flower kept outside the workspace"
    " (budget, verdicts, frozen documents; the conversations start over)."
)


@click.command(name="go")
@with_globals
@click.argument("ask", nargs=-1, callback=whole_ask)
@click.option("--asks", type=int, default=-1, show_default=True, help=_ASKS)
@click.option("--rounds", type=int, default=3, show_default=True, help=_ROUNDS)
@click.option("--stuck-after", type=int, default=3, show_default=True, help=_STUCK)
@click.option("--no-goal", is_flag=True, help=_NO_GOAL)
@click.option("--judge-can-run", is_flag=True, help=_JUDGE_CAN_RUN)
@click.option("--timeout", type=float, default=1800.0, show_default=True, help=_TIMEOUT)
@click.option("--isolate", is_flag=True, help=_ISOLATE)
@click.option("--window", type=int, default=None, help=_WINDOW)
@click.option("--no-handoff", is_flag=True, help="Never hand a full context to a fresh session.")
@click.option("--new", is_flag=True, help=_NEW)
@click.option("--clarify-only", is_flag=True, help="Only clarify and freeze the brief.")
@click.option("--no-trim", is_flag=True, help="Keep large old tool results whole when resuming.")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@click.option("--no-bequest", is_flag=True, help=_NO_BEQUEST)
@click.option("--recover", is_flag=True, help=_RECOVER)
@budget_option
@sandbox_options
def go(
    ask: tuple[str, ...],
    g: Globals,
    asks: int,
    rounds: int,
    stuck_after: int,
    no_goal: bool,
    judge_can_run: bool,
    timeout: float,
    isolate: bool,
    window: int | None,
    no_handoff: bool,
    new: bool,
    clarify_only: bool,
    no_trim: bool,
    force: bool,
    no_bequest: bool,
    recover: bool,
    budget: float | None,
    sandbox: SandboxChoice,
) -> None:
    """Clarify the request, set a goal with checks, work until an independent judge agrees.

    flower "make X" runs it; flower again in the same folder continues the same
    conversation (Enter), takes a new remark, or /new starts over. While it runs,
    Ctrl-C stops the round at once (the running tool too) and asks what to tell
    the agent: a line continues the same session with it, Enter with nothing added;
    Ctrl-C again quits at once, the step in flight saved for the next flower.
    """  # fmt: skip
    new = new or bool(click.get_current_context().meta.get(NEW))  # the ask was `new`: words.py
    too_big = ask_too_big(" ".join(ask))
    if too_big:
        raise click.UsageError(too_big)
    if g.workbench:
        raise click.UsageError(
            "-W/--workbench is for `once` and `run`: the main job always keeps its workbench"
            " in <workspace>/.flower (or outside the repository with --isolate)"
        )
    if g.trim and no_trim:
        raise click.UsageError("-T/--trim and --no-trim contradict each other: pick one")
    settings = {
        "max_asks": check_asks(asks),
        "rounds": check_rounds(rounds),
        "stuck_after": check_stuck(stuck_after),
        "timeout_s": check_timeout(timeout),
        "goal": not no_goal,
        "judge_can_run": judge_can_run,
        "isolate": isolate,
        "clarify_only": clarify_only,
        "bequest": not no_bequest,
        "budget_usd": budget,
    }
    window = check_window(window)
    from flower.commands.launch import launch_starter
    from flower.runtime.budget import BudgetReached

    try:
        code = launch_starter(
            " ".join(ask).strip(),
            g,
            settings,
            new=new,
            window=window,
            handoff=not no_handoff,
            trim=not no_trim,
            force=force,
            sandbox=sandbox,
            recover=recover,
            rewound=rewound(),
        )
    except BudgetReached as stop:
        code = budget_stopped(stop, g, "flower")
    sys.exit(code)


def budget_stopped(stop: BudgetReached, g: Globals, command: str) -> int:
    """The closing lines of a run its budget stopped, with the command that continues it
    (``command`` plus the folder flags when they are not the defaults); ``EXIT_BUDGET``.

    Printed here, not by the view: the run ended with an exception at a safe point, and
    the line a human needs (how to go on) depends on the command they typed.
    """
    from flower.runtime.budget import money

    flags = ""
    if g.workspace != Path.cwd():
        flags += f" -w {shlex.quote(str(g.workspace))}"
    if g.run_dir != g.workspace / "runs":
        flags += f" -r {shlex.quote(str(g.run_dir))}"
    manifest = g.run_dir / "manifest.json"
    if manifest.is_relative_to(Path.cwd()):
        manifest = manifest.relative_to(Path.cwd())
    click.echo(f"x stopped by the budget: {money(stop.spent)} of {money(stop.cap)} spent")
    click.echo(f"  the step in flight is saved ({manifest}) and goes on where it stopped")
    click.echo(f"  to go on, raise the budget: {command}{flags} --budget {stop.suggested:g}")
    return EXIT_BUDGET


__all__ = ["EXIT_BUDGET", "EXIT_QUIT", "EXIT_USAGE", "budget_stopped", "go"]
