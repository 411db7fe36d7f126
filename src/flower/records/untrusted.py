"""Reading a file from a folder the agents can write.

flower keeps some of its bookkeeping in the run folder (``runs/``, inside the workspace
by default), and the agents, a cloned repository or another local process can put
anything there under the expected name: a symbolic link (to ``/dev/zero``, to another
user's file), a FIFO (an open that never returns), a device, a file of gigabytes.
:func:`read_regular` opens without following a link and without blocking, checks on the
open descriptor that it is a regular file, and reads at most ``limit`` bytes: what is
not an ordinary small file reads as absent.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["FLAGS", "NotRegular", "open_regular", "read_most", "read_regular"]

#: How a file in a folder the agents write is opened: a link is refused, not followed
#: (``O_NOFOLLOW``), a FIFO cannot block the open (``O_NONBLOCK``), a terminal never
#: becomes the process's (``O_NOCTTY``), no child inherits it (``O_CLOEXEC``).
FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
FLAGS |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class NotRegular(OSError):
    """What :func:`open_regular` found is no regular file (a FIFO, a device, a folder)."""


def open_regular(path: str | Path, *, dir_fd: int | None = None) -> tuple[int, os.stat_result]:
    """An open descriptor of ``path`` (relative to ``dir_fd`` when given) and its
    ``fstat``, when it is a regular file; the caller closes it. Raises
    ``FileNotFoundError`` when there is nothing, :class:`NotRegular` when it is no
    regular file, another ``OSError`` when it is a link (``ELOOP``) or cannot be opened.

    The check is made on the open descriptor, so nothing can swap the file between it
    and the read. Shared by :func:`read_regular` and the web page's documents
    (``flower_plugin_web.docs``)."""
    fd = os.open(path, FLAGS, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{os.fspath(path)} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_most(fd: int, most: int) -> bytes:
    """At most ``most`` bytes of the open ``fd``, in chunks (a regular file never
    blocks; a read that would is taken as the end)."""
    chunks: list[bytes] = []
    left = most
    while left > 0:
        try:
            chunk = os.read(fd, min(left, 1 << 20))
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_regular(path: Path, limit: int) -> str | None:
    """``path``'s text (UTF-8) when it is a regular file of at most ``limit`` bytes,
    else ``None`` (missing, a link, a FIFO or device, too big, unreadable, not UTF-8)."""
    try:
        fd, info = open_regular(path)
    except OSError:
        return None
    try:
        if info.st_size > limit:
            return None
        data = read_most(fd, limit + 1)
        if len(data) > limit:  # grew while read
            return None
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)
