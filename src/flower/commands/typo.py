"""The typo guard: ``flower onec hi`` is a misspelt command, not a paid run.

Any first argument that is not a subcommand is read as the ask, so a slip of the finger
would start clarifying "onec hi" with a real model. When the first word is one bare
token (not a quoted sentence) within edit distance 2 of a subcommand, flower asks
instead of running. Quoting the ask (``flower "onec hi"``) always runs it.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Words shorter than this are too easily one edit from a command ("do" vs "go").
MIN_LENGTH = 3


def allowed(command: str) -> int:
    """Edits tolerated for a command: 1 for short names (so "add" is not "db"), else 2."""
    return 1 if len(command) <= 4 else 2


def distance(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions ("onec" is one edit from "once"),
    case-insensitive (optimal string alignment)."""
    a, b = a.casefold(), b.casefold()
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(
                rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            )
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[i - 2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def misspelt_command(args: list[str], commands: Iterable[str]) -> str | None:
    """The subcommand ``args[0]`` probably meant, or ``None`` when it reads as an ask."""
    if not args:
        return None
    word = args[0]
    if len(word) < MIN_LENGTH or any(ch.isspace() for ch in word) or word.startswith("-"):
        return None
    scored = sorted((distance(word, name), name) for name in commands if name != word)
    for edits, name in scored:
        if 0 < edits <= allowed(name):
            return name
    return None


__all__ = ["allowed", "distance", "misspelt_command"]
