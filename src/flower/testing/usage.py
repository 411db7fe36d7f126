"""What a request costs, the way the Messages API counts it: tokens and prompt caching.

The scripted model used to report ``input_tokens`` as the request's bytes / 4 and no
caching, so every offline cost was a full-price read of the whole context on every turn:
neither what a run costs nor what a change to old context costs. This module emulates
the API's accounting (https://platform.claude.com/docs/en/build-with-claude/prompt-caching):

- the prompt is read in the API's order, tools -> system -> messages, as a list of blocks
  (each tool definition, each system block, each content block of each message);
- a block carrying ``cache_control`` is a *breakpoint* (the CLI marks the system prompt's
  last block and the newest message's last block, ``{"type": "ephemeral"}``); the prefix
  up to each breakpoint is written to the cache once the request is served, if it is at
  least ``min_tokens`` long, for its TTL (5 minutes, or ``"ttl": "1h"``);
- a request reads the longest cached prefix that ends at a block boundary no more than
  ``lookback`` (20) blocks before one of its breakpoints, and refreshes the TTL of every
  cached prefix it covers (the system prompt's entry lives as long as the conversation
  that keeps reading past it: an assumption, the API documents only "refreshed each time
  the cached content is used");
- usage: ``cache_read_input_tokens`` is that prefix, ``cache_creation_input_tokens`` what
  lies between it and the last breakpoint, ``input_tokens`` what follows the last
  breakpoint (all of the prompt when nothing is cached or marked).

A block is identified by its JSON as sent, key order included (a reordered object is another
prompt to the API). ``cache_control`` is left out of a block's identity: the CLI moves its
marker to the newest message each turn, and the API matches content, not markers. Any change
to a block (a tool result masked at resume, a new date in the environment message) changes
every prefix from that block on, so the rest of the prompt is written again: the cost that
makes reshaping old context worth doing only in chunks.

Time is a :class:`Clock` the tests (and a script's ``elapse``) advance, so a TTL can run
out without waiting five minutes.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .tokens import count_tokens

__all__ = [
    "MAX_BREAKPOINTS",
    "TTL",
    "Clock",
    "PromptCache",
    "cache_rules_broken",
    "output_tokens",
    "prompt_blocks",
]

#: Seconds a cache entry lives after its last write or hit, by ``cache_control.ttl``.
TTL = {"5m": 300.0, "1h": 3600.0}
#: The most blocks one request may mark with ``cache_control`` (the API refuses a fifth).
MAX_BREAKPOINTS = 4
#: Framing the API adds per content block and per message (role markers, separators):
#: a one-character message counts 8 tokens with ``count_tokens``, 7 of them framing.
BLOCK_FRAMING = 3
MESSAGE_FRAMING = 4
#: A rough count for an image or a document block (the API bills by pixels and pages).
MEDIA_TOKENS = 1500


@dataclass
class Clock:
    """Real time plus an offset a test advances: ``clock.advance(301)`` expires 5-minute
    cache entries at once."""

    offset: float = 0.0

    def now(self) -> float:
        return time.monotonic() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += max(0.0, seconds)


@dataclass
class _Block:
    digest: str  # of the prefix up to and including this block
    tokens: int
    ttl: str | None  # "5m"/"1h" when the block is a breakpoint


@dataclass
class PromptCache:
    """The API's prompt cache for one emulated organisation (thread-safe).

    Attributes:
        clock: The time entries expire by.
        min_tokens: A shorter prefix is never cached (the API's minimum is 1024-4096
            tokens by model).
        lookback: How many blocks before a breakpoint the API looks for a cached prefix.
    """

    clock: Clock = field(default_factory=Clock)
    min_tokens: int = 1024
    lookback: int = 20
    _entries: dict[str, tuple[float, str]] = field(default_factory=dict)
    _sizes: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def account(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Serve ``body``: the ``usage`` the API would report, the cache updated."""
        with self._lock:
            blocks = list(self._blocks(body))
            return self._account(blocks)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _blocks(self, body: Mapping[str, Any]) -> Iterator[_Block]:
        prefix = hashlib.sha1(str(body.get("model") or "").encode())
        for part, ttl in prompt_blocks(body):
            # as sent, key order included: the API matches the prompt exactly, and a line
            # stored with its keys reordered (Postgres's JSONB did) is another prompt
            key = json.dumps(part, ensure_ascii=False, default=str)
            prefix.update(hashlib.sha1(key.encode("utf-8", "surrogatepass")).digest())
            own = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()
            tokens = self._sizes.get(own)
            if tokens is None:
                tokens = self._sizes[own] = _block_tokens(part)
            yield _Block(prefix.hexdigest(), tokens, ttl)

    def _account(self, blocks: list[_Block]) -> dict[str, Any]:
        now = self.clock.now()
        ends: list[int] = []  # tokens up to and including each block
        running = 0
        for block in blocks:
            running += block.tokens
            ends.append(running)
        total = running
        breakpoints = [i for i, b in enumerate(blocks) if b.ttl is not None]
        hit = -1
        for point in breakpoints:
            for index in range(point, max(point - self.lookback, -1), -1):
                entry = self._entries.get(blocks[index].digest)
                if entry is not None and entry[0] > now:
                    hit = max(hit, index)
                    break
        read = ends[hit] if hit >= 0 else 0
        for block in blocks[: hit + 1]:  # a read refreshes every cached prefix it covers
            entry = self._entries.get(block.digest)
            if entry is not None and entry[0] > now:
                self._entries[block.digest] = (now + TTL[entry[1]], entry[1])
        written = {"5m": 0, "1h": 0}
        last = hit
        for point in breakpoints:
            if point <= hit:
                continue
            if ends[point] >= self.min_tokens:
                ttl = str(blocks[point].ttl)
                written[ttl] += ends[point] - (ends[last] if last >= 0 else 0)
                self._entries[blocks[point].digest] = (now + TTL[ttl], ttl)
                last = point
        created = written["5m"] + written["1h"]
        self._expire(now)
        return {
            "input_tokens": total - read - created,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": written["5m"],
                "ephemeral_1h_input_tokens": written["1h"],
            },
        }

    def _expire(self, now: float) -> None:
        if len(self._entries) > 4096:
            self._entries = {k: v for k, v in self._entries.items() if v[0] > now}


