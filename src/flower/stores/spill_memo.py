"""What earlier loads spilled, so a load names the same file again without rewriting it.

Each load of a long session spills the same old results again; naming a file by its
content means encoding, redacting and hashing every one of them (most of a load's time on
large results). The stored rows never change, so the same tool call's text is the same
text: the key is the call, the text's length, Python's hash of it and the language, for
the redactor in effect (a new redactor, with other secrets to hide, forgets them all).

A remembered file is named again only while it is still there. Looking (one ``lstat``)
for each of the hundreds of files a load names cost a sixth of the policies' time, so a
load looks at the folder instead: a file removed, renamed or swapped for a link changes
the folder's modification time. The time is trusted only once it is old (``SETTLED_NS``):
a change within the same tick of the file system's clock as the last one would leave the
time as it was, the "racy" case git's index knows too. Until then, and whenever the time
moved, each file is looked at as before, and trusting a new time first looks at every
remembered file once, forgetting those that are gone.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from flower.stores.spill_folder import SpillFolder

__all__ = ["MEMO_ENTRIES", "SETTLED_NS", "MemoKey", "SpillMemo"]

#: How many spilled texts the store remembers across loads.
MEMO_ENTRIES = 50_000
#: How old the folder's modification time must be before it stands for its files.
SETTLED_NS = 2_000_000_000
#: (kind, name, length, hash of the text, English?).
MemoKey = tuple[str, str, int, int, bool]


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _mtime(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


class SpillMemo:
    """The texts earlier loads spilled and the placeholders they became, by :data:`MemoKey`."""

    def __init__(self, folder: SpillFolder, limit: int = MEMO_ENTRIES) -> None:
        self._folder = folder
        self._limit = limit
        self._spilled: dict[MemoKey, tuple[str, str]] = {}
        self._verified: int | None = None  # the folder's time when every file was there
        self._trusted: bool | None = None  # this load's answer (None: not asked yet)
        self.clock = time.time_ns

    def start(self) -> None:
        """A new load: the folder's time is asked again at its first hit."""
        self._trusted = None

    def clear(self) -> None:
        self._spilled.clear()

    def recall(self, key: MemoKey) -> tuple[str, str] | None:
        """The placeholder and path an earlier load made of the same text, if its file is
        still in place (the folder checked first, once per load)."""
        if key not in self._spilled:
            return None
        if self._trusted is None:  # first, as trusting a new time may forget this one
            self._trusted = self._settled(self._folder.check())
        hit = self._spilled.get(key)
        if hit is None:
            return None
        if self._trusted or _regular(hit[1]):
            return hit
        del self._spilled[key]
        return None

    def remember(self, key: MemoKey, text: str, path: Path) -> None:
        if len(self._spilled) >= self._limit:
            self._spilled.clear()
        self._spilled[key] = (text, str(path))

    def _settled(self, folder: str) -> bool:
        """Whether the folder's time says every remembered file is still there."""
        seen = _mtime(folder)
        if seen is None:
            return False
        if seen == self._verified:
            return True
        if self.clock() - seen < SETTLED_NS:  # too recent to tell a change from none
            return False
        for key in [k for k, (_, path) in self._spilled.items() if not _regular(path)]:
            del self._spilled[key]
        if _mtime(folder) != seen:  # changed (or went) while we looked
            return False
        self._verified = seen
        return True
