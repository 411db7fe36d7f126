"""One flower per run across machines: a Postgres advisory lock keyed by the run's id.

``runs/run.lock`` (:mod:`flower.records.runlock`) stops a second flower on the same machine.
With the session store in Postgres the same run can also be woken on another machine (its
folder copied there, its transcripts in the shared store); the lock file cannot see that
one. This lock lives in the database both machines use: ``pg_try_advisory_lock`` on a
key derived from the run id, held by one connection for as long as the run goes on, and
dropped by the server when that connection ends (a killed flower leaves nothing behind).

The holder names itself in its connection's ``application_name``
(``flower pid=<pid> host=<host> since=<epoch>``), so the refusal can say who has it.

The lock is only as alive as its connection, and a connection can end under a running
flower (``pg_terminate_backend``, a restarted pooler, a server failover, a network cut):
the server then drops the lock at once and a second flower could take the run while the
first goes on. So while the block runs, a watchdog thread looks at the connection every
few seconds; when it has gone, it connects again and takes the lock back. If another
process has taken it meanwhile, ``on_lost`` is called with the holder: the run must
stop (the chaos harness, benchmarks/chaos, found this: a run driven without its lock).
"""

from __future__ import annotations

import hashlib
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

__all__ = ["CHECK_EVERY", "held_in_postgres", "lock_key"]

_PREFIX = "flower pid="


def lock_key(run_id: str) -> int:
    """The advisory lock's 64-bit key for ``run_id`` (signed, as Postgres wants it)."""
    digest = hashlib.sha256(f"flower-run:{run_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


#: Seconds between two looks at the lock's connection.
CHECK_EVERY = 2.0


@contextmanager
def held_in_postgres(
    url: str,
    run_id: str,
    *,
    on_lost: Callable[[dict[str, Any]], None] | None = None,
    check_every: float = CHECK_EVERY,
) -> Iterator[dict[str, Any] | None]:
    """Hold the run's advisory lock for the block; yields ``None`` when it is held here,
    or the holder (``host``, ``pid``, ``since``) when another connection has it.

    While held, a lost connection is replaced and the lock taken again; ``on_lost`` (from
    the watchdog's thread) is told the new holder when another process got it first."""
    me = {"host": socket.gethostname(), "pid": os.getpid(), "since": int(time.time())}
    name = f"{_PREFIX}{me['pid']} host={me['host']} since={me['since']}"[:63]
    engine = sa.create_engine(
        url,
        poolclass=sa.pool.NullPool,
        connect_args={"application_name": name, "connect_timeout": 10},
    )
    key = lock_key(run_id)
    try:
        conn = engine.connect()
        try:
            got = conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar()
            conn.commit()
            if not got:
                yield _holder(conn, key)
                return
            keeper = _Keeper(engine, conn, key, on_lost, check_every)
            keeper.start()
            try:
                yield None
            finally:
                conn = keeper.stop()
                try:
                    conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                    conn.commit()
                except sa.exc.DBAPIError:
                    pass  # the connection is gone, and the lock with it
        finally:
            conn.close()
    finally:
        engine.dispose()


class _Keeper(threading.Thread):
    """Looks at the lock's connection and takes the lock again on a new connection when
    the old one has ended. It waits on the connection's socket, so a connection the
    server ends (it says so, then closes) is noticed at once; a connection lost without
    a word (a cut cable) is found by the ``SELECT 1`` every ``every`` seconds."""

    def __init__(
        self,
        engine: sa.Engine,
        conn: sa.Connection,
        key: int,
        on_lost: Callable[[dict[str, Any]], None] | None,
        every: float,
    ) -> None:
        super().__init__(name="flower-run-lock", daemon=True)
        self.engine, self.conn, self.key = engine, conn, key
        self.on_lost, self.every = on_lost, every
        self.done = threading.Event()
        self.lost = False
        self._wake_r, self._wake_w = os.pipe()

    def run(self) -> None:
        try:
            while not self.done.is_set():
                self._wait()
                if self.done.is_set():
                    return
                try:
                    self.conn.execute(sa.text("SELECT 1")).scalar()
                    self.conn.commit()
                    continue
                except sa.exc.DBAPIError:
                    pass
                if not self.done.is_set():
                    self._take_again()
        finally:
            os.close(self._wake_r)

    def _wait(self) -> None:
        """Until the server sends something on the idle connection (its goodbye), ``stop``
        is called, or ``every`` seconds pass; never busier than 20 looks a second."""
        started = time.monotonic()
        try:
            raw = self.conn.connection.dbapi_connection
            fd = raw.fileno() if raw is not None else -1
            watched = [self._wake_r, fd] if fd >= 0 else [self._wake_r]
            select.select(watched, [], [], self.every)
        except (OSError, ValueError, AttributeError, sa.exc.DBAPIError):
            self.done.wait(self.every)
        rest = 0.05 - (time.monotonic() - started)
        if rest > 0:
            self.done.wait(rest)

    def _take_again(self) -> None:
        try:
            fresh = self.engine.connect()
        except sa.exc.DBAPIError:
            self.done.wait(self.every)  # the server is unreachable: look again later
            return
        try:
            got = fresh.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": self.key})
            taken = bool(got.scalar())
            fresh.commit()
            holder = {} if taken else _holder(fresh, self.key)
        except sa.exc.DBAPIError:
            fresh.close()
            self.done.wait(self.every)
            return
        old, self.conn = self.conn, fresh
        old.close()
        if not taken and not self.lost:
            self.lost = True
            if self.on_lost is not None:
                self.on_lost(holder)

    def stop(self) -> sa.Connection:
        """Stop looking; the connection the lock is (or was last) held on."""
        self.done.set()
        os.write(self._wake_w, b"x")
        self.join()
        os.close(self._wake_w)
        return self.conn


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
