"""Writing a file safely: whole or not at all, never through a planted link, redacted.

Every file flower writes into a folder the agents can also write (the workbench, the run
folder, the spill folder, the session store's neighbours) goes through
:func:`atomic_write`. It lives in the kernel because writers on every layer need it:
the session store's spill folder below the run's records, the workbench, the handoff
documents and the workflow's notes above. The workbench registers itself
(:func:`register`), so a write below its root is checked the way the workbench places a
name, without this module knowing the workbench.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Protocol

from flower.kernel.redact import current as current_redactor

_UNSAFE_NAME = re.compile(r"[\x00-\x1f/\\:*?\"<>|]+")


class WorkbenchError(ValueError):
    """A path that would take a write outside the workbench."""


class LinkedWrite(WorkbenchError, OSError):
    """A write into a workbench folder that a symlink would carry elsewhere, refused by
    :func:`atomic_write`. Also an ``OSError``: the writers that already survive a failed
    write (the ledger, the run id, a handoff) survive this one the same way."""


#: Most file systems allow 255 bytes per name; this leaves room for what callers add
#: around a safe name (``交接-``, an archive timestamp, a temporary file's suffix).
NAME_MAX_BYTES = 150


def safe_name(text: str, *, default: str = "untitled") -> str:
    """``text`` made into one harmless file name (no separators, no leading dots).

    Long names are cut at a character boundary to :data:`NAME_MAX_BYTES` of UTF-8 (a
    Chinese step name costs three bytes a character) and end in a short hash of the
    whole text, so two long names that share a beginning stay two files.
    """
    name = _UNSAFE_NAME.sub("_", text).strip().lstrip(".").strip()
    if len(name.encode("utf-8", "surrogatepass")) <= NAME_MAX_BYTES:
        return name or default
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    head = name.encode("utf-8", "surrogatepass")[: NAME_MAX_BYTES - 9]
    return head.decode("utf-8", "ignore").rstrip() + "-" + digest


def atomic_write(path: Path, text: str, *, redact: bool = True) -> None:
    """Write through a fresh temporary file and ``os.replace``, so a reader never sees a
    half-written file and a planted symlink at the target is replaced, not followed.

    A path inside a workbench is checked as its ``place`` would
    (:func:`check_write`): writers that build ``workbench.notes / name`` themselves (the
    brief, the goal, the ledger, the run id) cannot be carried out by a link either.

    Every known secret value in ``text`` is replaced by its marker first
    (:mod:`flower.kernel.redact`): run documents, notes and state files quote model and
    tool output. ``redact=False`` is for a caller that must store a secret on purpose
    (none in flower: ``flower setup`` writes its credential file itself).
    """
    check_write(path)
    if redact:
        text = current_redactor().redact(text)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def keep_out_of_git(folder: Path, what: str = "spilled tool output") -> None:
    """Put a ``.gitignore`` of ``*`` in a folder of flower's inside the repository.

    Spilled tool output is raw and large, and the run folder holds the session store (every
    conversation, what a Read returned): without this a worker's ``git add -A`` commits
    them. ``what`` names the folder's content in the file. A folder that is a symlink
    raises :class:`WorkbenchError`: the file would land where the link leads.
    """
    if folder.is_symlink():
        raise WorkbenchError(f"{folder} is a symlink: no .gitignore is written through it")
    marker = folder / ".gitignore"
    if marker.is_symlink() or not marker.exists():  # a planted link is replaced, not followed
        atomic_write(marker, f"# flower: {what}, kept out of git\n*\n")


class Placer(Protocol):
    """What :func:`check_write` asks of a guarded folder: where a name would go."""

    @property
    def root(self) -> Path:
        """The guarded folder."""
        ...

    def place(self, *parts: str) -> Path:
        """The path ``parts`` names below ``root``; :class:`WorkbenchError` when a link
        or a ``..`` would carry it out."""
        ...


#: Every folder guarded in this process (each workbench registers itself), by root:
#: :func:`check_write` asks them.
_workbenches: dict[str, list[weakref.ref[Placer]]] = {}
_registry_lock = threading.Lock()


def register(workbench: Placer) -> None:
    """Guard the writes below ``workbench.root``: :func:`check_write` asks it from now on
    (held weakly: a workbench gone from memory stops guarding)."""
    root = os.path.abspath(workbench.root)
    with _registry_lock:
        refs = [r for r in _workbenches.get(root, []) if r() is not None]
        refs.append(weakref.ref(workbench))
        _workbenches[root] = refs


def check_write(path: str | Path) -> None:
    """Refuse (:class:`LinkedWrite`) a write to ``path`` inside a workbench when no
    guarded folder with that root (a workbench) would place it: a folder below the root
    is a symlink, or the root became a link out of its workspace. Paths outside every
    workbench pass: the run folder and the project's own files are the user's choice.
    """
    target = os.path.abspath(path)
    with _registry_lock:
        found = [
            (root, [wb for r in refs if (wb := r()) is not None])
            for root, refs in _workbenches.items()
            if target.startswith(root + os.sep)
        ]
    for root, benches in found:
        if not benches:
            continue
        parts = Path(target[len(root) + 1 :]).parts
        problems: list[str] = []
        for workbench in benches:
            try:
                workbench.place(*parts)
            except WorkbenchError as exc:
                problems.append(str(exc))
            else:
                break
        else:
            raise LinkedWrite(problems[0])


def relative_posix(path: Path, root: Path) -> str:
    """``path`` below ``root`` as a ``/``-separated relative path, both resolved; ""
    when it is not below it (or cannot be resolved)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return ""
