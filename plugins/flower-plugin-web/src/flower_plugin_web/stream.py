"""The live stream: server-sent events over a plain ``GET /events``.

The first message says which run this is (``event: run``, the process's segment) and
whether the page must start over (``reset``): its ``Last-Event-ID`` is from another
process, or older than what the hub keeps. Then what the page missed, then what comes.
Every event's id is ``<segment>-<n>``.

A page that stops reading is dropped, never buffered forever: the hub keeps one ring
for all pages (a page is a cursor), a write the page has not taken within
``write_seconds`` closes its connection, and a page that falls a whole ring behind
has its stream ended (it reconnects and gets a fresh copy).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import orjson

from flower_plugin_web.hub import Hub, Item, Lagged, Listener

#: Seconds between keep-alive comments on an idle stream.
PING = 15.0
#: Bytes of events in one write to a page (about).
CHUNK = 256 * 1024
HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"x-accel-buffering", b"no"),
]


def wire(hub: Hub, item: Item) -> bytes:
    """One event on the wire, serialised once whatever the number of pages; a value
    JSON has no form for is sent as its ``str``."""
    if item.wire is None:
        data = orjson.dumps(hub.wire(item), default=str, option=orjson.OPT_NON_STR_KEYS)
        item.wire = b"id: %s\nevent: flower\ndata: %s\n\n" % (
            hub.outside(item.n).encode(),
            data,
        )
    return item.wire


def _chunks(hub: Hub, items: list[Item]) -> list[bytes]:
    """The events as writes of about ``CHUNK`` bytes: each write waits until the page
    has taken the last (flow control), so a slow page holds one chunk, not a backlog."""
    chunks, current, size = [], [], 0
    for item in items:
        data = wire(hub, item)
        current.append(data)
        size += len(data)
        if size >= CHUNK:
            chunks.append(b"".join(current))
            current, size = [], 0
    if current:
        chunks.append(b"".join(current))
    return chunks


#: An event id as the page got it: this process's segment and a number. Anything else
#: (empty but for spaces, huge, negative, ``²`` or other non-ASCII digits, another run's
#: segment, garbage) means "start over", never an error: ``int()`` of 5,000 digits, or of
#: ``"²"`` (which ``str.isdigit`` accepts), once answered 500.
EVENT_ID = re.compile(r"([0-9a-f]{8})-([0-9]{1,18})", re.ASCII)


def where_from(hub: Hub, last_event_id: str | None) -> tuple[int, bool]:
    """``(after, ours)`` for a page's ``Last-Event-ID``: the number to continue after,
    and whether the id was this process's (``False``: start over)."""
    if not last_event_id:
        return 0, True
    given = last_event_id.strip()
    found = EVENT_ID.fullmatch(given) if len(given) <= 64 else None
    if found is None or found.group(1) != hub.segment:
        return 0, False
    return int(found.group(2)), True


class EventStream:
    """The ASGI response of ``GET /events`` for one page."""

    def __init__(
        self,
        hub: Hub,
        after: int,
        ours: bool,
        *,
        write_seconds: float,
        drop: Callable[[dict[str, Any]], bool] | None = None,
        ping: float = PING,
    ) -> None:
        self.hub = hub
        self.after = after
        self.ours = ours
        self.write_seconds = write_seconds
        self.drop = drop
        self.ping = ping

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        hub = self.hub
        missed, listener, continued = hub.listen(self.after)
        watcher = asyncio.ensure_future(_watch(receive, listener))
        try:
            start = {"type": "http.response.start", "status": 200, "headers": HEADERS}
            reset = not (self.ours and continued)
            hello = orjson.dumps({"segment": hub.segment, "reset": reset})
            if not await self._write(send, start, scope):
                return
            for chunk in [b"event: run\ndata: %s\n\n" % hello, *_chunks(hub, missed)]:
                if listener.closed or not await self._body(send, chunk, scope):
                    return
                await asyncio.sleep(0)
            while True:
                try:
                    arrived = await hub.wait(listener, self.ping)
                except Lagged:
                    break  # a ring behind: end it; the page comes back for a fresh copy
                if arrived is None:
                    break
                for chunk in _chunks(hub, arrived) if arrived else [b": ping\n\n"]:
                    if listener.closed or not await self._body(send, chunk, scope):
                        return
                    await asyncio.sleep(0)  # a page gone is noticed before the next write
            await self._write(send, {"type": "http.response.body", "body": b""}, scope)
        finally:
            watcher.cancel()
            hub.unlisten(listener)

    async def _body(self, send: Any, data: bytes, scope: dict[str, Any]) -> bool:
        message = {"type": "http.response.body", "body": data, "more_body": True}
        return await self._write(send, message, scope)

    async def _write(self, send: Any, message: dict[str, Any], scope: dict[str, Any]) -> bool:
        """Send, or drop a page that has not taken the last writes in ``write_seconds``."""
        try:
            async with asyncio.timeout(self.write_seconds):
                await send(message)
        except TimeoutError:
            if self.drop is not None:
                self.drop(scope)
            return False
        return True


async def _watch(receive: Any, listener: Listener) -> None:
    """Notice the page going away (``http.disconnect``) and end its stream."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            listener.closed = True
            listener.ready.set()
            return
