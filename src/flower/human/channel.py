"""The human channel: the one place a long run stops to hear from a person.

Pruning, handoffs and fresh sessions keep a long run's context small, but they all
preserve the run's premises; a misunderstood goal survives every one of them and only
grows more expensive. So agents get two tools on an in-process MCP server named
``human``: ``ask`` (a question that waits for an answer) and ``inbox`` (what the
person said unprompted, never waiting).

The channel has no user interface of its own. Questions surface as
``Event("ask")`` through ``on_event`` (push) or :meth:`HumanChannel.next_ask` (pull),
and any UI answers through :meth:`HumanChannel.answer` / :meth:`HumanChannel.decline`
/ :meth:`HumanChannel.send`, usually from its own thread. Nobody answering is an
answer too: after ``timeout_s`` the model is told to decide itself and write down the
assumption, so an unattended run keeps going instead of failing.

Two files outlive the sessions. Remarks sent mid-run are appended to the brief
(``amend_path``), because the next step is a fresh session that reads the brief and
would never see a remark made only in this session's context. The Q&A log
(``log_path``) is an append-only record for people; nothing feeds it back to a model.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.human.records import (
    AMEND_LABEL,
    AMEND_NOTE,
    LOG_HEADER,
    Ask,
    Mail,
    amendment_block,
    ask_entry,
    log_header,
    mail_entry,
    transcript_of,
)
from flower.human.texts import (
    ASK_TOOL,
    DECLINED_TEXT,
    DECLINED_TEXT_EN,
    EMPTY_INBOX_TEXT,
    INBOX_SCHEMA,
    INBOX_TOOL,
    INBOX_TOOL_NAME,
    INVALID_TEXT,
    INVALID_TEXT_EN,
    OVER_BUDGET_TEXT,
    OVER_BUDGET_TEXT_EN,
    SERVER,
    SETTLED_STATES,
    TIMEOUT_TEXT,
    TIMEOUT_TEXT_EN,
    TOOL_NAME,
    declined_note,
    inbox_text,
    tool_texts,
)
from flower.kernel.events import Event
from flower.kernel.files import check_write
from flower.kernel.lang import localized, pick
from flower.kernel.redact import redact
from flower.records.filelock import locked

__all__ = [
    "AMEND_NOTE",
    "DECLINED_TEXT",
    "EMPTY_INBOX_TEXT",
    "INBOX_TOOL_NAME",
    "INVALID_TEXT",
    "LOG_HEADER",
    "OVER_BUDGET_TEXT",
    "SETTLED_STATES",
    "TIMEOUT_TEXT",
    "TOOL_NAME",
    "Ask",
    "HumanChannel",
    "Mail",
    "amendment_block",
]


@dataclass
class _Waiter:
    """An ask blocked in :meth:`HumanChannel.ask`: the loop it waits on, and its wake-up."""

    ask: Ask
    loop: asyncio.AbstractEventLoop
    wake: asyncio.Future[None]


def _wake(fut: asyncio.Future[Any], value: Any = None) -> None:
    if not fut.done():
        fut.set_result(value)


class HumanChannel:
    """Asks the human through MCP tools; any UI answers through its methods.

    ``answer``, ``decline`` and ``send`` may be called from any thread while the event
    loop waits inside :meth:`ask`. ``on_event`` is called from the thread that caused
    the change (the loop's for questions, the caller's for ``send``); an exception it
    raises is collected in ``ui_errors``, never raised: a broken UI must not end a run.

    Args:
        on_event: Receives ``Event("ask")`` on every state change of a question and
            ``Event("mail")`` when a remark is queued and when it is delivered.
        max_asks: Questions allowed in the channel's life; ``None`` (or negative) for
            no limit, ``0`` for none. Over the limit the tool answers at once.
        timeout_s: Seconds to wait for an answer; ``<= 0`` settles every question at
            once with ``timeout_text`` (unattended runs), ``None`` waits forever (the
            CLI still ends an MCP call after ``MCP_TOOL_TIMEOUT``, about 28 hours).
        log_path: The Q&A log (``<notes>/问答记录.md``), or ``None``.
        amend_path: The brief that :meth:`send` and :meth:`amend` append to, or ``None``.
        over_budget_text, timeout_text, declined_text: What the model is told instead
            of an answer.
    """

    tool_name: str = TOOL_NAME
    inbox_tool_name: str = INBOX_TOOL_NAME

    def __init__(
        self,
        *,
        on_event: Callable[[Event], None] | None = None,
        max_asks: int | None = None,
        timeout_s: float | None = 1800.0,
        log_path: str | Path | None = None,
        amend_path: str | Path | None = None,
        over_budget_text: str = OVER_BUDGET_TEXT,
        timeout_text: str = TIMEOUT_TEXT,
        declined_text: str = DECLINED_TEXT,
    ) -> None:
        self.on_event = on_event
        self.max_asks = None if max_asks is None or max_asks < 0 else int(max_asks)
        self.timeout_s = timeout_s
        self.log_path = Path(log_path).expanduser().absolute() if log_path else None
        self.amend_path = Path(amend_path).expanduser().absolute() if amend_path else None
        #: Called with the brief's path after each amendment, under the brief's lock (the
        #: workflow keeps the amended brief as the frozen one: ``records/frozen_copy.py``).
        self.on_amended: Callable[[Path], None] | None = None
        self.over_budget_text = over_budget_text
        self.timeout_text = timeout_text
        self.declined_text = declined_text
        self.asks: list[Ask] = []
        self.mail: list[Mail] = []
        self.ui_errors: list[str] = []
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()  # keeps the brief's order the inbox's order
        self._log_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._used = 0
        self._waiting: dict[str, _Waiter] = {}
        self._fresh: deque[Ask] = deque()
        self._pullers: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[Ask]]] = deque()

    # --- wiring ------------------------------------------------------------------------

    def mcp_servers(self) -> dict[str, Any]:
        """``{"human": <in-process server>}`` for ``AgentSpec.mcp_servers``.

        The key must equal the server's name or the tool names would not match, so the
        channel builds both. The tools run only when named in ``allowed_tools``.
        """
        from claude_agent_sdk import create_sdk_mcp_server, tool

        ask_description, ask_schema, inbox_description = tool_texts()
        ask = tool(ASK_TOOL, ask_description, ask_schema)(self._ask_tool)
        inbox = tool(INBOX_TOOL, inbox_description, INBOX_SCHEMA)(self._inbox_tool)
        return {SERVER: create_sdk_mcp_server(SERVER, tools=[ask, inbox])}

    async def _ask_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        # Blocking here is the point: the loop keeps running while the handler awaits,
        # so an answer from another task or thread gets through.
        ask = await self.ask(args.get("question", ""), args.get("options"))
        result: dict[str, Any] = {"content": [{"type": "text", "text": ask.answer}]}
        if ask.state == "invalid":
            result["is_error"] = True
        return result

    async def _inbox_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": self._inbox_text(self._deliver())}]}

    # --- asking --------------------------------------------------------------------------

    @property
    def remaining(self) -> int:
        """Questions still allowed; ``-1`` when there is no limit."""
        return -1 if self.max_asks is None else max(0, self.max_asks - self._used)

    async def ask(self, question: str, options: Iterable[str] | str | None = None) -> Ask:
        """Ask one question and wait for it to settle; the model's tool and the
        framework's own decision points take this same path.

        Never raises but for cancellation (which settles the ask as ``cancelled``):
        nobody answering is an answer (``ask.state`` tells which).
        """
        loop = asyncio.get_running_loop()
        text = str(question or "").strip()
        with self._lock:
            ask = Ask(id=self._next_id("q"), question=text, options=_options(options))
            self.asks.append(ask)
            if not text:
                self._settle(ask, "invalid", pick(INVALID_TEXT, INVALID_TEXT_EN))
            elif self.max_asks is not None and self._used >= self.max_asks:
                self._settle(ask, "over_budget", self._said("over_budget_text"))
            else:
                self._used += 1
                if self.timeout_s is not None and self.timeout_s <= 0:
                    self._settle(ask, "timeout", self._said("timeout_text"))
                else:
                    self._waiting[ask.id] = _Waiter(ask, loop, loop.create_future())
            ask.remaining = self.remaining
            waiter = self._waiting.get(ask.id)
            asked = ask.payload()  # taken now: a UI thread may answer before we emit
        if waiter is None:  # settled without waiting
            self._finish(ask)
            return ask

        self._emit(Event("ask", asked))
        self._offer(ask)
        try:
            async with asyncio.timeout(self.timeout_s):
                await waiter.wake
        except TimeoutError:
            with self._lock:
                if self._waiting.pop(ask.id, None) is not None:  # else an answer won the race
                    self._settle(ask, "timeout", self._said("timeout_text"))
        except asyncio.CancelledError:
            with self._lock:
                if self._waiting.pop(ask.id, None) is not None:
                    self._settle(ask, "cancelled", "")
            self._finish(ask)
            raise
        self._finish(ask)
        return ask

    def answer(self, ask_id: str, text: str) -> bool:
        """Answer a waiting question; ``False`` when it is no longer waiting.

        An empty answer declines: an empty tool result would leave the model guessing
        whether anyone read the question.
        """
        text = str(text or "").strip()
        if not text:
            return self.decline(ask_id)
        return self._resolve(ask_id, "answered", text)

    def decline(self, ask_id: str, reason: str = "") -> bool:
        """Skip a waiting question; the model decides itself. ``False`` when not waiting."""
        reason = " ".join(str(reason or "").split())
        text = self._said("declined_text") + (declined_note(reason) if reason else "")
        return self._resolve(ask_id, "declined", text)

    def pending(self) -> list[Ask]:
        """Questions waiting for an answer, oldest first."""
        with self._lock:
            return [w.ask for w in self._waiting.values()]

    async def next_ask(self, timeout: float | None = None) -> Ask | None:
        """The next question still waiting that no earlier call returned (pull-style
        UIs); ``None`` after ``timeout`` seconds. Works from any event loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            while self._fresh:
                ask = self._fresh.popleft()
                if not ask.settled:
                    return ask
            handoff: asyncio.Future[Ask] = loop.create_future()
            self._pullers.append((loop, handoff))
        try:
            async with asyncio.timeout(timeout):
                return await handoff
        except TimeoutError:
            self._drop_puller(loop, handoff)
            return None
        except asyncio.CancelledError:
            self._drop_puller(loop, handoff)
            raise

    # --- the inbox -----------------------------------------------------------------------

    def send(self, text: str, *, via: str = "") -> Mail | None:
        """Queue a remark for the agent's next inbox check and append it to the brief.

        Never interrupts the agent. Empty text sends nothing (``None``). ``via`` names
        the front end that sent it when it is not the run's own (``"page"``): the
        ``mail`` event carries it, so the terminal shows a line someone typed elsewhere.
        """
        text = str(text or "").strip()
        if not text:
            return None
        with self._send_lock:
            with self._lock:
                mail = Mail(id=self._next_id("m"), text=text, via=str(via or ""))
            path = self.amend(text)
            mail.amended = str(path) if path else ""
            with self._lock:
                self.mail.append(mail)
                queued = mail.payload()  # taken now: the inbox may deliver it before we emit
        self._emit(Event("mail", queued))
        return mail

    def pending_mail(self) -> list[Mail]:
        """Remarks not yet delivered, in order."""
        with self._lock:
            return [m for m in self.mail if m.state == "queued"]

    def amend(self, text: str, *, label: str = AMEND_LABEL) -> Path | None:
        """Append ``text`` to the brief as a marked amendment (:func:`amendment_block`).

        Returns the brief's path, or ``None`` when there is no brief, the text is empty
        or the write failed (recorded in ``ui_errors``: losing a remark must not end
        the run, and the inbox still carries it).
        """
        if self.amend_path is None or not str(text or "").strip():
            return None
        block = amendment_block(str(text), label=label)
        try:
            check_write(self.amend_path)  # no link in the workbench carries it elsewhere
            self.amend_path.parent.mkdir(parents=True, exist_ok=True)
            # the brief's lock: a step freezing the brief right now keeps this block
            with locked(self.amend_path):
                with self.amend_path.open("a", encoding="utf-8") as fh:
                    if _ends_mid_line(self.amend_path):  # keep a blank line before the block
                        block = "\n" + block
                    fh.write(redact(block))  # one write: a reader never sees half a block
                if self.on_amended is not None:  # under the lock: no check sees it half-kept
                    self.on_amended(self.amend_path)
        except OSError as exc:
            self._error(f"could not append to {self.amend_path}: {exc}")
            return None
        return self.amend_path

    def deliver(self, mail_ids: Iterable[str]) -> list[Mail]:
        """Mark these queued remarks delivered: another route carried them to the agent
        (a handoff document put them in its successor's first prompt), and the inbox
        must not hand them out a second time. Returns the ones that were still queued."""
        return self._deliver(set(mail_ids))

    def _deliver(self, only: set[str] | None = None) -> list[Mail]:
        now = time.time()
        with self._lock:
            fresh = [m for m in self.mail if m.state == "queued" and (only is None or m.id in only)]
            for mail in fresh:
                mail.state, mail.delivered_at = "delivered", now
        for mail in fresh:
            self._emit(Event("mail", mail.payload()))
            self._log(mail_entry(mail))
        return fresh

    def _inbox_text(self, mails: list[Mail]) -> str:
        return inbox_text([m.text for m in mails], amended=all(m.amended for m in mails))

    def _said(self, name: str) -> str:
        """One of the texts given to the constructor (``timeout_text``…): the default
        follows the language in effect, a text the caller gave stays as it is."""
        zh, en = _DEFAULTS[name]
        return localized(getattr(self, name), zh, en)

    # --- records -------------------------------------------------------------------------

    def transcript(self) -> str:
        """Every question and remark so far, as Markdown, in the order they happened."""
        with self._lock:
            items: list[Ask | Mail] = [*self.asks, *self.mail]
        items.sort(key=lambda item: int(item.id[1:]))
        return transcript_of(items)

    # --- internals -----------------------------------------------------------------------

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    @staticmethod
    def _settle(ask: Ask, state: str, text: str) -> None:
        """Record the outcome (caller holds the lock)."""
        ask.state, ask.answer, ask.settled_at = state, text, time.time()

    def _resolve(self, ask_id: str, state: str, text: str) -> bool:
        with self._lock:
            waiter = self._waiting.pop(str(ask_id), None)
            if waiter is None:
                return False
            self._settle(waiter.ask, state, text)
        try:  # set_result is not thread-safe: hand it to the waiting loop
            waiter.loop.call_soon_threadsafe(_wake, waiter.wake)
        except RuntimeError:  # the loop is gone, so is the waiting ask()
            return False
        return True

    def _offer(self, ask: Ask, *, first: bool = False) -> None:
        """Hand ``ask`` to a waiting :meth:`next_ask`, or keep it for the next one."""
        with self._lock:
            while self._pullers:
                loop, handoff = self._pullers.popleft()
                if handoff.done():
                    continue
                try:
                    loop.call_soon_threadsafe(self._hand, handoff, ask)
                except RuntimeError:  # that puller's loop is closed
                    continue
                return
            if first:
                self._fresh.appendleft(ask)
            else:
                self._fresh.append(ask)

    def _hand(self, handoff: asyncio.Future[Ask], ask: Ask) -> None:
        """Runs on the puller's loop; a puller that gave up meanwhile passes it on."""
        if handoff.done():
            self._offer(ask, first=True)
        else:
            handoff.set_result(ask)

    def _drop_puller(self, loop: asyncio.AbstractEventLoop, handoff: asyncio.Future[Ask]) -> None:
        with self._lock:
            if (loop, handoff) in self._pullers:
                self._pullers.remove((loop, handoff))
        if handoff.done() and not handoff.cancelled():  # delivered just as we gave up
            self._offer(handoff.result(), first=True)

    def _finish(self, ask: Ask) -> None:
        self._emit(Event("ask", ask.payload()))
        self._log(ask_entry(ask))

    def _emit(self, event: Event) -> None:
        """To ``on_event`` and to every plugin's ``flower_event`` hook (a UI plugin sees
        questions like any other event); a failure is collected, never raised."""
        from flower.plugins import get_plugin_manager

        callback = self.on_event
        if callback is not None:
            self._notify(lambda: callback(event), event)
        self._notify(lambda: get_plugin_manager().hook.flower_event(event=event), event)

    def _notify(self, send: Callable[[], object], event: Event) -> None:
        try:
            send()
        except Exception as exc:  # a broken UI must not end the run
            self._error(f"on_event failed on {event.kind!r}: {type(exc).__name__}: {exc}")

    def _error(self, message: str) -> None:
        with self._lock:
            self.ui_errors.append(message)

    def _log(self, entry: str) -> None:
        if self.log_path is None:
            return
        try:
            with self._log_lock:
                check_write(self.log_path)  # no link in the workbench carries it elsewhere
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write((log_header() if fh.tell() == 0 else "") + redact(entry))
        except OSError as exc:
            self._error(f"could not append to {self.log_path}: {exc}")


#: The constructor's texts: name -> (the seed's default, its English).
_DEFAULTS = {
    "timeout_text": (TIMEOUT_TEXT, TIMEOUT_TEXT_EN),
    "over_budget_text": (OVER_BUDGET_TEXT, OVER_BUDGET_TEXT_EN),
    "declined_text": (DECLINED_TEXT, DECLINED_TEXT_EN),
}


def _ends_mid_line(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except OSError:  # empty
        return False


def _options(options: Iterable[str] | str | None) -> list[str]:
    if options is None:
        return []
    if isinstance(options, str):
        options = [options]
    cleaned = (" ".join(str(o).split()) for o in options)
    return list(dict.fromkeys(o for o in cleaned if o))
