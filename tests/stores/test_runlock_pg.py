"""One run, two machines, one Postgres: the second flower is refused, a local copy is not."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from flower.records.lineage import LINEAGE_NAME
from flower.records.runlock import RunActive, run_lock

pytestmark = pytest.mark.postgres

HOLD = """
import sys, time
from flower.records.runlock import run_lock
with run_lock(sys.argv[1], store_url=sys.argv[2], workspace=sys.argv[3]):
    print("held", flush=True)
    time.sleep(120)
"""


def machine(root: Path, run: str, names: Path | None = None) -> tuple[Path, Path]:
    """A workspace whose lineage names ``names`` (itself by default) and run ``run``."""
    workspace = root / "proj"
    (workspace / "runs").mkdir(parents=True)
    lineage = {"workspace": str(names or workspace), "run": run, "woke": 1, "steps": {}}
    (workspace / "runs" / LINEAGE_NAME).write_text(json.dumps(lineage), encoding="utf-8")
    return workspace, workspace / "runs"


def test_a_second_machine_waking_the_same_run_is_refused_with_who_has_it(
    tmp_path: Path, pg_url: str
) -> None:
    one_ws, one_runs = machine(tmp_path / "one", "run-1234")
    # machine two: the folder rsync'd to another path; the path it names is not there
    two_ws, two_runs = machine(tmp_path / "two", "run-1234", names=tmp_path / "gone" / "proj")
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(one_runs), pg_url, str(one_ws)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with (
            pytest.raises(RunActive) as refused,
            run_lock(two_runs, store_url=pg_url, workspace=two_ws),
        ):
            pass
        assert refused.value.holder["pid"] == proc.pid
        assert f"pid {proc.pid} on {socket.gethostname()}" in str(refused.value)

        with run_lock(two_runs, store_url=pg_url, workspace=two_ws, force=True):
            pass  # the human knows better
        other_ws, other_runs = machine(tmp_path / "three", "run-5678")
        with run_lock(other_runs, store_url=pg_url, workspace=other_ws):
            pass  # another run is another lock
    finally:
        proc.kill()
        proc.wait()
    # dropped with the holder's connection, once the server has seen it close (a loaded
    # server takes a moment to notice a killed client's socket)
    deadline = time.monotonic() + 15
    while True:
        try:
            with run_lock(two_runs, store_url=pg_url, workspace=two_ws):
                break
        except RunActive:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_copy_on_the_same_machine_forks_and_is_not_locked_out(
    tmp_path: Path, pg_url: str
) -> None:
    one_ws, one_runs = machine(tmp_path / "one", "run-1234")
    copy_ws, copy_runs = machine(tmp_path / "copy", "run-1234", names=one_ws)  # one_ws exists
    with run_lock(one_runs, store_url=pg_url, workspace=one_ws):
        with run_lock(copy_runs, store_url=pg_url, workspace=copy_ws):
            pass


def _lock_holders(url: str, run: str) -> list[str]:
    """The ``application_name`` of every connection holding ``run``'s advisory lock."""
    return [name for name, _pid in _lock_backends(url, run)]


def _lock_backends(url: str, run: str) -> list[tuple[str, int]]:
    """(``application_name``, server pid) of every connection holding ``run``'s lock."""
    import psycopg

    from flower.stores.runlock_pg import lock_key
    from flower.stores.url import to_url

    key = lock_key(run) & 0xFFFFFFFFFFFFFFFF
    libpq = to_url(url).replace("postgresql+psycopg://", "postgresql://").split("?")[0]
    with psycopg.connect(libpq, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT a.application_name, a.pid FROM pg_locks l"
            " JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s"
            " AND l.objsubid = 1",
            (key >> 32, key & 0xFFFFFFFF),
        ).fetchall()
    return [(str(name), int(pid)) for name, pid in rows]


