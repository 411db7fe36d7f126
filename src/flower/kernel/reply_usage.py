"""How full a context was, read from the API's ``usage`` block of a reply.

A fact about the API's replies that three places read: the events a watcher sees
(:func:`flower.kernel.events.normalize`), the stream the runtime reads, and the stored
transcript's lines (:mod:`flower.stores.transcript`). It sits in the kernel so the
lowest of them needs no store.
"""

from __future__ import annotations

from typing import Any


def context_size(usage: dict[str, Any]) -> int:
    """The context a reply was written in, from its API ``usage``.

    The API counts the prompt in three parts (fresh, read from cache, written to cache);
    the context is their sum. Anything that is not a count is ignored.
    """
    total = 0
    for field in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        value = usage.get(field)
        if isinstance(value, int) and not isinstance(value, bool):
            total += value
    return total
