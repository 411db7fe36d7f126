"""The store's own worker threads (``flower.stores.worker``): what anyio's hop did, kept."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from flower.stores.worker import Workers

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("WHO", default="nobody")


def test_the_work_runs_off_the_loop_in_the_callers_context() -> None:
    workers = Workers()

    async def main() -> tuple[str, bool]:
        WHO.set("caller")
        return await workers.run(lambda: (WHO.get(), threading.current_thread() is main_thread))

    main_thread = threading.current_thread()
    assert asyncio.run(main()) == ("caller", False)
    workers.close()


def test_a_thread_serves_one_root_task_after_another() -> None:
    """anyio started a thread for each root task; these stay (the fixed cost of a load)."""
    workers = Workers()
    loop = asyncio.new_event_loop()
    seen: set[threading.Thread] = set()  # the threads themselves: an ident is reused
    try:
        for _ in range(20):
            seen.add(loop.run_until_complete(workers.run(threading.current_thread)))
            time.sleep(0.005)  # as between two loads: the finished thread marks itself idle
    finally:
        loop.close()
        workers.close()
    # One thread, as a rule. A pool starts another when the caller's next call comes before
    # the finished thread has marked itself idle: CI saw two, and three with the machine
    # loaded and no pause between the calls. A thread a root task, as with anyio, is 20.
    assert len(seen) <= 4, seen


def test_an_exception_of_the_work_reaches_the_caller() -> None:
    workers = Workers()

    def fail() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        asyncio.run(workers.run(fail))
    workers.close()


def test_a_cancelled_caller_waits_for_its_work_to_end() -> None:
    workers = Workers()
    done = threading.Event()

    def slow() -> None:
        time.sleep(0.2)
        done.set()

    async def main() -> None:
        task = asyncio.ensure_future(workers.run(slow))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert done.is_set(), "the cancellation went on while the work still ran"

    asyncio.run(main())
    workers.close()


def test_closed_workers_start_again_when_used() -> None:
    workers = Workers()
    assert asyncio.run(workers.run(lambda: 1)) == 1
    workers.close()
    assert asyncio.run(workers.run(lambda: 2)) == 2
    workers.close()
