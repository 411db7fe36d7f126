"""Copy sessions from one project key to another, for a workspace that moved.

The SDK keys every stored transcript by a project key derived from the workspace's
absolute path, so ``mv proj proj2`` leaves every session of the run under a key that
``proj2`` never asks for. :func:`copy_sessions` copies them, row for row and in one
transaction, to the new key:

- **copy, not move**: the originals stay under the old key (the folder may come back, or
  a copy of it may still be using them);
- **idempotent**: a session the new key already has is left alone, so two processes
  waking the moved folder at once, or a wake interrupted halfway, copy each session once;
- **everything a resume reads**: the transcript lines in their order, the subagent
  transcripts, the ``meta`` row (write time, context size) and the summary.

It works on the engine itself (an ``INSERT ... SELECT`` per table), so nothing is parsed
or re-encoded and the pruning and trimming a load applies never touch what is copied.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from flower.stores.engine import WRITE
from flower.stores.schema import entries, meta, summaries

__all__ = ["copy_sessions"]


def copy_sessions(engine: Engine, old_project: str, new_project: str, ids: Iterable[str]) -> int:
    """Copy each session in ``ids`` from ``old_project`` to ``new_project``; how many
    were copied (one already under the new key, or absent under the old, counts 0)."""
    if old_project == new_project:
        return 0
    copied = 0
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        for session_id in dict.fromkeys(ids):
            if _has(conn, new_project, session_id) or not _has(conn, old_project, session_id):
                continue
            for table in (meta, summaries, entries):
                _copy_rows(conn, table, old_project, new_project, session_id)
            copied += 1
    return copied


def _has(conn: sa.Connection, project: str, session_id: str) -> bool:
    query = sa.select(meta.c.session_id).where(
        meta.c.project_key == project, meta.c.session_id == session_id, meta.c.subpath == ""
    )
    return conn.execute(query.limit(1)).first() is not None


def _copy_rows(
    conn: sa.Connection, table: sa.Table, old_project: str, new_project: str, session_id: str
) -> None:
    columns = [c for c in table.c if c.name != "id"]  # entries' id is the new rows' own
    picked = [
        sa.literal(new_project, sa.String).label(c.name) if c.name == "project_key" else c
        for c in columns
    ]
    source = sa.select(*picked).where(
        table.c.project_key == old_project, table.c.session_id == session_id
    )
    if "id" in table.c:
        source = source.order_by(table.c.id)  # append order is the transcript's order
    conn.execute(table.insert().from_select([c.name for c in columns], source))
