"""``flower diff N``: what round N changed, from the checkpoints.

Round N's change is the difference between the checkpoint taken as it began and the one
taken next (the next round's, the run's end, or a rewind's record of the present); for a
round still open it is the difference with the folder as it is now. The files with how
each changed, a stat, and the whole patch with ``--patch``. Read-only: no model, no
lock, the user's index untouched (the checkpoints' own index is used).
"""

from __future__ import annotations

import click

from flower.commands.options import Globals, reading_globals


@click.command(name="diff")
@reading_globals
@click.argument("target")
@click.option("--patch", "-p", is_flag=True, help="The whole patch, not just the files.")
def diff(target: str, patch: bool, g: Globals) -> None:
    """What round N changed (N, #K for checkpoint K, or a step name)."""
    from flower.commands.rewind import open_checkpoints
    from flower.records.checkpoints import CheckpointError
    from flower.workflow.going_back import find

    try:
        store = open_checkpoints(g)
        every = store.all()
        start = find(every, target)
        later = [c for c in every if c.n > start.n]
        if later:
            end_tree, end_name = later[0].tree, f"#{later[0].n} ({later[0].title()})"
        else:
            end_tree = store.snapshot(start.exclude)[0]
            end_name = "now"
        changes = store.changes(start.tree, end_tree)
        title = f"{start.title()}: checkpoint #{start.n} -> {end_name}"
        click.echo(f"{title}, {len(changes)} file(s) changed")
        if not changes:
            return
        for status, path in changes:
            click.echo(f"  {status} {path}")
        stat = store.git("diff", "--stat", "--no-color", start.tree, end_tree)
        click.echo(stat.decode(errors="replace").rstrip("\n"))
        if patch:
            text = store.git("diff", "--no-color", "--binary", start.tree, end_tree)
            click.echo(text.decode(errors="replace").rstrip("\n"))
    except (CheckpointError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


__all__ = ["diff"]
