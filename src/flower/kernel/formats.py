"""The short forms the run view writes numbers, times, paths and tool calls in.

Kept apart from the renderer so every line that shows a count, a token total, a wait or
a tool call says it the same way, and so the forms can be tested without a terminal.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flower.kernel.text import one_line

__all__ = ["GIST_KEYS", "duration", "gist", "kilo", "plural", "tilde"]

#: Input keys that say most about a tool call, most telling first.
GIST_KEYS = ("command", "file_path", "pattern", "path", "url", "query", "description", "prompt")


def plural(n: int, word: str) -> str:
    """``1 turn``, ``2 turns``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def kilo(tokens: Any) -> str:
    """A token count as a context meter shows it: ``950``, ``80.2K``."""
    n = int(tokens or 0)
    return f"{n / 1000:.1f}K" if n >= 1000 else str(n)


def duration(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``2h 07m``: a wait or a run's length, never negative."""
    s = round(max(0.0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def tilde(path: Path | str) -> str:
    """``path`` with the home folder written ``~`` (a root or unset home left alone)."""
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def gist(data: Any, limit: int = 100) -> str:
    """One line that says what a tool call does: its most telling input (a command, a
    file, a pattern, ...), else every ``key=value``."""
    if isinstance(data, dict):
        for key in GIST_KEYS:
            if data.get(key):
                return one_line(str(data[key]), limit)
        return one_line(", ".join(f"{k}={v}" for k, v in data.items()), limit)
    return one_line(str(data or ""), limit)
