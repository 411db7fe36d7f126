"""What the page accepts: how big, how often, how many at once.

Whatever the page sends ends up somewhere that costs: an inbox line is written into the
brief (and re-sent to every page on every reconnect), a side question starts a model
process (memory and real money), a body is parsed in the server's thread. So every
request is bounded before any of that happens, and each refusal is one line a person
can act on, with the status that says why (413 too big, 415 not JSON, 429 too many).
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request


@dataclass(frozen=True)
class Limits:
    """The page's bounds; the defaults suit one person and a few tabs."""

    body: int = 16 * 1024  # bytes in a request body
    line: int = 4000  # characters in an inbox line or an answer
    question: int = 2000  # characters in a side question
    body_seconds: float = 10.0  # to receive a body
    asides: int = 2  # side questions being answered at once, all pages together
    posts_burst: int = 30  # changes in a burst...
    posts_per_second: float = 2.0  # ...then this many a second
    doc_bytes: int = 2 * 1024 * 1024  # of a document shown (the rest is cut)
    streams: int = 128  # pages following the live stream at once
    connections: int = 256  # open connections (file descriptors), at most
    write_seconds: float = 30.0  # for a page to take a write before it is dropped
    untrusted_seconds: float = 10.0  # a connection may stay without showing the token


class Refused(Exception):
    """A request the page turns down: the status and the one line to show."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def read_json(request: Request, limits: Limits) -> dict[str, Any]:
    """The request's body as one flat JSON object (strings, numbers, booleans, null).

    ``Content-Type: application/json`` only (a form post from another page is not one);
    at most ``limits.body`` bytes, in at most ``limits.body_seconds``; no nesting, so a
    deeply nested body is a 400, never a recursion error.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refused(415, "send JSON (Content-Type: application/json)")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limits.body:
        raise Refused(413, f"the request is too large (at most {limits.body} bytes)")
    body = bytearray()
    try:
        async with asyncio.timeout(limits.body_seconds):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limits.body:
                    raise Refused(413, f"the request is too large (at most {limits.body} bytes)")
    except TimeoutError:
        raise Refused(408, "the request took too long to arrive") from None
    except ClientDisconnect:
        raise Refused(400, "the request was cut off") from None
    try:
        value = orjson.loads(bytes(body))  # a recursion limit of its own: never a crash
    except orjson.JSONDecodeError:
        raise Refused(400, "the request is not valid JSON") from None
    flat = (str, int, float, bool, type(None))
    if not isinstance(value, dict) or not all(isinstance(v, flat) for v in value.values()):
        raise Refused(400, "send one JSON object of plain values")
    return value


def text_field(body: dict[str, Any], name: str, most: int, what: str) -> str:
    """``body[name]`` as stripped text of at most ``most`` characters."""
    value = body.get(name)
    text = value.strip() if isinstance(value, str) else ""
    if len(text) > most:
        raise Refused(413, f"{what} is too long ({len(text)} characters; at most {most})")
    return text


class Bucket:
    """A token bucket: ``burst`` at once, then ``rate`` a second. Thread-safe."""

    def __init__(self, burst: int, rate: float) -> None:
        self.burst = float(burst)
        self.rate = rate
        self.tokens = float(burst)
        self.stamp = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens < 1:
                return False
            self.tokens -= 1
            return True


class Slots:
    """Side questions in flight: one per page, ``most`` for all pages together."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.busy: set[str] = set()

    def claim(self, page: str) -> None:
        """Reserve a slot for ``page`` or raise :class:`Refused` (429) saying why."""
        if page in self.busy:
            raise Refused(429, "this page's side question is still being answered: wait for it")
        if len(self.busy) >= self.most:
            raise Refused(
                429, f"{len(self.busy)} side questions are being answered: ask when one is done"
            )
        self.busy.add(page)

    def release(self, page: str) -> None:
        self.busy.discard(page)
