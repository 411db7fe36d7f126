"""One flower per run across machines: a Postgres advisory lock keyed by the run's id.

``runs/run.lock`` (:mod:`flower.core.runlock`) stops a second flower on the same machine.
With the session store in Postgres the same run can also be woken on another machine (its
folder copied there, its transcripts in the shared store); the lock file cannot see that
one. This lock lives in the database both machines use: ``pg_try_advisory_lock`` on a
key derived from the run id, held by one connection for as long as the run goes on, and
dropped by the server when that connection ends (a killed flower leaves nothing behind).

The holder names itself in its connection's ``application_name``
(``flower pid=<pid> host=<host> since=<epoch>``), so the refusal can say who has it.
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

__all__ = ["held_in_postgres", "lock_key"]

_PREFIX = "flower pid="


def lock_key(run_id: str) -> int:
    """The advisory lock's 64-bit key for ``run_id`` (signed, as Postgres wants it)."""
    digest = hashlib.sha256(f"flower-run:{run_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextmanager
def held_in_postgres(url: str, run_id: str) -> Iterator[dict[str, Any] | None]:
    """Hold the run's advisory lock for the block; yields ``None`` when it is held here,
    or the holder (``host``, ``pid``, ``since``) when another connection has it."""
    me = {"host": socket.gethostname(), "pid": os.getpid(), "since": int(time.time())}
    name = f"{_PREFIX}{me['pid']} host={me['host']} since={me['since']}"[:63]
    engine = sa.create_engine(
        url, poolclass=sa.pool.NullPool, connect_args={"application_name": name}
    )
    key = lock_key(run_id)
    try:
        with engine.connect() as conn:
            got = conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar()
            conn.commit()
            if not got:
                yield _holder(conn, key)
                return
            try:
                yield None
            finally:
                conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                conn.commit()
    finally:
        engine.dispose()


def _holder(conn: sa.Connection, key: int) -> dict[str, Any]:
    """Who holds ``key``: parsed from the holder's ``application_name``."""
    query = sa.text(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted"
        " AND l.classid = :hi AND l.objid = :lo AND l.objsubid = 1"
    )
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    row = conn.execute(query, {"hi": unsigned >> 32, "lo": unsigned & 0xFFFFFFFF}).first()
    holder: dict[str, Any] = {}
    if row and str(row[0]).startswith(_PREFIX):
        for part in str(row[0]).replace(_PREFIX, "pid=", 1).split():
            field, _, value = part.partition("=")
            holder[field] = int(value) if field in ("pid", "since") and value.isdigit() else value
    return holder
