"""Reading the run's documents for the page: regular files in the workbench, and only
the first few megabytes of them.

The agents write the workbench, so whatever sits at ``notes/需求.md`` may be a link to
``~/.ssh/id_rsa`` or to ``/dev/zero``, a FIFO that blocks whoever opens it, or a 31 MB
handoff. So a document is opened relative to the ``notes`` folder's own descriptor
(``notes`` itself must not be a link), with ``O_NOFOLLOW`` (a link is refused, not
followed) and ``O_NONBLOCK`` (a FIFO cannot block the open), then ``fstat`` must say a
regular file; at most ``limit`` bytes are read. The caller runs this in a thread, so a
slow disk or a large render never stalls the server's loop. The open and the bounded read
are flower's own (:mod:`flower.records.untrusted`, which reads the run folder's pending
questions the same way); this module adds the notes folder, the names and the notes a
page shows for what it refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from flower.records.untrusted import NotRegular, open_regular, read_most

#: The documents the page shows: name -> file in ``<workbench>/notes``.
FILES = {"brief": "需求.md", "goal": "目标.md", "ledger": "判定记录.md"}
HANDOFF_PREFIX, HANDOFF_SUFFIX = "交接-", ".md"


@dataclass
class Read:
    """A document's text, or why there is none (``note``), and whether it was cut."""

    text: str | None = None
    note: str = ""
    size: int = 0
    cut: bool = False
    refused: bool = False
    #: The file's identity and version (device, inode, size, mtime in ns): a render of
    #: the same stamp is the same render.
    stamp: tuple[int, int, int, int] | None = None


def read_document(workbench: Path, name: str, limit: int) -> Read:
    """Document ``name`` (``brief``, ``goal``, ``ledger``, ``handoff``: the newest)."""
    try:
        notes = _open_notes(workbench)
    except FileNotFoundError:
        return Read(note="no such document yet")
    except OSError:
        return Read(note="the notes folder is a link or not a folder: not shown", refused=True)
    try:
        filename = _newest_handoff(notes) if name == "handoff" else FILES.get(name)
        if filename is None:
            return Read(note="no such document yet")
        return read_at(notes, filename, limit)
    finally:
        os.close(notes)


def read_file(path: Path, limit: int) -> Read:
    """A file the run itself writes (``manifest.json``), with the same care."""
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return Read(note="not there yet")
    try:
        return read_at(folder, path.name, limit)
    finally:
        os.close(folder)


def read_at(folder: int, filename: str, limit: int) -> Read:
    """``filename`` in the open folder ``folder``: a regular file, at most ``limit`` bytes."""
    try:
        fd, info = open_regular(filename, dir_fd=folder)
    except FileNotFoundError:
        return Read(note="no such document yet")
    except NotRegular:
        return Read(note=f"{filename} is not a regular file: not shown", refused=True)
    except OSError:  # ELOOP: a link; EACCES, ENXIO...
        return Read(note=f"{filename} is a link or cannot be opened: not shown", refused=True)
    try:
        data = read_most(fd, min(info.st_size, limit))
    finally:
        os.close(fd)
    cut = info.st_size > len(data)
    stamp = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    try:
        text = _decode(data, cut)
    except UnicodeDecodeError:
        return Read(note="not readable yet (not UTF-8 text)", size=info.st_size)
    return Read(text=text, size=info.st_size, cut=cut, stamp=stamp)


def _open_notes(workbench: Path) -> int:
    """``<workbench>/notes`` as a descriptor; the workbench may be a link (the user's
    choice), ``notes`` inside it may not (the agents'): ``O_NOFOLLOW`` refuses one."""
    base = os.open(workbench, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return os.open("notes", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=base)
    finally:
        os.close(base)


def _newest_handoff(notes: int) -> str | None:
    """The newest ``交接-*.md`` that is a regular file (links are skipped)."""
    newest: tuple[float, str] | None = None
    with os.scandir(notes) as entries:
        for entry in entries:
            name = entry.name
            if not (name.startswith(HANDOFF_PREFIX) and name.endswith(HANDOFF_SUFFIX)):
                continue
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                mtime = entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
            if newest is None or mtime > newest[0]:
                newest = (mtime, name)
    return newest[1] if newest else None


def _decode(data: bytes, cut: bool) -> str:
    """UTF-8; a cut may have split the last character (up to 3 bytes dropped)."""
    if not cut:
        return data.decode("utf-8")
    for drop in range(4):
        try:
            return data[: len(data) - drop].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8")
