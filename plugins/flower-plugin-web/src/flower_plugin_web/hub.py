"""The hub: what the page knows of the run, fed by flower's hooks, read by the server.

flower's run lives in the main thread's event loop; the web server in a thread of its
own. Everything between them goes through here, under one lock: the events, the human
channel (answers and inbox lines from the page call its thread-safe methods, so the
page and the terminal answer alike and the first answer wins), and where the run's
files are. Only ``flower web`` turns the hub on; with the plugin merely installed,
plain ``flower`` runs exactly as before.

Two things keep the run safe from its pages:

- The events live in one ring of the last ``KEEP``; a page is only a cursor into it.
  Publishing costs the run the same with one page or a hundred (one wake-up call per
  burst, whatever the number of pages), and a page that stops reading holds nothing:
  once it falls a whole ring behind, its stream is ended and, when it comes back, it
  gets a fresh copy of the ring instead of an unbounded backlog.
- Every id the page sees carries this process's *segment*, a random tag drawn at
  start: event ``3fa9c2e1-17``, question ``3fa9c2e1-q1``. flower's own ids restart at
  ``q1`` in every process, so a tab left open across two runs would otherwise answer
  the new run's ``q1`` with a click meant for the old one; the hub translates between
  the two kinds of ids, so flower's core keeps its own.

Each event reaches the page with the terminal's words for it (``words.py``), made on
the server's thread when a page first needs them, never on the run's.

When the run is over, :meth:`Hub.end` sends the last event, ``ended`` (how it ended, the
closing line, the total): the page says the run is over and stops reconnecting. The
server's stop then lets each stream send what it has not sent yet before it ends.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower_plugin_web.cut import TEXT as TEXT  # the one text's cut, as the tests know it
from flower_plugin_web.cut import shortened
from flower_plugin_web.words import ASIDE_STEP, Line, Words

#: Events kept for pages that connect late or reconnect.
KEEP = 5000
#: At most this many events go out in one write to a page.
BATCH = 1000
#: Event kinds whose payload carries a human-channel id (``q1``, ``m1``).
WITH_IDS = ("ask", "mail")
#: Event kinds the hub counts as they pass (the totals, the closing facts).
COUNTED = frozenset({"result", "aside", "end"})


@dataclass
class Where:
    """Where the run's files are (set by ``flower web`` before the run starts)."""

    workspace: Path
    run_dir: Path
    workbench: Path


@dataclass(slots=True)
class Item:
    """One event as kept: its number in this process, and its bytes on the wire once a
    page has needed them (serialised once, whatever the number of pages)."""

    n: int
    kind: str
    step: str | None
    at: float
    payload: Any
    wire: bytes | None = None
    lines: list[Line] | None = None  # the terminal's words for it, once a page needed them


class Lagged(Exception):
    """A page fell a whole ring behind: its stream ends, it reconnects for a fresh copy."""


