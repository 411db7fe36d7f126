"""One run, two machines, one Postgres: the second flower is refused, a local copy is not."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from flower.core.lineage import LINEAGE_NAME
from flower.core.runlock import RunActive, run_lock

pytestmark = pytest.mark.postgres

HOLD = """
import sys, time
from flower.core.runlock import run_lock
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
    with run_lock(two_runs, store_url=pg_url, workspace=two_ws):
        pass  # dropped with the holder's connection


def test_a_copy_on_the_same_machine_forks_and_is_not_locked_out(
    tmp_path: Path, pg_url: str
) -> None:
    one_ws, one_runs = machine(tmp_path / "one", "run-1234")
    copy_ws, copy_runs = machine(tmp_path / "copy", "run-1234", names=one_ws)  # one_ws exists
    with run_lock(one_runs, store_url=pg_url, workspace=one_ws):
        with run_lock(copy_runs, store_url=pg_url, workspace=copy_ws):
            pass
