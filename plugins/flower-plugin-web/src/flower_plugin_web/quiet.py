"""What the page's server says on the run's terminal: little, and never a traceback
per connection.

The terminal is the run's: a flood of broken clients must not flood it (once, 153 MB of
tracebacks in 90 seconds). uvicorn's complaints and asyncio's (an ``accept()`` out of
descriptors, a reset) go through :class:`Hush`: one line per kind of message a minute,
without the traceback.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any


class Hush(logging.Filter):
    """At most one record per ``every`` seconds for each message, and no traceback:
    a flood of broken clients must not flood the run's terminal."""

    def __init__(self, every: float = 60.0) -> None:
        super().__init__()
        self.every = every
        self.last: dict[str, float] = {}
        self.hushed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        key = str(record.msg)[:80]
        now = time.monotonic()
        if now - self.last.get(key, -self.every) < self.every:
            self.hushed += 1
            return False
        self.last[key] = now
        if len(self.last) > 256:
            self.last.clear()
        record.exc_info = None
        record.exc_text = None
        return True


def quiet_loop(loop: asyncio.AbstractEventLoop, hush: Hush) -> None:
    """asyncio's complaints about the page's sockets (an ``accept()`` out of descriptors,
    a reset) go through ``hush`` too, as one short line."""
    log = logging.getLogger("flower_plugin_web")

    def handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        text = str(context.get("message", "error"))
        if exc is not None:
            text += f" ({type(exc).__name__}: {exc})"
        record = log.makeRecord(log.name, logging.WARNING, __file__, 0, text, (), None)
        if hush.filter(record):
            log.handle(record)

    loop.set_exception_handler(handler)