class Listener:
    """One connected page: how far it has read, and how to wake it (on its own loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cursor: int) -> None:
        self.loop = loop
        self.cursor = cursor
        self.ready = asyncio.Event()
        self.closed = False  # the page went away: end now
        self.ending = False  # the server is stopping: send what is left, then end


class Hub:
    """The run's events, human channel and files, as the page's server sees them."""

    def __init__(self, enabled: bool = False, *, keep: int = KEEP) -> None:
        self.enabled = enabled
        self.where: Where | None = None
        self.channel: Any = None
        #: This process's tag in every id the page sees (8 hex digits).
        self.segment = secrets.token_hex(4)
        self.keep = keep
        self.last = 0  # the number of the newest event (0: none yet)
        self._ring: list[Item | None] = [None] * keep
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []
        self._loops: dict[asyncio.AbstractEventLoop, int] = {}  # listeners per loop
        self._waking: set[asyncio.AbstractEventLoop] = set()
        #: The run's clock, for the closing line's wall time (as the terminal's view's).
        self.born = time.monotonic()
        self._words: Words | None = None
        self._words_lock = threading.Lock()
        self._said = 0  # the newest event the words have been made for
        #: What this process spent, as the pages count it: the steps, the side questions.
        self.steps_usd = 0.0
        self.side_usd = 0.0
        self.side_count = 0
        #: The terminal's closing facts (the session's ``end`` event), once it printed them.
        self.closing: dict[str, Any] | None = None
        #: The ``ended`` event's payload once the run is over: changes are refused then.
        self.over: dict[str, Any] | None = None
        self._asking: set[asyncio.Task[Any]] = set()  # side questions asked on a page

    # --- ids as the page sees them --------------------------------------------------------

    def outside(self, local: str | int) -> str:
        """The page's form of an event number or a channel id: ``<segment>-<id>``."""
        return f"{self.segment}-{local}"

    def inside(self, page_id: str) -> tuple[str, str] | None:
        """``(segment, local id)`` of a page's id, or ``None`` when it is no such id."""
        segment, dash, local = str(page_id).partition("-")
        if not dash or not local or len(segment) != 8:
            return None
        return segment, local

    # --- the run's side ---------------------------------------------------------------------

    def publish(self, kind: str, payload: Any, step: str | None = None, at: float = 0.0) -> None:
        """Number an event and keep it; wake the pages' loops (one call per loop and
        burst, never one per page). From any thread."""
        item = Item(0, kind, step, at or time.time(), payload)
        with self._lock:
            if kind in COUNTED:
                self._count(kind, payload, step)
            self.last += 1
            item.n = self.last
            self._ring[item.n % self.keep] = item
            if not self._loops:
                return
            loops = [loop for loop in self._loops if loop not in self._waking]
            self._waking.update(loops)
        for loop in loops:
            try:
                loop.call_soon_threadsafe(self._fan_out, loop)
            except RuntimeError:  # that loop is gone: so are its pages
                self._forget_loop(loop)

    def _count(self, kind: str, payload: Any, step: str | None) -> None:
        """Keep the totals the ``ended`` event falls back on (caller holds the lock)."""
        p = payload if isinstance(payload, dict) else {}
        if kind == "end":
            self.closing = p
        elif kind == "result" and step != ASIDE_STEP:  # a side question counts as its aside
            self.steps_usd += _usd(p.get("cost_usd"))
        elif kind == "aside" and p.get("answer") is not None:
            self.side_count += 1
            self.side_usd += _usd(p.get("cost_usd"))

    def tell(self, kind: str, payload: dict[str, Any]) -> None:
        """An event a page made (a side question asked there): to every page, and to the
        run's own view through the human channel's ``on_event``, so the terminal shows it
        as it shows its own. Not to the terminal once the run is over (it closed)."""
        self.publish(kind, payload)
        callback = getattr(self.channel, "on_event", None)
        if callback is None or self.over is not None:
            return
        from flower.kernel.events import Event

        try:
            callback(Event(kind, payload))
        except Exception:  # the terminal's view must never break the page
            pass

    def track(self, task: asyncio.Task[Any]) -> None:
        """A side question a page asked, running on the server's loop: cancelled when the
        run ends, as the terminal cancels its own."""
        with self._lock:
            self._asking.add(task)

        def done(_: Any) -> None:
            with self._lock:
                self._asking.discard(task)

        task.add_done_callback(done)

    def end(self, outcome: dict[str, Any]) -> None:
        """The run is over: the last event, ``ended``, tells every page how it ended;
        from now on changes are refused and the side questions still running stop."""
        with self._lock:
            self.over = outcome
            asking = list(self._asking)
        for task in asking:
            try:
                task.get_loop().call_soon_threadsafe(task.cancel)
            except RuntimeError:  # that loop is gone already
                pass
        self.publish("ended", outcome)

    def _fan_out(self, loop: asyncio.AbstractEventLoop) -> None:
        """On a server loop: wake its pages; each takes what it has not read yet."""
        with self._lock:
            self._waking.discard(loop)
            mine = [one for one in self._listeners if one.loop is loop]
        for listener in mine:
            listener.ready.set()

    def _forget_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            self._listeners = [one for one in self._listeners if one.loop is not loop]
            self._loops.pop(loop, None)
            self._waking.discard(loop)

    # --- the pages' side --------------------------------------------------------------------

    @property
    def first(self) -> int:
        """The number of the oldest event still kept."""
        return max(1, self.last - self.keep + 1)

    def listen(self, after: int) -> tuple[list[Item], Listener, bool]:
        """The kept events after number ``after``, a listener for the ones to come, and
        whether that continues the page's copy (``False``: ``after`` is from the future
        or older than the ring, so the page must start over from what is sent). Taken
        together under the lock: nothing is missed or sent twice between them."""
        listener = Listener(asyncio.get_running_loop(), 0)
        with self._lock:
            continued = self.first - 1 <= after <= self.last
            listener.cursor = after if continued else self.first - 1
            items = self._since(listener)
            self._listeners.append(listener)
            self._loops[listener.loop] = self._loops.get(listener.loop, 0) + 1
        return items, listener, continued

    def pages(self) -> int:
        """How many pages are connected now."""
        with self._lock:
            return len(self._listeners)

    async def wait(self, listener: Listener, timeout: float) -> list[Item] | None:
        """What arrived for ``listener`` (``[]`` after ``timeout`` seconds of quiet),
        ``None`` once it is closed, or once it is ending and has taken everything (the
        ``ended`` event reaches the page before its stream ends). Raises :class:`Lagged`
        if it fell a ring behind."""
        while True:
            if not listener.ending:
                try:
                    async with asyncio.timeout(timeout):
                        await listener.ready.wait()
                except TimeoutError:
                    return [] if not listener.closed else None
            listener.ready.clear()
            if listener.closed:
                return None
            with self._lock:
                items = self._since(listener)
            if items:
                return items
            if listener.ending:
                return None
            # woken for events an earlier take already carried: wait again

    def _since(self, listener: Listener) -> list[Item]:
        """The events after the listener's cursor, at most ``BATCH`` (caller holds the lock)."""
        if listener.cursor < self.first - 1:
            raise Lagged
        end = min(self.last, listener.cursor + BATCH)
        ring, keep = self._ring, self.keep
        items = [ring[n % keep] for n in range(listener.cursor + 1, end + 1)]
        listener.cursor = end
        if end < self.last:  # more to take: come back at once
            listener.ready.set()
        return items  # type: ignore[return-value]

    def unlisten(self, listener: Listener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)
                left = self._loops.get(listener.loop, 1) - 1
                if left:
                    self._loops[listener.loop] = left
                else:
                    self._loops.pop(listener.loop, None)
        listener.closed = True

    def close(self) -> None:
        """End every page's stream once it has sent what is left (the server is
        stopping); from any thread."""
        with self._lock:
            listeners, self._listeners = self._listeners, []
            self._loops.clear()
        for listener in listeners:
            listener.ending = True
            try:
                listener.loop.call_soon_threadsafe(listener.ready.set)
            except RuntimeError:  # that loop is gone already
                pass

    # --- what the page reads --------------------------------------------------------------

    def lines(self, item: Item) -> list[Line]:
        """The terminal's words for ``item``. The run view keeps state from event to
        event, so every event still kept before it goes through first, once, in order
        (on the server's thread, never on the run's)."""
        with self._words_lock:
            if item.lines is not None:
                return item.lines
            if self._words is None:
                self._words = Words(self.born)
            with self._lock:
                start = max(self._said + 1, self.first)
                kept = [self._ring[n % self.keep] for n in range(start, item.n)]
            for one in [*kept, item]:
                if one is None or one.lines is not None or one.n > item.n:
                    continue  # overwritten by a newer event, or done already
                try:  # the page's copy (long texts cut): a 1 MB text is never laid out
                    one.lines = self._words.say(one.kind, shortened(one.payload), one.step, one.at)
                except Exception:  # the view never raises; if it did, the raw payload stays
                    one.lines = []
            self._said = max(self._said, item.n)
            return item.lines or []

    def wire(self, item: Item) -> dict[str, Any]:
        """An event as the page sees it: ids with this process's segment, long texts cut
        (the page shows a gist; the run keeps the whole), and the terminal's words."""
        payload = shortened(item.payload)  # cut.py: what every page is sent stays bounded
        if isinstance(payload, dict):
            if item.kind in WITH_IDS and "id" in payload:
                payload = {**payload, "id": self.outside(payload["id"])}
        return {
            "id": self.outside(item.n),
            "kind": item.kind,
            "step": item.step,
            "at": item.at,
            "payload": payload,
            "lines": self.lines(item),
        }

    def pending(self) -> list[Any]:
        """The questions waiting for an answer now."""
        pending = getattr(self.channel, "pending", None)
        return list(pending()) if callable(pending) else []

    def stale(self) -> list[dict[str, Any]]:
        """Questions a run in this folder left unanswered when its process died (the next
        ``flower`` asks them again; the answer goes to the step that asked when it runs
        again: ``flower.records.pending``), as the page's pending questions: their ids begin
        with :data:`STALE`. It reads a file the agents can replace (``stale.py``): call
        it in a thread, never on the server's loop."""
        if self.where is None:
            return []
        from flower_plugin_web.stale import stale_asks

        return [
            {"id": STALE + a["id"], "question": a["question"], "options": a["options"],
             "state": "asked", "step": a["step"], "stale": True}
            for a in stale_asks(self.where.run_dir)
            if a["answer"] is None
        ]  # fmt: skip

    def recent(self, limit: int = 60) -> list[Item]:
        with self._lock:
            start = max(self.first, self.last - limit + 1)
            return [self._ring[n % self.keep] for n in range(start, self.last + 1)]  # type: ignore[misc]


def _usd(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


#: The id prefix (after the segment) of a question an earlier, dead process left waiting.
STALE = "stale:"

#: The one hub of this process: the hooks and the server meet here.
HUB = Hub()
