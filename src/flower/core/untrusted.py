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

__all__ = ["read_regular"]


def read_regular(path: Path, limit: int) -> str | None:
    """``path``'s text (UTF-8) when it is a regular file of at most ``limit`` bytes,
    else ``None`` (missing, a link, a FIFO or device, too big, unreadable, not UTF-8)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # grew while read
            return None
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)
