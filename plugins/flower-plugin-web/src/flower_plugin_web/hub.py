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


@dataclass
class Hub:
    enabled: bool = False
    where: Where | None = None
    channel: Any = None
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=KEEP))
    next_id: int = 1
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _listeners: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]] = field(
        default_factory=list
    )

    def publish(self, kind: str, payload: Any, step: str | None = None, at: float = 0.0) -> None:
        """Number an event, keep it, hand it to every connected page; from any thread."""
        with self._lock:
            item = {
                "id": self.next_id,
                "kind": kind,
                "step": step,
                "at": at or time.time(),
                "payload": payload,
            }
            self.next_id += 1
            self.events.append(item)
            listeners = list(self._listeners)
        for loop, queue in listeners:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # that page's loop is gone
                self.unlisten(queue)

    def listen(self, after: int) -> tuple[list[dict[str, Any]], asyncio.Queue[dict[str, Any]]]:
        """The kept events after id ``after`` and a queue of the ones to come, atomically
        (no event is missed or sent twice between the two)."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        with self._lock:
            missed = [e for e in self.events if e["id"] > after]
            self._listeners.append((asyncio.get_running_loop(), queue))
        return missed, queue

    def unlisten(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        with self._lock:
            self._listeners = [(lp, q) for lp, q in self._listeners if q is not queue]

    def pending(self) -> list[Any]:
        """The questions waiting for an answer now."""
        pending = getattr(self.channel, "pending", None)
        return list(pending()) if callable(pending) else []

    def recent(self, limit: int = 60) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.events)[-limit:]


#: The one hub of this process: the hooks and the server meet here.
HUB = Hub()