def _terminate(url: str, app_name_prefix: str) -> int:
    import psycopg

    from flower.stores.url import to_url

    libpq = to_url(url).replace("postgresql+psycopg://", "postgresql://").split("?")[0]
    with psycopg.connect(libpq, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name LIKE %s AND pid <> pg_backend_pid()",
            (app_name_prefix + "%",),
        ).fetchall()
    return len(rows)


def _wait_for(predicate: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_a_lock_whose_connection_is_killed_is_taken_back(tmp_path: Path, pg_url: str) -> None:
    """pg_terminate_backend on the lock's connection drops the lock on the server; the
    flower still running takes it back (found by benchmarks/chaos: a run driven with no
    lock, so a second machine could have woken it)."""
    run = f"run-{uuid.uuid4().hex[:12]}"
    ws, runs = machine(tmp_path / "one", run)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(runs), pg_url, str(ws)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        mine = f"flower pid={proc.pid} "
        (before,) = [b for n, b in _lock_backends(pg_url, run) if n.startswith(mine)]
        assert _terminate(pg_url, mine) == 1

        def taken_back() -> bool:  # by the same flower, on a new connection
            return any(n.startswith(mine) and b != before for n, b in _lock_backends(pg_url, run))

        assert _wait_for(taken_back, 8)
        assert proc.poll() is None  # and the run goes on
        with pytest.raises(RunActive):  # a second machine is refused again
            two_ws, two_runs = machine(tmp_path / "two", run, names=tmp_path / "gone")
            with run_lock(two_runs, store_url=pg_url, workspace=two_ws):
                pass
    finally:
        proc.kill()
        proc.wait()


def test_a_run_whose_lock_another_flower_took_meanwhile_stops(tmp_path: Path, pg_url: str) -> None:
    """If another flower takes the lock between the connection's end and the take-back,
    the first one stops as SIGTERM stops a run (exit 143 in flower run), with one line."""
    run = f"run-{uuid.uuid4().hex[:12]}"
    ws, runs = machine(tmp_path / "one", run)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(runs), pg_url, str(ws)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        # another flower's connection ends the holder's and queues for the lock in one
        # statement, so it is first in line when the server drops it (the holder takes
        # it back within milliseconds otherwise)
        import psycopg

        from flower.stores.runlock_pg import lock_key
        from flower.stores.url import to_url

        libpq = to_url(pg_url).replace("postgresql+psycopg://", "postgresql://").split("?")[0]
        name = f"flower pid={os.getpid()} host={socket.gethostname()} since=0"
        with psycopg.connect(libpq, autocommit=True, application_name=name) as other:
            other.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name LIKE %s",
                (f"flower pid={proc.pid} %",),
            )
            other.execute("SELECT pg_advisory_lock(%s)", (lock_key(run),))
            assert proc.wait(timeout=10) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert f"taken over by another flower (pid {os.getpid()} on " in err
    assert "Traceback" not in err


def test_a_new_run_is_locked_once_its_id_is_made(tmp_path: Path, pg_url: str) -> None:
    """A new run has no id when its flower starts (the first lineage makes one): it is
    locked in the database as soon as it has one, not only from its second process on."""
    run = f"run-{uuid.uuid4().hex[:12]}"
    workspace = tmp_path / "one" / "proj"
    runs = workspace / "runs"
    runs.mkdir(parents=True)
    mine = f"flower pid={os.getpid()} "
    with run_lock(runs, store_url=pg_url, workspace=workspace):
        assert not _lock_holders(pg_url, run)
        lineage = {"workspace": str(workspace), "run": run, "woke": 1, "steps": {}}
        (runs / LINEAGE_NAME).write_text(json.dumps(lineage), encoding="utf-8")
        assert _wait_for(lambda: any(n.startswith(mine) for n in _lock_holders(pg_url, run)), 5)
        two_ws, two_runs = machine(tmp_path / "two", run, names=tmp_path / "gone")
        with pytest.raises(RunActive), run_lock(two_runs, store_url=pg_url, workspace=two_ws):
            pass  # another machine waking it from the store is refused
    assert not _lock_holders(pg_url, run)  # released with the block
