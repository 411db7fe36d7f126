"""The folder load-time reshaping writes whole results to, and how it writes them.

A spill file is the one place a trimmed or masked result survives, and the folder lives in
the workspace, where the agent works: it may plant a link at ``.flower`` or ``spill`` at
any time. So nothing is written through a link (even one that stays inside), the folder
must resolve inside the workspace, and a file is written whole or not at all (named by its
content: writing it again changes nothing).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from flower.kernel.files import atomic_write, keep_out_of_git

__all__ = ["SpillFolder"]

#: What a spill file's name may not hold (a tool call id is the API's, or a transcript's).
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class SpillFolder:
    """``relative`` below ``workspace``, checked once per load (:meth:`forget` at its start).

    Checked once per load, not per file: a load of a long session spills hundreds of
    results, and the check, a ``resolve`` and an ``lstat`` per folder on the way, cost
    more than the rest of the load; the window is one load's milliseconds, in a thread the
    agent's tools do not run in.
    """

    def __init__(self, workspace: Path, relative: str) -> None:
        self.workspace = workspace
        self.relative = relative
        self._checked: str | None = None

    @property
    def path(self) -> Path:
        return (self.workspace / self.relative).resolve()

    def forget(self) -> None:
        """Look at the folder again before the next file (a new load)."""
        self._checked = None

    def check(self) -> str:
        """The folder, made if missing; ``OSError`` if it resolves outside the workspace or
        any folder on its way below the workspace is a symlink."""
        checked = self._checked
        if checked is not None:
            return checked
        workspace = self.workspace.resolve()
        folder = _inside(self.path, workspace)
        _no_links(workspace, self.relative)
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            folder = _inside(self.path, workspace)  # a link may have appeared meanwhile
            _no_links(workspace, self.relative)
        self._checked = str(folder)
        return self._checked

    def write(self, name: str, body: str) -> Path:
        """Write ``body`` as ``<name>-<hash>.txt``, whole or not at all; ``OSError`` when
        the folder fails :meth:`check` or the disk refuses."""
        data = body.encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(data).hexdigest()[:16]
        safe = _UNSAFE.sub("_", name)[:80]
        folder = self.check()
        path = os.path.join(folder, f"{safe}-{digest}.txt")
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                return Path(path)  # named by its content: already written
        except FileNotFoundError:
            pass
        atomic_write(Path(path), body)
        keep_out_of_git(Path(folder))
        return Path(path)


def _inside(folder: Path, workspace: Path) -> Path:
    if not folder.is_relative_to(workspace):
        raise OSError(f"the spill folder {folder} is outside the workspace {workspace}")
    return folder


def _no_links(workspace: Path, relative: str) -> None:
    """``OSError`` when a folder of ``relative`` below ``workspace`` is a symlink."""
    here = workspace
    for part in Path(relative).parts:
        here = here / part
        if here.is_symlink():
            raise OSError(f"{here} is a symlink: no spill file is written through it")
