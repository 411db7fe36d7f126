"""A refusal leaves nothing behind.

A command that makes the workspace and its run folder on its way to a refusal (an empty
request, an unknown ``--resume`` id, Ctrl-C at the first question) would otherwise leave
an empty ``runs/sessions.db`` and ``run.lock`` in a folder the user never ran anything
in, and the next ``flower`` there greets them as a wake. What this process made is taken
away again, and only that: a run folder that existed before, or one holding anything
beyond the empty store and the lock (a manifest, an outcome, a row in the store), is
left exactly as it is.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import click

from flower.commands import EXIT_QUIT, EXIT_USAGE

#: What opening a run makes before anything has run: the store (SQLite and its side
#: files), the folder's .gitignore, the lock.
EMPTY_RUN = frozenset(
    {"sessions.db", "sessions.db-wal", "sessions.db-shm", "sessions.db-journal", ".gitignore",
     "run.lock"}
)  # fmt: skip
#: The exit codes of a refusal: bad input, and a quit before anything ran.
REFUSALS = (EXIT_USAGE, EXIT_QUIT)
#: The store's own bookkeeping: rows there do not mean anything ran.
BOOKKEEPING = ("flower_schema_version", "alembic_version")


@contextmanager
def nothing_left_on_refusal(
    workspace: Path, run_dir: Path, *, made_workspace: Path | None
) -> Iterator[None]:
    """Run the block; if it ends in a refusal, remove the run folder it made (when that
    holds nothing that ran) and the folders it made for the workspace, up to
    ``made_workspace`` (each only when left empty)."""
    had_run = run_dir.exists()
    try:
        yield
    except SystemExit as exc:
        if exc.code in REFUSALS:
            _tidy(workspace, run_dir, had_run=had_run, made_workspace=made_workspace)
        raise
    except (click.ClickException, click.Abort, KeyboardInterrupt):
        _tidy(workspace, run_dir, had_run=had_run, made_workspace=made_workspace)
        raise


def _tidy(workspace: Path, run_dir: Path, *, had_run: bool, made_workspace: Path | None) -> None:
    if not had_run and ran_nothing(run_dir):
        shutil.rmtree(run_dir, ignore_errors=True)
    if made_workspace is None:
        return
    for folder in (workspace, *workspace.parents):  # up to the topmost one made here
        try:
            folder.rmdir()  # only if empty: anything in it stays
        except OSError:
            return
        if folder == made_workspace:
            return


def ran_nothing(run_dir: Path) -> bool:
    """True when ``run_dir`` holds only what opening a run makes, and its store no row."""
    if not run_dir.is_dir():
        return False
    try:
        names = {entry.name for entry in run_dir.iterdir()}
    except OSError:
        return False
    if not names <= EMPTY_RUN:
        return False
    store = run_dir / "sessions.db"
    if not store.exists():
        return True
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            tables = [
                row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                if table in BOOKKEEPING or table.startswith("sqlite_"):
                    continue
                quoted = table.replace('"', '""')
                if db.execute(f'SELECT 1 FROM "{quoted}" LIMIT 1').fetchone():
                    return False
    except sqlite3.Error:
        return False  # a store it cannot read is not one to delete
    return True


__all__ = ["EMPTY_RUN", "nothing_left_on_refusal", "ran_nothing"]
