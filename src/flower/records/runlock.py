"""One flower at a time per run: the second one says who has it and stops.

Two ``flower`` processes continuing the same run would both resume the same sessions and
interleave two conversations in one transcript. ``run_dir/run.lock`` is held with
``flock`` for as long as a run goes on; the kernel drops it when the process ends, however
it ends (a ``kill -9`` or a power cut leaves no stale lock behind). The file says who
holds it (host, pid, since when), so the refusal can name them.

``force=True`` goes on without the lock (the human knows the other one is gone or means
to run both); the file then names the newcomer.

With the session store in Postgres (``store_url``) the run is also locked in the
database, by its run id (:mod:`flower.stores.runlock_pg`), so a second machine waking a
copy of the same run is refused the same way.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
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
            " say more by typing into its terminal or its page, wait for it to finish,"
            " or pass --force to run anyway"
        )


@contextmanager
def run_lock(
    run_dir: str | Path,
    *,
    force: bool = False,
    store_url: str | None = None,
    workspace: str | Path | None = None,
) -> Iterator[dict[str, Any]]:
    """Hold ``run_dir``'s lock for the block; yields what the file now says.

    Raises :class:`RunActive` when another process holds it (unless ``force``), and
    ``OSError`` when the run directory cannot be written. With a Postgres ``store_url``
    and the ``workspace``, the run this folder continues is locked in the database too.
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
            with ExitStack() as database:
                if store_url and workspace is not None and not force:
                    _lock_in_database(database, folder, Path(workspace), store_url)
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


def _lock_in_database(stack: ExitStack, run_dir: Path, workspace: Path, url: str) -> None:
    """The database half of the lock; a store that cannot be reached locks nothing (the
    run then fails on the store itself, with the store's own message)."""
    from flower.records.lineage import continuing_run
    from flower.stores.url import is_postgres, to_url

    if not is_postgres(url):
        return
    run = continuing_run(run_dir, workspace)
    if not run:  # a new run, or one taken from the store: locked once its id is known
        late = _LateLock(run_dir, workspace, to_url(url))
        late.start()
        stack.callback(late.stop)
        return
    import sqlalchemy as sa

    from flower.stores.runlock_pg import held_in_postgres

    try:
        holder = stack.enter_context(held_in_postgres(to_url(url), run, on_lost=_stop_lost))
    except sa.exc.SQLAlchemyError:
        return
    if holder is not None:
        raise RunActive(run_dir, holder)


class _LateLock(threading.Thread):
    """The database lock of a run that has no id yet when its flower starts: a new run
    (the id is made with its first lineage), or one a machine takes from the store (the
    lineage comes back from it). Until the lock was taken at start only, such a run
    went its whole first process without one: a second machine waking it from the store
    was not refused. This looks at ``lineage.json`` every :data:`LATE_EVERY` seconds and
    takes the lock as soon as the run has an id; another holder stops this flower."""

    def __init__(self, run_dir: Path, workspace: Path, url: str) -> None:
        super().__init__(name="flower-run-lock-late", daemon=True)
        self.run_dir, self.workspace, self.url = run_dir, workspace, url
        self.done = threading.Event()
        self.held: ExitStack | None = None

    def run(self) -> None:
        from flower.records.lineage import continuing_run

        while not self.done.wait(LATE_EVERY):
            run = continuing_run(self.run_dir, self.workspace)
            if run:
                self._take(run)
                return

    def _take(self, run: str) -> None:
        import sqlalchemy as sa

        from flower.stores.runlock_pg import held_in_postgres

        stack = ExitStack()
        try:
            holder = stack.enter_context(held_in_postgres(self.url, run, on_lost=_stop_lost))
        except sa.exc.SQLAlchemyError:
            return  # the store is unreachable: the run fails on the store itself
        if holder is not None:
            stack.close()
            _stop_lost(holder)
            return
        self.held = stack

    def stop(self) -> None:
        self.done.set()
        self.join()
        if self.held is not None:
            self.held.close()


#: Seconds between two looks for the id of a run that had none when its flower started.
LATE_EVERY = 0.5


def _stop_lost(holder: dict[str, Any]) -> None:
    """The lock's connection ended and another flower took the run before this one could
    take it back: stop as SIGTERM stops a run (the step in flight saved, exit 143), so
    two flowers never go on driving one run."""
    import signal
    import sys

    who = f"pid {holder.get('pid', '?')} on {holder.get('host', 'an unknown host')}"
    print(f"flower: this run was taken over by another flower ({who}): stopping", file=sys.stderr)
    os.kill(os.getpid(), signal.SIGTERM)


def _holder(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
