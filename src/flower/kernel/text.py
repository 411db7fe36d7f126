"""Text made to fit one line: of the terminal, of ``INDEX.md``, of an event."""

from __future__ import annotations


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` with its whitespace runs collapsed to single spaces, cut to ``limit``
    characters with a trailing ``…`` when longer (``None``: never cut)."""
    text = " ".join(str(text).split())
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"