def prompt_blocks(body: Mapping[str, Any]) -> Iterator[tuple[Any, str | None]]:
    """``(block, ttl)`` for every block of the prompt in the API's order, ``block`` without
    its ``cache_control`` and ``ttl`` set when it had one (a breakpoint)."""
    for tool in body.get("tools") or ():
        yield _strip(tool)
    system = body.get("system")
    if isinstance(system, str) and system:
        yield {"system": system}, None
    elif isinstance(system, list):
        for block in system:
            yield _strip(block)
    for message in body.get("messages") or ():
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):  # the API reads it as one text block
            content = [{"type": "text", "text": content}]
        for n, block in enumerate(content or ()):
            part, ttl = _strip(block)
            yield {"role": role, "first": n == 0, "block": part}, ttl


def cache_rules_broken(body: Mapping[str, Any]) -> str | None:
    """What the API would refuse in ``body``'s cache marks (a 400), or ``None``.

    Two rules, as the API states them for prompt caching: at most :data:`MAX_BREAKPOINTS`
    blocks carry ``cache_control``, and a mark with the hour's TTL never comes after one
    with five minutes' (a longer-lived prefix must come first, in the order tools ->
    system -> messages). flower places marks of its own in a resumed history
    (:mod:`flower.stores.anchor`); a request breaking either rule fails against the real
    API, so the scripted model refuses it the same way rather than bill it."""
    ttls = [ttl for _, ttl in prompt_blocks(body) if ttl is not None]
    if len(ttls) > MAX_BREAKPOINTS:
        return (
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(ttls)}."
        )
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        return (
            "a cache_control block with ttl='1h' must not come after one with "
            "ttl='5m': blocks with longer TTLs must come first"
        )
    return None


def _strip(block: Any) -> tuple[Any, str | None]:
    if not isinstance(block, Mapping) or "cache_control" not in block:
        return block, None
    marker = block.get("cache_control")
    ttl = marker.get("ttl") if isinstance(marker, Mapping) else None
    return {k: v for k, v in block.items() if k != "cache_control"}, ("1h" if ttl == "1h" else "5m")


def _block_tokens(part: Any) -> int:
    """Tokens of one prompt block: its text, the framing around it."""
    if isinstance(part, Mapping) and "role" in part:
        framing = BLOCK_FRAMING + (MESSAGE_FRAMING if part.get("first") else 0)
        return framing + _content_tokens(part.get("block"))
    return BLOCK_FRAMING + _content_tokens(part)


def _content_tokens(block: Any) -> int:
    if isinstance(block, str):
        return count_tokens(block)
    if isinstance(block, list):
        return sum(_content_tokens(b) for b in block)
    if not isinstance(block, Mapping):
        return count_tokens(json.dumps(block, default=str))
    kind = block.get("type")
    if kind == "text":
        return count_tokens(str(block.get("text", "")))
    if kind == "thinking":
        return count_tokens(str(block.get("thinking", "")))
    if kind == "tool_use":
        tool_input = json.dumps(block.get("input"), ensure_ascii=False, default=str)
        return count_tokens(str(block.get("name", ""))) + count_tokens(tool_input)
    if kind == "tool_result":
        return _content_tokens(block.get("content", ""))
    if kind in ("image", "document"):
        return MEDIA_TOKENS
    if "system" in block and len(block) == 1:
        return count_tokens(str(block["system"]))
    return count_tokens(json.dumps(block, ensure_ascii=False, default=str))


def output_tokens(content: list[dict[str, Any]]) -> int:
    """Tokens of a reply's content blocks (what ``usage.output_tokens`` counts)."""
    return max(1, sum(_content_tokens(block) for block in content))
