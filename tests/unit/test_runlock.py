"""run_dir/run.lock: one flower per run, the refusal names the holder, no stale locks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flower.records.runlock import LOCK_NAME, RunActive, run_lock

HOLD = """
import sys, time
from flower.records.runlock import run_lock
with run_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(120)
"""


def holder(run_dir: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_holder_is_refused_with_who_has_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs"
    proc = holder(run_dir)
    try:
        with pytest.raises(RunActive) as refused, run_lock(run_dir):
            pass
        assert refused.value.holder["pid"] == proc.pid
        message = str(refused.value)
        assert f"pid {proc.pid} on {socket.gethostname()}" in message
        assert "--force" in message and "\n" not in message

        with run_lock(run_dir, force=True) as me:  # the human knows better
            assert me["pid"] == os.getpid()
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs"
    proc = holder(run_dir)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while True:  # the kernel drops the lock with the process
        try:
            with run_lock(run_dir) as me:
                assert me["pid"] == os.getpid()
            break
        except RunActive:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_the_lock_is_free_again_after_the_block(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs"
    with run_lock(run_dir):
        pass
    with run_lock(run_dir):
        assert (run_dir / LOCK_NAME).stat().st_mode & 0o777 == 0o600
