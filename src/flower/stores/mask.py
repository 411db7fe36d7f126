"""Observation masking at resume time: old tool results leave the context in chunks.

Why: a long-running coordinator's context is mostly what its tools returned (worker
reports, glances at the repository, files read), and almost none of it is read again after
the next few turns. Trimming (:class:`~flower.stores.trim.TrimPolicy`: results of 2000+
characters older than the newest 20) saved 0-5 % on real transcripts, because most results
are shorter than that and 20 is most of a round. Hiding old observations behind a
placeholder halves an agent's cost at an equal solve rate (Lindenbauer et al., "The
Complexity Trap", arXiv 2508.21433); Anthropic's server-side clearing of old tool results
cut 84 % of the tokens of a 100-turn search. flower does it at load time, in the store:

- every tool result of the main chain older than the newest ``keep_recent``, with at least
  ``min_chars`` of text, is replaced by a one-line placeholder naming a spill file that
  holds the text byte for byte (the same folder and writer as trimming), so nothing is
  lost: the original is one ``Read`` away;
- a human's answers (``mcp__human__*``) and compact summaries are never masked;
- what changes is chosen so the prompt cache survives it. A change to old content makes the
  API write everything after it again (1.25x the input price, against 0.1x or less for a
  cached read), so masking "the newest 6 and no more" at every resume would pay that
  rewrite every round for a few results each time. Instead the boundary (how many of the
  oldest results are masked) stays where it was until a move pays for the rewrite it
  causes (:func:`worth_moving`; or, with ``chunk`` set, in steps of that many results),
  and between moves the view is the same as last time, byte for byte: the cached prefix
  stays valid. When the cache is cold anyway (the session's last line is older than
  ``cold_after`` seconds: a wake after a pause, a judge that took long) the boundary
  moves all the way at once, since nothing cached is lost by it. The boundary is drawn
  from the stored lines and their timestamps (a gap longer than ``cold_after`` before a
  prompt marks a cold resume in the past; the CLI's ``queue-operation`` lines, stamped
  with the prompt's time, do not count), and never nearer than the last load of the
  session drew it, which the store keeps (:mod:`flower.stores.marks`): a result once
  masked stays masked;
- old-format transcripts (CLI 1.x) keep a subagent's lines inline, marked
  ``isSidechain``; the CLI never sends them, so they are neither counted nor masked.

Like the other load policies this never changes a stored row (docs/storage.md).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from flower.stores.transcript import Entry, text_length

__all__ = [
    "MASKED_NAME",
    "MASK_TEXT",
    "MASK_TEXT_EN",
    "MaskPolicy",
    "boundary",
    "cold_points",
    "is_prompt",
    "masked_text",
    "pending_reads",
    "placeholder",
    "worth_moving",
]

#: The placeholder a masked result becomes; ``{n}`` its characters, ``{path}`` the file.
MASK_TEXT = "[较早的工具输出({n} 字符)已移出上下文,原文在 {path}]"
MASK_TEXT_EN = "[Older tool output ({n} characters) moved out of the context: {path}]"
#: The name a masked text's spill file starts with (the spill folder adds its content
#: hash): a second hash of the text, or the call's id, made a masked round's line a
#: sixth longer, and a file's content names it already.
MASKED_NAME = "m"
#: Tools whose results are never masked: what the human said.
NEVER_MASKED = ("mcp__human__",)
#: Text blocks shorter than this stay inside a masked list content.
SMALL_TEXT = 200
#: What a placeholder takes, about (characters): what masking a result saves is its
#: length less this.
PLACEHOLDER_CHARS = 150
#: Seconds a prefix written with ``"ttl": "1h"`` stays cached (the 1-hour prompt cache;
#: the session store prices its writes, :mod:`flower.runtime.cache_rhythm` asks for it).
HOUR = 3600.0
#: The step expiry's boundary moves in while the cache may be warm, when nothing masks
#: (``Runtime(trim=False)``) and ``MaskPolicy.chunk`` is ``None``.
EXPIRY_CHUNK = 12


@dataclass
class MaskPolicy:
    """Which old tool results leave the resumed context, and when.

    Attributes:
        enabled: ``False`` masks nothing. ``None`` (the store's default) follows the
            trim policy: ``Runtime(trim=False)`` turns off both.
        keep_recent: The newest main-chain tool results that always stay whole.
        min_chars: A result with less text stays (a placeholder would save little).
        chunk: ``None`` (the default): while the cache may be warm the boundary moves
            only when the move pays for the rewrite it causes (:func:`worth_moving`), and
            then all the way. A number: the older rule, the boundary moves in steps of
            this many results (1: every load, the cache-breaking way). Expiry without
            masking (``Runtime(trim=False)``) keeps steps of :data:`EXPIRY_CHUNK`.
        cold_after: Seconds after the session's last line past which the prompt cache
            has expired (the API's default TTL is 5 minutes): the boundary then moves
            all the way. ``None`` never assumes a cold cache.
        supersede: A glance (``is_ephemeral``) run again later is expired even among the
            newest ``EphemeralPolicy.keep_recent``: only its newest result says anything.
        cache_read, cache_write, cache_write_hour: What a cached read, a 5-minute cache
            write and a 1-hour one cost, in units of the input price (the CLI's default
            model, Opus 5.5: 0.05, 1.25 and 2; most others read at 0.1). Only their
            ratios matter: they price a move against what it saves (:func:`worth_moving`).
        ahead: The requests a resume is taken to make at least, after the load: what a
            move saves in them counts with what the waiting results cost already (a
            large result just past the newest six is then masked when masking it pays
            within those requests, not only once it was read that often).
    """

    enabled: bool | None = None
    keep_recent: int = 6
    min_chars: int = 400
    chunk: int | None = None
    cold_after: float | None = 300.0
    supersede: bool = False
    cache_read: float = 0.05
    cache_write: float = 1.25
    cache_write_hour: float = 2.0
    ahead: int = 3


def boundary(
    policy: MaskPolicy,
    entries: list[Entry],
    counted: list[int],
    now: float,
    keep: int | None = None,
    cold: list[int] | None = None,
    chunk: int | str | None = "policy",
) -> int:
    """How many of the oldest counted results may be masked or expired at this load.

    ``counted``: the line index of each counted tool result, oldest first. The boundary is
    the furthest of: the chunked one (``keep`` back from the newest, rounded down to a
    multiple of ``chunk``; none when ``chunk`` is ``None``: then a warm move is the
    caller's, :func:`worth_moving`), and the full one at every cold point (this load, when
    the last line is older than ``cold_after``; every past prompt that came that long
    after the line before it). ``keep``: the newest results that stay
    (``policy.keep_recent``; expiry passes its own when smaller, so a cold load expires
    exactly what the seed says). ``cold``: :func:`cold_points` of ``entries`` when the
    caller has them already. ``chunk``: ``policy.chunk`` unless given.
    """
    total = len(counted)
    keep = max(policy.keep_recent if keep is None else keep, 0)
    step = policy.chunk if chunk == "policy" else chunk
    if step is None:
        reach = 0
    else:
        step = max(int(step), 1)
        reach = max(total - keep, 0) // step * step
    if policy.cold_after is None or not counted:
        return reach
    if cold is None:
        cold = cold_points(entries, now, policy.cold_after)
    for line in cold:
        before = bisect.bisect_left(counted, line)
        reach = max(reach, before - keep)
    return min(max(reach, 0), max(total - keep, 0))


def worth_moving(pending: float, rewrite: float, policy: MaskPolicy, *, hour: bool = False) -> bool:
    """Whether moving the boundary all the way, on a warm cache, pays for its rewrite.

    ``pending``: what the results waiting to be masked have cost in reads since each of
    them could have been masked, in characters times requests (:func:`pending_reads`).
    ``rewrite``: the characters the move makes the API write again. With the CLI's two
    cache breakpoints (the system prompt and the newest message, and the API looking at
    most 20 blocks back from each), a change to an old result leaves only the tools and
    the system prompt cached: a move rewrites every message, not only those after the
    boundary (measured: each move of the old chunk rule read 9,060 tokens, the system
    prompt, and wrote the rest). ``hour``: the session asked for the 1-hour cache, whose
    writes cost more.

    The rule is the economic order quantity's (and rent-or-buy's): a move costs
    ``rewrite x (write - read)`` once; the results it masks then cost nothing more, while
    each request before the move reads them again (``pending`` grows with the square of
    the time since the last move). Moving when what the waiting results have cost reaches
    what a move costs is where the sum of the two, per round, is least for a steady
    session, and never more than twice the least for any other, without guessing how
    many requests are still to come (``MaskPolicy.ahead`` adds only the next few). For
    HT001's coordinator (about 1.4K tokens maskable and 5 requests a round, a 30K
    history) that is a move about every 14 rounds, where steps of 12 results moved every
    3 and rewrote the history each time.
    """
    write = policy.cache_write_hour if hour else policy.cache_write
    read = max(policy.cache_read, 1e-9)
    return pending * read >= rewrite * max(write - read, 0.0)


def pending_reads(
    sizes: list[int], since: list[int], replies_after: Callable[[int], int], ahead: int = 0
) -> float:
    """Characters times requests the results waiting to be masked have been read since
    each could have been, and will be in the ``ahead`` requests to come: ``sizes[i]`` what
    masking result ``i`` saves, ``since[i]`` the line from which it could have been masked
    (the result that made it one of the newest ``keep_recent`` no longer),
    ``replies_after(line)`` the model replies after a line (each one request that read
    the result again)."""
    return float(
        sum(size * (replies_after(line) + ahead) for size, line in zip(sizes, since, strict=True))
    )


def cold_points(
    entries: list[Entry], now: float, cold_after: float, prompts: list[int] | None = None
) -> list[int]:
    """Line indexes at which the session resumed on a cold cache: every prompt that came
    ``cold_after`` seconds after the line before it, and the end (this load) when the
    newest line is that old, or when no line says when it was written (nothing tells a
    warm cache from a cold one, and a reshape then costs at most one rewrite).

    Only a prompt's time and its predecessor's are read (parsing every line's timestamp
    was a tenth of a load); the lines of a transcript are written in time order.
    ``prompts``: the indexes of the prompt lines (:func:`is_prompt`), when the caller has
    them already (:func:`~flower.stores.scan.scan`).
    """
    if prompts is None:
        prompts = [i for i, e in enumerate(entries) if is_prompt(e)]
    points: list[int] = []
    for index in prompts:
        if index == 0:
            continue
        stamp = entries[index].get("timestamp")
        before = _stamp_before(entries, index)
        if isinstance(stamp, str) and stamp and before is not None:
            when, then = _when(stamp), _when(before)
            if when is not None and then is not None and when - then > cold_after:
                points.append(index)
    newest = _stamp_before(entries, len(entries))
    latest = _when(newest) if newest is not None else None
    if latest is None or now - latest > cold_after:  # no time at all: assume cold
        points.append(len(entries))
    return points


#: Lines the CLI writes just before a prompt, stamped with the prompt's own time: they
#: say nothing of when the session last spoke (a cold resume behind one looked warm).
PROMPT_TIMED = frozenset({"queue-operation"})


def _stamp_before(entries: list[Entry], index: int) -> str | None:
    """The timestamp of the nearest line before ``index`` that has one (lines stamped
    with the next prompt's time, :data:`PROMPT_TIMED`, skipped)."""
    for back in range(index - 1, -1, -1):
        if entries[back].get("type") in PROMPT_TIMED:
            continue
        stamp = entries[back].get("timestamp")
        if isinstance(stamp, str) and stamp:
            return stamp
    return None


@functools.lru_cache(maxsize=4096)  # each load reads the same prompts' stamps again
def _when(stamp: str) -> float | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def is_prompt(entry: Entry) -> bool:
    """A user line that says something (a prompt), not one carrying tool results."""
    if entry.get("type") != "user":
        return False
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return True
    return isinstance(content, list) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def never_masked(tool_name: str | None) -> bool:
    return bool(tool_name) and str(tool_name).startswith(NEVER_MASKED)


def placeholder(n: int, path: Path | str, english: bool | None = None) -> str:
    """The one line a masked result becomes, in the language in effect at load time
    (``english``: already looked up, once per load)."""
    if english is None:
        from flower.kernel.lang import EN, current

        english = current() == EN
    return (MASK_TEXT_EN if english else MASK_TEXT).format(n=f"{n:,}", path=path)


def masked_text(content: Any, line_for: Callable[[str], str]) -> tuple[Any, int]:
    """``content`` with its text replaced by placeholders, and the characters saved.

    ``line_for(text)`` stores ``text`` whole (in a file named :data:`MASKED_NAME`) and
    returns its :func:`placeholder`; it raises ``OSError``/``ValueError`` when it cannot,
    and then ``content`` is returned as it was. A string is masked whole; in a list, each
    text block of :data:`SMALL_TEXT` or more gets its own file and placeholder, and image
    or document blocks stay.
    """
    if isinstance(content, str):
        line = line_for(content)
        return line, len(content) - len(line)
    if not isinstance(content, list):
        return content, 0
    out: list[Any] = []
    saved = 0
    for item in content:
        if isinstance(item, dict) and item.get("type") == "text":
            body = str(item.get("text", ""))
            if len(body) >= SMALL_TEXT:
                line = line_for(body)
                saved += len(body) - len(line)
                item = {**item, "text": line}
        out.append(item)
    return out, saved


def maskable(block: dict[str, Any], policy: MaskPolicy) -> bool:
    return text_length(block.get("content")) >= max(policy.min_chars, 1)
