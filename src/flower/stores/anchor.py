"""flower's own cache mark in a resumed history: where no later load changes anything.

Why: the CLI marks two cache breakpoints, the system prompt and the newest message, and
the API looks at most 20 blocks back from a mark for a cached prefix. So when a load
changes an old block (masking, expiry or trimming moved its boundary) only the tools and
the system prompt stay cached, and the whole history is written again at 1.25x (2x on
the hour's cache). That is why masking's boundary waits until a move pays
(:func:`~flower.stores.mask.worth_moving`), and why the context saws between moves.

A ``cache_control`` on an old block of the view reaches the API as it is (measured: the
CLI passes it through with the history), and the API then caches the prefix up to that
block. So a load marks the *anchor*: the newest result below which no later load
changes anything (masking's and expiry's boundaries, trimming's next result, a ruling of
the judge still kept whole). Between two moves the anchor stays where it is and every
request reads through it; on a load that moves a boundary the old anchor is marked as
well, so that request reads the prefix up to the old anchor from the cache, writes only
what follows it, and leaves an entry at the new anchor for the loads after. That is at
most two marks of flower's, with the CLI's two the API's limit of four
(:data:`flower.testing.usage.MAX_BREAKPOINTS`; the scripted model refuses a fifth as
the API does), and a move then costs what follows the old anchor, not the history.

The mark's TTL must be the CLI's own: the API refuses an hour's mark after a five
minutes' one, and the CLI marks the system prompt (before) and the newest message
(after) with one TTL. The store knows that TTL only when the Runtime pinned it for the
session (``CLAUDE_CODE_PROMPT_CACHE_TTL``, :mod:`flower.runtime.cache_rhythm`) and told
it (``TrimmingSessionStore.cache_ttls``); without it no mark is placed and a move
rewrites the history as before.

Like every load policy this changes the view, never a stored row: a fork's copy of the
view is stored as the original lines (:mod:`flower.stores.handout`).
"""

from __future__ import annotations

from flower.stores.expire import ResultBlocks
from flower.stores.marks import Mark, mark_of
from flower.stores.transcript import text_length

__all__ = ["TTLS", "first_long", "marked", "place_marks", "settle"]

#: The TTLs a mark may carry (the API's, and what the CLI's variable takes).
TTLS = ("5m", "1h")


def marked(ttl: str) -> dict[str, str]:
    """The ``cache_control`` of flower's mark, as the CLI writes its own for ``ttl``."""
    return {"type": "ephemeral", "ttl": ttl}


def first_long(results: ResultBlocks, start: int, stop: int, min_chars: int) -> int:
    """The index of the first of ``results[start:stop]`` with ``min_chars`` characters of
    text or more (trimming's next result to change), else ``stop``."""
    for i in range(max(start, 0), stop):
        if text_length(results[i][2].get("content")) >= min_chars:
            return i
    return stop


def place_marks(results: ResultBlocks, counts: list[int], ttl: str) -> int:
    """Mark the newest of the oldest ``count`` results for each of ``counts`` (0: none);
    how many marks were placed."""
    placed = 0
    for count in sorted(set(counts)):
        if 0 < count <= len(results):
            results[count - 1][2]["cache_control"] = marked(ttl)
            placed += 1
    return placed


def settle(
    results: ResultBlocks, ids: list[str], anchor: int, edge: int, moved: bool, ttl: str
) -> tuple[Mark | None, int]:
    """Place flower's marks for one load; the anchor the next load starts from and how
    many marks were placed. ``anchor``: where the last load left it (how many of the
    oldest results lie below it); ``edge``: where this load's would be; ``moved``: this
    load changed what follows ``anchor`` (a boundary moved, or the cache is cold), so
    its first request writes every mark after what it reads.

    Only then does the anchor move to ``edge``, and the old one is marked too, to be
    read. On any other load the first request reads past every mark from the last
    request's entry and writes none: a mark placed there would name a prefix the cache
    never held, so the anchor stays."""
    if moved:
        counts = [anchor, edge]
    elif anchor:
        counts = [anchor]
    else:
        return None, 0
    return mark_of(ids, counts[-1]), place_marks(results, counts, ttl)
