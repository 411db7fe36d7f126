"""What the pieces of a step share, below all of them: the Runtime as they see it, and the
state of the turn in flight.

The attempt (``runtime/attempt.py``), the relay (``runtime/relay.py``), the refusals
(``runtime/refusals.py``), the stream reading (``runtime/stream_reading.py``) and the books
(``runtime/bookkeeping.py``) all run for one :class:`~flower.runtime.runner.Runtime`, and the
Runtime imports every one of them. Typed against the Runtime itself they would import it
back: a cycle. So they are typed against :class:`RuntimeParts`, the attributes they read
of it (the Runtime satisfies it without naming it), and the state they share lives here,
where each of them and the Runtime import it from: :class:`Live` (the turn running now,
which another thread touches when the human interrupts) and :class:`Words` (the human's
words for a paused step).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from claude_agent_sdk.types import SessionStore

    from flower.kernel.agent_spec import HandoffPolicy
    from flower.records.workbench import Workbench
    from flower.roles.sandbox import Sandbox
    from flower.runtime.resilience import Resilience

__all__ = ["PAUSED", "Live", "RuntimeParts", "Words"]


class RuntimeParts(Protocol):
    """What an attempt, the relay and the refusals read of the Runtime that runs them.

    Read-only, so the Runtime's own attributes (and a test's stand-in) satisfy it as
    they are; :class:`~flower.runtime.runner.Runtime` documents each one. ``INTERRUPTED``
    and ``HANDOFF_DUE`` are the errors of an attempt the human interrupted and of one
    ended at the handoff point (the Runtime's class constants).
    """

    @property
    def INTERRUPTED(self) -> str: ...
    @property
    def HANDOFF_DUE(self) -> str: ...
    @property
    def workspace(self) -> Path: ...
    @property
    def run_dir(self) -> Path: ...
    @property
    def workbench(self) -> Workbench | None: ...
    @property
    def protected(self) -> Set[Path]: ...
    @property
    def store(self) -> SessionStore: ...
    @property
    def portable(self) -> bool: ...
    @property
    def spill_threshold(self) -> int | None: ...
    @property
    def sandbox(self) -> Sandbox: ...
    @property
    def resilience(self) -> Resilience: ...
    @property
    def handoff(self) -> HandoffPolicy: ...
    @property
    def on_session(self) -> Callable[[str], None] | None: ...
    @property
    def ctx(self) -> dict[str, Any] | None: ...


class Live:
    """The turn running now: its stop switch, the human's remark, the context level.

    :meth:`interrupt` may be called from any thread. The stop switch is an
    ``anyio.Event`` of the loop running the attempt, which must only be set from that
    loop's thread; the set is scheduled into the loop (``call_soon_threadsafe``), never
    waited for, so a UI thread cannot deadlock against the loop. A lock makes "is a turn
    running, then record the remark" one step against the attempt closing at the same
    moment.

    A ``signal.signal`` handler runs in the loop's own thread between two bytecodes,
    possibly inside :meth:`open` or :meth:`close` or while the loop sleeps in its
    selector. So the set is scheduled from that thread too (a plain ``set()`` would not
    wake the selector: the turn would stop only when the CLI next wrote something), the
    lock is re-entrant (the handler must not wait for a lock its own thread holds), and
    the turn is one attribute stored in one step (the handler never sees half a turn).
    """

    def __init__(self) -> None:
        self.ctx = 0
        #: The context window of the session in flight (:meth:`HandoffPolicy.window_for`).
        self.window = 0
        #: The window is being asked for (:mod:`flower.runtime.windows`): a level past the
        #: conservative plan's handoff point waits for the answer instead of handing off.
        self.asking = False
        self.warned = False
        self.due = False
        self._lock = threading.RLock()
        #: The running turn: its ``anyio.Event`` and the loop's thread-safe scheduler;
        #: ``None`` between turns.
        self._turn: tuple[Any, Callable[[Callable[[], object]], object]] | None = None
        self._said: str | None = None

    @property
    def running(self) -> bool:
        return self._turn is not None

    def reset_level(self) -> None:
        self.ctx, self.warned = 0, False

    def open(self, stop: Any) -> None:
        """Start a watched turn (in the loop's thread) with ``stop`` as its switch."""
        schedule = _scheduler()
        with self._lock:
            self._said, self.due = None, False
            self._turn = (stop, schedule)

    def close(self) -> str | None:
        """End the turn; returns the human's remark if one arrived for it."""
        with self._lock:
            self._turn = None  # first: a remark from now on is refused, never dropped
            said, self._said = self._said, None
        return said

    def interrupt(self, said: str) -> bool:
        with self._lock:
            turn = self._turn
            if turn is None:
                return False
            stop, schedule = turn
            try:
                schedule(stop.set)
            except RuntimeError:  # the loop has just closed: nothing is running
                return False
            self._said = said
            return True


#: The remark :meth:`Live.interrupt` carries for a pause: stop now, the words come later.
PAUSED = "\x00paused"


class Words:
    """The human's words for a paused step: awaited by the run loop, given from any thread.

    After a pause the loop waits here, not in a turn, so nothing runs while the human
    types; :meth:`give` (from the input thread or the loop) ends the wait.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: tuple[Any, Callable[[Callable[[], object]], object]] | None = None

    @property
    def waiting(self) -> bool:
        return self._pending is not None

    async def wait(self) -> str:
        """The words, once given (blank when the human said nothing)."""
        import anyio

        got: list[str] = []
        done = anyio.Event()
        schedule = _scheduler()

        def deliver(said: str) -> None:
            got.append(said)
            done.set()

        with self._lock:
            self._pending = (deliver, schedule)
        try:
            await done.wait()
        finally:
            with self._lock:
                self._pending = None
        return got[0]

    def give(self, said: str) -> bool:
        """Hand ``said`` to the waiting loop; ``False`` when nothing waits."""
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is None:
            return False
        deliver, schedule = pending
        try:
            schedule(lambda: deliver(said))
        except RuntimeError:  # the loop is gone: nothing waits any more
            return False
        return True


def _scheduler() -> Callable[[Callable[[], object]], object]:
    """How any thread (the loop's own included) gets a callback run in the current event
    loop, non-blocking, waking the loop if it sleeps."""
    import asyncio

    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:  # anyio on trio
        import trio

        token = trio.lowlevel.current_trio_token()
        return token.run_sync_soon
