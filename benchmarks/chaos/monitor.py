"""Samples, about two a second, of who drives what: every live ``flower run`` of the harness
(pid -> workspace) and which flower holds each run's Postgres advisory lock (read from
``pg_locks``, the holder named by its connection's ``application_name``). The lock
check compares the two afterwards."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from .procs import flower_runs, processes, run_of

if TYPE_CHECKING:
    from .harness import Chaos

_HOLDERS = (
    "SELECT l.classid::bigint, l.objid::bigint, a.application_name FROM pg_locks l"
    " JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
)


def monitor(chaos: Chaos) -> None:
    import psycopg

    from flower.stores.runlock_pg import lock_key

    conn = None
    try:
        while not chaos.stopping:
            if conn is None or conn.closed:
                conn = psycopg.connect(
                    chaos.admin_url, autocommit=True, application_name="flower-chaos-monitor"
                )
            now = time.time()
            procs = processes()
            runs = flower_runs(procs)
            for pid in runs:
                chaos.started_at.setdefault(pid, procs[pid].started)
            holders: dict[int, int] = {}
            try:
                found_rows = conn.execute(_HOLDERS).fetchall()
            except psycopg.Error:
                conn = None
                continue
            for hi, lo, name in found_rows:
                found = re.match(r"flower pid=(\d+)", name or "")
                if found:
                    key = (hi << 32) | lo
                    key = key - (1 << 64) if key >= 1 << 63 else key
                    holders[key] = int(found.group(1))
            for job, ws in chaos.workspaces.items():
                if job not in chaos.run_ids:
                    run = run_of(ws)
                    if run:
                        chaos.run_ids[job] = run
                        chaos.first_known[job] = now
            keyed = {lock_key(run): run for run in chaos.run_ids.values()}
            by_run = {keyed[k]: pid for k, pid in holders.items() if k in keyed}
            with chaos.lock:
                chaos.samples.append((now, runs, by_run))
            time.sleep(0.4)
    finally:
        if conn is not None:
            conn.close()
