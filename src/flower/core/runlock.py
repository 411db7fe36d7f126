"""One flower at a time per run: the second one says who has it and stops.

Two ``flower`` processes continuing the same run would both resume the same sessions and
interleave two conversations in one transcript. ``run_dir/run.lock`` is held with
``flock`` for as long as a run goes on; the kernel drops it when the process ends, however
it ends (a ``kill -9`` or a power cut leaves no stale lock behind). The file says who
holds it (host, pid, since when), so the refusal can name them.

``force=True`` goes on without the lock (the human knows the other one is gone or means
to run both); the file then names the newcomer.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["LOCK_NAME", "RunActive", "holder_of", "run_lock"]

LOCK_NAME = "run.lock"


class RunActive(RuntimeError):
    """Another process holds the run; ``holder`` is what it wrote (host, pid, since)."""

    def __init__(self, run_dir: Path, holder: dict[str, Any]) -> None:
        self.holder = holder
        who = f"pid {holder.get('pid', '?')} on {holder.get('host', 'an unknown host')}"
        since = holder.get("since")
        when = f", since {time.strftime('%Y-%m-%d %H:%M', time.localtime(since))}" if since else ""
        super().__init__(
            f"this run is active in another flower ({who}{when}; {run_dir / LOCK_NAME}):"
            " wait for it to finish, or pass --force to run anyway"
        )


@contextmanager
def run_lock(run_dir: str | Path, *, force: bool = False) -> Iterator[dict[str, Any]]:
    """Hold ``run_dir``'s lock for the block; yields what the file now says.

    Raises :class:`RunActive` when another process holds it (unless ``force``), and
    ``OSError`` when the run directory cannot be written.
    """
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except BlockingIOError:
            if not force:
                raise RunActive(folder, _holder(fd)) from None
            held = False
        me = {"host": socket.gethostname(), "pid": os.getpid(), "since": int(time.time())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        try:
            yield me
        finally:
            if held:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def holder_of(run_dir: str | Path) -> dict[str, Any] | None:
    """Who holds ``run_dir``'s run now (host, pid, since), or ``None`` when nobody does.

    Read-only: it never creates the lock file or the folder (``flower status`` uses it).
    """
    path = Path(run_dir) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _holder(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
