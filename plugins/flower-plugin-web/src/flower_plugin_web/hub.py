"""The hub: what the page knows of the run, fed by flower's hooks, read by the server.

flower's run lives in the main thread's event loop; the web server in a thread of its
own. Everything between them goes through here, under one lock: the events (numbered,
the last ``KEEP`` of them kept so a page that reconnects or reloads gets what it
missed), the human channel (answers and inbox lines from the page call its thread-safe
methods, so the page and the terminal answer alike and the first answer wins), and where
the run's files are. Only ``flower web`` turns the hub on; with the plugin merely
installed, plain ``flower`` runs exactly as before.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Events kept for pages that connect late or reconnect.
KEEP = 5000


@dataclass
class Where:
    """Where the run's files are (set by ``flower web`` before the run starts)."""

    workspace: Path
    run_dir: Path
    workbench: Path


class Listener:
    """One connected page: the events not yet sent to it, and a way to wake it.

    Waking a page in another thread's loop costs a system call; a run emits events in
    bursts (a tool call, its result, the text after it), so a wake is only scheduled
    when none is pending, and the page takes everything queued when it wakes.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.items: deque[dict[str, Any]] = deque()
        self.ready = asyncio.Event()
        self.scheduled = False
        self.closed = False  # the server is stopping: the stream ends

    def _wake(self) -> None:
        self.scheduled = False
        self.ready.set()

    async def take(self, timeout: float) -> list[dict[str, Any]] | None:
        """What arrived since the last call (``[]`` after ``timeout`` seconds of quiet,
        ``None`` once the hub is closing)."""
        try:
            await asyncio.wait_for(self.ready.wait(), timeout)
        except TimeoutError:
            return []
        if self.closed:
            return None
        self.ready.clear()
        taken = []
        while self.items:
            taken.append(self.items.popleft())
        return taken


@dataclass
class Hub:
    enabled: bool = False
    where: Where | None = None
    channel: Any = None
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=KEEP))
    next_id: int = 1
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _listeners: list[Listener] = field(default_factory=list)

    def publish(self, kind: str, payload: Any, step: str | None = None, at: float = 0.0) -> None:
        """Number an event, keep it, hand it to every connected page; from any thread."""
        item = {"id": 0, "kind": kind, "step": step, "at": at or time.time(), "payload": payload}
        wake = []
        with self._lock:
            item["id"] = self.next_id
            self.next_id += 1
            self.events.append(item)
            for listener in self._listeners:
                listener.items.append(item)
                if not listener.scheduled:
                    listener.scheduled = True
                    wake.append(listener)
        for listener in wake:
            try:
                listener.loop.call_soon_threadsafe(listener._wake)
            except RuntimeError:  # that page's loop is gone
                self.unlisten(listener)

    def listen(self, after: int) -> tuple[list[dict[str, Any]], Listener]:
        """The kept events after id ``after`` and a listener for the ones to come, taken
        together under the lock (no event is missed or sent twice between the two)."""
        listener = Listener(asyncio.get_running_loop())
        with self._lock:
            missed = [e for e in self.events if e["id"] > after]
            self._listeners.append(listener)
        return missed, listener

    def close(self) -> None:
        """End every page's stream (the server is stopping); from any thread."""
        with self._lock:
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener.closed = True
            try:
                listener.loop.call_soon_threadsafe(listener._wake)
            except RuntimeError:  # that loop is gone already
                pass

    def unlisten(self, listener: Listener) -> None:
        with self._lock:
            self._listeners = [one for one in self._listeners if one is not listener]

    def pending(self) -> list[Any]:
        """The questions waiting for an answer now."""
        pending = getattr(self.channel, "pending", None)
        return list(pending()) if callable(pending) else []

    def recent(self, limit: int = 60) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.events)[-limit:]


#: The one hub of this process: the hooks and the server meet here.
HUB = Hub()
