"""``flower rewind``: go back to the start of a round, files and conversation together.

``flower rewind`` lists the run's checkpoints (round, step, time, what the judge said of
that round, how many files differ from now). ``flower rewind N`` (``#K``, a step name)
checkpoints the present, puts the folder back as round N began, leaves the coordinator's
session to be forked at the message round N began from, records the rewind in the
ledger and its notes, asks what to tell the agents (Enter: retry the round as it was),
then goes on as ``flower`` would; go's flags for that run follow ``--`` (``flower rewind
2 -- --timeout 0``). ``--undo`` goes back to where the last rewind started and stops
there; ``--prune`` keeps the newest ``--keep`` checkpoints.

Refusals are one line, exit 2, with nothing changed: another flower holds the run, no
such checkpoint, a corrupt checkpoint, a folder changed since the newest checkpoint
without ``--yes`` where nobody can be asked.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from flower.commands import EXIT_OK, EXIT_USAGE
from flower.commands.asking import REWOUND
from flower.commands.options import Globals, reading_globals

WORDS_PROMPT = "What should the agents be told? (a line; Enter = retry the round as it was)"
_SAY = "The words for the agents (instead of asking; '' = retry the round as it was)."
_KEEP = "With --prune: how many of the newest checkpoints to keep."


@click.command(
    name="rewind", context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@reading_globals
@click.argument("target", required=False)
@click.option("--undo", is_flag=True, help="Go back to where the last rewind started.")
@click.option("--prune", is_flag=True, help="Drop all but the newest checkpoints (--keep).")
@click.option("--keep", type=int, default=10, show_default=True, help=_KEEP)
@click.option("--yes", is_flag=True, help="Overwrite changes made since the newest checkpoint.")
@click.option("--say", default=None, help=_SAY)
@click.option("--no-run", is_flag=True, help="Only go back; `flower` continues from there.")
@click.option("--json", "as_json", is_flag=True, help="List as JSON.")
@click.argument("go_args", nargs=-1, type=click.UNPROCESSED)
def rewind(
    target: str | None,
    undo: bool,
    prune: bool,
    keep: int,
    yes: bool,
    say: str | None,
    no_run: bool,
    as_json: bool,
    go_args: tuple[str, ...],
    g: Globals,
) -> None:
    """Go back to the start of round N: the folder and the conversation as they were."""
    from flower.records.checkpoints import CheckpointError

    if sum(bool(x) for x in (target, undo, prune)) > 1:
        raise click.UsageError("give one of N, --undo or --prune")
    if keep < 1:
        raise click.BadParameter(f"{keep}: keep at least 1 (the present)", param_hint="--keep")
    try:
        store = open_checkpoints(g)
        if not (target or undo or prune):
            return list_checkpoints(store, g, as_json=as_json)
        code = _under_lock(store, g, target, undo=undo, prune=prune, keep=keep, yes=yes, say=say)
    except (CheckpointError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    if code != EXIT_OK or undo or prune or no_run:
        sys.exit(code)
    _go_on(g, go_args)


def open_checkpoints(g: Globals) -> Any:
    """The checkpoints of the run in this folder; ``ValueError`` when there is no run."""
    from flower.records.checkpoints import Checkpoints
    from flower.records.lineage import continuing_run

    run = continuing_run(g.run_dir, g.workspace) if g.run_dir.is_dir() else ""
    if not run:
        raise ValueError(f'no run in {g.workspace} to go back in: flower "make X" starts one')
    return Checkpoints(g.workspace, g.run_dir, run)


def list_checkpoints(store: Any, g: Globals, *, as_json: bool) -> None:
    import json

    from flower.workflow.going_back import rows as checkpoint_rows

    rows = checkpoint_rows(store, g.workspace, g.run_dir)
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        click.echo("no checkpoints yet: one is taken before every step and every round")
        return
    click.echo(f"checkpoints of run {store.run[:8]} ({len(rows)}, {size_text(store.size())}):")
    for row in rows:
        said = f"  judge: {row['judge']}" if row["judge"] else ""
        since = f"  {row['differ']} file(s) differ from now" if row["differ"] else ""
        when = time.strftime("%m-%d %H:%M:%S", time.localtime(row["at"]))
        click.echo(f"  #{row['n']:<3} {row['title']:<22} {when}{said}{since}".rstrip())
    click.echo("flower rewind N goes back to the start of round N (#K: checkpoint K)")


def size_text(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} bytes"


def _under_lock(
    store: Any, g: Globals, target: str | None, *, undo: bool, prune: bool, keep: int,
    yes: bool, say: str | None,
) -> int:  # fmt: skip
    from flower.commands.session import print_error
    from flower.records.runlock import RunActive, run_lock

    try:
        with run_lock(g.run_dir):
            if prune:
                dropped = store.prune(keep)
                click.echo(f"dropped {dropped} checkpoint(s); {size_text(store.size())} kept")
                return EXIT_OK
            return _rewind(store, g, None if undo else target, yes=yes, say=say)
    except RunActive as exc:
        print_error(f"cannot rewind while {str(exc).removeprefix('this run is ')}")
        return EXIT_USAGE


def _rewind(store: Any, g: Globals, target: str | None, *, yes: bool, say: str | None) -> int:
    from flower.commands.session import print_error
    from flower.workflow.going_back import RunRecords, apply, prepare

    interactive = sys.stdin is not None and sys.stdin.isatty()
    plan = prepare(store, target)
    if plan.foreign and not yes:
        named = ", ".join(f"{path} ({_WHAT[s]})" for s, path in plan.foreign[:8])
        more = f" and {len(plan.foreign) - 8} more" if len(plan.foreign) > 8 else ""
        said = (
            f"the folder changed since the newest checkpoint (#{plan.last.n}): {named}{more};"
            " a rewind overwrites that (it is kept in a checkpoint: --undo brings it back)"
        )
        if not interactive:
            print_error(f"{said}: pass --yes to go on")
            return EXIT_USAGE
        click.echo(said)
        if not click.confirm("Rewind anyway?", default=False):
            click.echo("nothing changed")
            return EXIT_OK
    words = say
    if words is None:
        words = "" if target is None or not interactive else click.prompt(
            WORDS_PROMPT, default="", show_default=False
        )  # fmt: skip
    records = RunRecords(g.workspace, g.run_dir, store.run)
    try:
        done = apply(store, plan, records, words.strip())
    finally:
        records.close()
    changes = done["changes"]
    back = sum(1 for s, _ in changes if s != "D")
    gone = sum(1 for s, _ in changes if s == "D")
    click.echo(f"{done['reason']}: {back} file(s) put back, {gone} removed")
    return EXIT_OK


_WHAT = {"A": "added", "D": "deleted", "M": "modified", "T": "type changed"}


def _go_on(g: Globals, go_args: tuple[str, ...]) -> None:
    """The run goes on as ``flower`` would (go's flags from after ``--``)."""
    from flower.commands.go import go

    ctx = click.get_current_context()
    ctx.meta[REWOUND] = True
    args = [*go_args, "-w", str(g.workspace), "-r", str(g.run_dir)]
    with go.make_context("go", args, parent=ctx) as sub:
        go.invoke(sub)


__all__ = ["rewind"]
