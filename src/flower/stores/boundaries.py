"""Where a load draws its boundaries: how many of the oldest results masking and expiry
change, and whether that moved since the last load of the session.

The policies themselves (what a masked or expired result becomes) are
:class:`~flower.stores.trim.TrimmingSessionStore`'s; this module decides only how far
they reach, which is what the prompt cache cares about. Each boundary is the furthest of
three: where the cache-aware rule puts it (:func:`~flower.stores.mask.boundary`: all the
way on a cold cache, in steps with a chunk), where the last load of the session left it
(:mod:`flower.stores.marks`: never nearer), and, batched, all the way when a move pays
for the rewrite it causes (:class:`~flower.stores.move_cost.MoveCost`, priced from
flower's cache mark on when there is one: :mod:`flower.stores.anchor`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flower.stores.expire import EphemeralPolicy, ResultBlocks
from flower.stores.marks import Mark, place
from flower.stores.mask import EXPIRY_CHUNK, MaskPolicy, boundary, cold_points
from flower.stores.move_cost import MoveCost
from flower.stores.scan import Scan

__all__ = ["Boundaries", "draw"]


@dataclass
class Boundaries:
    """One load's boundaries.

    Attributes:
        reach: The oldest results masking changes (0 without masking).
        below: The oldest results expiry may change (0 without expiry).
        keep: The newest results expiry leaves alone.
        moved: A boundary went further than the last load drew it.
        cold: The cache is cold at this load: its first request writes everything.
    """

    reach: int = 0
    below: int = 0
    keep: int = 0
    moved: bool = False
    cold: bool = False


def draw(
    *,
    mask: MaskPolicy,
    ephemeral: EphemeralPolicy,
    masking: bool,
    entries: list[Any],
    found: Scan,
    results: ResultBlocks,
    lines: list[int],
    ids: list[str],
    marks: dict[str, Mark],
    now: Callable[[], float],
    lives: float,
    moves: MoveCost,
    start: int,
) -> Boundaries:
    """Draw this load's boundaries over ``results`` (the counted results of ``entries``,
    oldest first; ``lines`` and ``ids``: their line numbers and tool-use ids, which
    the caller keeps too). ``marks``: where the last load left them; ``lives``: seconds the
    session's cache lives when longer than ``mask.cold_after`` (the hour's); ``start``:
    the line of flower's cache mark, from which a move rewrites (0: none)."""
    out = Boundaries()
    cold = None
    if (masking or ephemeral.enabled) and mask.cold_after is not None:
        cold = cold_points(entries, now(), max(mask.cold_after, lives), prompts=found.prompts)
        out.cold = bool(cold) and cold[-1] >= len(entries)
    # The batched rule (``MaskPolicy.chunk`` None, with masking on): on a warm cache
    # every boundary stays where the last load drew it until a move pays for the
    # rewrite it causes (:func:`~flower.stores.mask.worth_moving`); then masking,
    # expiry and trimming all move at once, all the way, for one rewrite.
    batched = masking and mask.chunk is None
    if masking:
        # Cache-aware: the oldest ``reach`` results change only when the boundary
        # moves (when it pays, or in chunks, or all the way on a cold cache), so a warm
        # cache's prefix survives the loads between two moves.
        was = place(marks.get("mask"), ids)
        reach = min(max(boundary(mask, entries, lines, now(), cold=cold), was), len(results))
        full = max(len(results) - max(mask.keep_recent, 0), 0)
        if batched and full > reach:
            uses = found.uses
            if moves.pays(mask, entries, results, uses, reach, full, found, lives, start):
                reach = full
        out.reach, out.moved = reach, reach > was
    if ephemeral.enabled:
        # Expiry waits for a boundary too, masking on or off: each expiry note changes
        # old context, and sliding it at every resume rewrote the cache.
        out.keep = max(min(mask.keep_recent, ephemeral.keep_recent), 0)
        chunk: int | str | None = "policy"
        if mask.chunk is None and not masking:
            chunk = EXPIRY_CHUNK
        below = boundary(mask, entries, lines, now(), keep=out.keep, cold=cold, chunk=chunk)
        if batched:  # with masking's move: judged as the results stood then
            below = max(below, out.reach + max(mask.keep_recent, 0) - out.keep)
        was = place(marks.get("expiry"), ids)
        out.below = min(max(below, was), len(results))
        out.moved = out.moved or out.below > was
    return out
