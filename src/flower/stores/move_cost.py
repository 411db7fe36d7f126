"""Whether moving masking's boundary pays, on a warm cache: the store's side of
:func:`~flower.stores.mask.worth_moving`.

The rule itself (what waited against what a move rewrites) is :mod:`flower.stores.mask`'s;
this module measures its two sides on a load: what each result below the boundary would
save (its text and its call's long arguments, less their placeholders) and how many
characters a move makes the API write again (every line's message content, each line
measured once per process by its uuid: the same line has the same size at every load).
It lives apart from :class:`~flower.stores.trim.TrimmingSessionStore`, which calls it
once per warm load with a backlog, so the store's module holds only the order of the
policies.
"""

from __future__ import annotations

import json
from typing import Any

from flower.stores.expire import ResultBlocks
from flower.stores.mask import (
    HOUR,
    PLACEHOLDER_CHARS,
    MaskPolicy,
    maskable,
    never_masked,
    pending_reads,
    worth_moving,
)
from flower.stores.mask_calls import input_savings
from flower.stores.scan import Scan
from flower.stores.transcript import Entry, Uses, text_length

__all__ = ["LINE_SIZES", "MoveCost"]
#: Line sizes remembered before the memo starts again.
LINE_SIZES = 200_000


class MoveCost:
    """Prices a move of masking's boundary for one store (it keeps the line sizes)."""

    def __init__(self) -> None:
        #: Line uuid -> characters of its stored message content.
        self._line_chars: dict[str, int] = {}

    def pays(
        self,
        mask: MaskPolicy,
        entries: list[Entry],
        results: ResultBlocks,
        uses: Uses,
        reach: int,
        full: int,
        found: Scan,
        lives: float,
        start: int = 0,
    ) -> bool:
        """Whether moving the boundary from ``reach`` to ``full`` pays: what the waiting
        results cost in reads since each could have been masked, against what the move
        rewrites (the view's size after the move from line ``start`` on: every line's
        size less what masking saves). ``lives``: seconds the session's cache lives (the
        hour's writes cost more). ``start``: the line of flower's cache mark, where the
        request that moves reads up to (:mod:`flower.stores.anchor`); 0 without one,
        when only the tools and the system prompt stay cached."""
        keep = max(mask.keep_recent, 0)
        sizes: list[int] = []
        since: list[int] = []
        saved_all = 0
        for i, (index, entry, block) in enumerate(results[:full]):
            saved = self.saves(mask, entry, block, uses)
            if index >= start:
                saved_all += saved
            if i >= reach and saved:
                sizes.append(saved)
                since.append(results[i + keep][0] if i + keep < len(results) else len(entries))
        if not sizes:
            return False
        after = found.rounds_after().__getitem__
        pending = pending_reads(sizes, since, after, max(mask.ahead, 0))
        rewrite = max(self.view_chars(entries[start:]) - saved_all, 0)
        return worth_moving(pending, rewrite, mask, hour=lives >= HOUR)

    @staticmethod
    def saves(mask: MaskPolicy, entry: Entry, block: dict[str, Any], uses: Uses) -> int:
        """About what masking ``block`` and its call's arguments saves, in characters
        (0: neither is ever masked)."""
        if entry.get("isCompactSummary") is True:
            return 0
        use = uses.get(str(block.get("tool_use_id") or "result"))
        arguments = input_savings(use[1]) if use is not None else 0
        if not maskable(block, mask) or (use is not None and never_masked(use[1].get("name"))):
            return arguments
        return max(text_length(block.get("content")) - PLACEHOLDER_CHARS, 0) + arguments

    def view_chars(self, entries: list[Entry]) -> int:
        """The characters of every line's message content as stored (JSON), each line
        measured once per process (by its uuid): what a rewrite of the whole history
        writes."""
        total = 0
        sizes = self._line_chars
        if len(sizes) > LINE_SIZES:
            sizes.clear()
        for entry in entries:
            uid = entry.get("uuid")
            size = sizes.get(uid) if isinstance(uid, str) else None
            if size is None:
                message = entry.get("message")
                content = message.get("content") if isinstance(message, dict) else None
                if content is None:
                    continue
                # the content alone: a reply's id, model and usage are never sent
                size = len(json.dumps(content, ensure_ascii=False, default=str))
                if isinstance(uid, str):
                    sizes[uid] = size
            total += size
        return total
