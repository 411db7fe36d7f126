"""One cross-process lock for the small JSON files several flower processes share.

``manifest.json`` and ``lineage.json`` are both rewritten by read-merge-write: re-read
the file, merge this process's part into what is there, swap the result in. Two
processes in one run directory stay correct only if nobody reads between another's
read and replace, so each file has a sibling ``<name>.lock`` that is held (``flock``,
exclusive) for the whole read-merge-write.

The lock is re-entrant per thread. That is not a nicety: a SIGTERM handler runs in the
main thread between two bytecodes, possibly while that same thread holds the lock in the
middle of a write, and ``flock`` on a second descriptor of the same file would then wait
for ourselves forever. The handler's write goes ahead instead; the interrupted one never
finishes (the process is exiting), so nothing is torn.

Where ``fcntl`` does not exist the lock does nothing and the re-read still merges.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

try:  # POSIX; elsewhere the lock degrades to nothing
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_SUFFIX", "held", "locked", "move_aside"]

LOCK_SUFFIX = ".lock"

_held = threading.local()


def _holding() -> dict[str, int]:
    table: dict[str, int] | None = getattr(_held, "paths", None)
    if table is None:
        table = {}
        _held.paths = table
    return table


def held(path: str | Path) -> bool:
    """Whether this thread holds the lock of ``path`` now."""
    return _holding().get(_key(path), 0) > 0


@contextlib.contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` (the file ``<path>.lock``) for the block.

    ``path`` is the shared file itself, not the lock file; its folder must exist.
    """
    key = _key(path)
    table = _holding()
    if table.get(key, 0) > 0 or fcntl is None:
        table[key] = table.get(key, 0) + 1
        try:
            yield
        finally:
            table[key] -= 1
        return
    lock = Path(path).with_name(Path(path).name + LOCK_SUFFIX)
    with open(lock, "a+b") as handle:
        # Marked as held before waiting: a signal arriving in between then writes
        # without the lock (a narrow race with another process) instead of deadlocking.
        table[key] = 1
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        finally:
            table[key] = 0


def move_aside(path: Path, why: str) -> Path:
    """Rename ``path`` to ``<name>.<why>-<YYYYmmdd-HHMMSS>`` beside it; never overwrite.

    For a shared file that cannot be used as it is (corrupt, another workspace's): it is
    kept for a human to look at rather than replaced. Call it under :func:`locked`.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.{why}-{stamp}-{n}")
    os.replace(path, target)
    return target


def _key(path: str | Path) -> str:
    return os.path.abspath(os.fspath(path))
