"""The store's worker threads: its database work off the event loop, at a small fixed cost.

Why not ``anyio.to_thread.run_sync`` (what the store used): anyio keeps its idle worker
threads per *root task* and stops them when that task ends, so every
``loop.run_until_complete`` (and every short-lived root task) started a new thread for its
first call. A load of a ten-line session cost 0.5 ms of CPU that way, half of it the hop
(issue 34: a resume loads again and again, and the fixed cost's budget is 0.5 ms). These
threads belong to the store instead and stay between calls, whichever task calls.

What is kept of anyio's behaviour: the caller's context variables reach the work (the
redactor in effect, the language), and a cancelled caller still waits for its work to end
before the cancellation goes on (an append that was cancelled has committed or rolled back
by then; nothing keeps writing behind the caller's back). Outside an asyncio loop (anyio on
trio) the work goes through anyio as before.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio.to_thread

T = TypeVar("T")

#: Threads one store runs its work in at most at once: a write waiting for another
#: process's lock must not hold up a load (anyio's default limit was 40 for the process).
WORKERS = 16


class Workers:
    """A store's own pool of worker threads, started on first use."""

    def __init__(self, name: str = "flower-store") -> None:
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` in a worker thread, in a copy of the caller's context."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no asyncio loop: anyio on trio
            return await anyio.to_thread.run_sync(work, *args)
        context = contextvars.copy_context()
        future = loop.run_in_executor(self._executor(), context.run, work, *args)
        cancelled = False
        while True:
            try:
                result = await asyncio.shield(future)
            except asyncio.CancelledError:
                if future.done():  # the work's own cancellation (the pool shut down)
                    raise
                cancelled = True  # wait for the work first, as anyio's shielded call did
                continue
            break
        if cancelled:
            raise asyncio.CancelledError
        return result

    def _executor(self) -> ThreadPoolExecutor:
        pool = self._pool
        if pool is None:
            with self._lock:
                pool = self._pool
                if pool is None:
                    pool = self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix=self._name)
        return pool

    def close(self) -> None:
        """Let the idle threads go (running work finishes); the next call starts anew."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)
