"""Driving a workflow from a terminal: the view, the input line, Ctrl-C, side questions.

``flower "..."`` and ``flower run TARGET`` both end here. While the workflow runs, the
bottom line of a terminal is always an input line, and what the human types goes where
it makes sense:

- a pending question gets the line as its answer (a digit picks an option, an empty
  line declines it and lets the agent decide);
- a line starting with ``?`` (or the full-width ``？``) is a side question for a
  read-only oracle that answers without pausing the run (:mod:`flower.commands.aside`);
  its question and answer are ``aside`` events, shown like a side question another
  front end asked (a web page), and what it cost is in the closing total, labelled;
- anything else goes to the inbox: the agent reads it at its next inbox check, and it is
  appended to the brief so later steps (fresh sessions) see it too.

Ctrl-C stops, it does not kill. The input line owns the terminal with signals off, so
the terminal sends no SIGINT to the process group (where the bundled CLI would die of
it); the byte arrives here instead. The first Ctrl-C stops the round at once (the
running tool is stopped with the turn, nothing more runs: ``Runtime.pause``), then asks
what to tell the agent: a line goes to the same session, Enter goes on with nothing
added. A second Ctrl-C quits at once, saying what it saves: the step in flight is
written to the manifest (``flower`` here continues it), exit 130, no traceback.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flower.commands import EXIT_FAILED, EXIT_OK, EXIT_QUIT, EXIT_STUCK, EXIT_USAGE
from flower.records.pending import PendingFile

if TYPE_CHECKING:
    from flower.kernel.events import Event
    from flower.runtime.runner import Runtime
    from flower.workflow.base import Ctx, Workflow

#: Events an oracle is shown for a side question (the most recent ones).
RECENT_EVENTS = 60
SIDE_MARKS = ("?", "？")


@dataclass
class Outcome:
    """How a driven run ended."""

    code: int
    ctx: Ctx | None = None


@dataclass
class _State:
    telling: bool = False  # after a first Ctrl-C: the next line is for the agent
    quitting: bool = False
    told_unattended: bool = False
    step: str | None = None  # the workflow step running now (its questions are its own)
    recent: deque[Event] = field(default_factory=lambda: deque(maxlen=RECENT_EVENTS))
    asides: set[asyncio.Task[None]] = field(default_factory=set)
    #: Side questions answered (here or on another front end) and what they cost: in
    #: the closing total, labelled. Another front end's come from its own thread.
    side_count: int = 0
    side_usd: float = 0.0
    side_lock: threading.Lock = field(default_factory=threading.Lock)


class Session:
    """One workflow run in a terminal (interactive) or a pipe (not)."""

    def __init__(
        self,
        workflow: Workflow,
        runtime: Runtime,
        terminal: Any,
        renderer: Any,
        *,
        interactive: bool,
    ) -> None:
        self.workflow, self.rt = workflow, runtime
        self.terminal, self.renderer = terminal, renderer
        self.interactive = interactive
        self.channel = workflow.channel
        self.state = _State()
        self.pending = PendingFile(runtime.run_dir)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Ctx] | None = None
        self.reader: Any = None
        self.started = time.monotonic()

    # --- running ----------------------------------------------------------------------------

    async def run(self) -> Outcome:
        """Run the workflow to its end (or until the human quits) and print the closing line."""
        self.loop = asyncio.get_running_loop()
        if self.channel is not None:
            self.channel.on_event = self.on_event
        self.task = asyncio.ensure_future(self.workflow.run(self.rt, on_event=self.on_event))
        self._listen()
        ctx: Ctx | None = None
        code = EXIT_OK
        try:
            ctx = await self.task
            code = EXIT_FAILED if ctx.get("_failed_at") else EXIT_OK
            if ctx.get("_stuck"):
                code = EXIT_STUCK
            elif code == EXIT_FAILED and refused_credentials(str(ctx.get("_failed_why") or "")):
                code = EXIT_USAGE  # a key the API refused is bad input, as a missing one is
        except asyncio.CancelledError:
            if not self.state.quitting:
                raise
            code = EXIT_QUIT
        finally:
            self._stop_listening()
            for aside in list(self.state.asides):
                aside.cancel()
            self.pending.clear()
        aborted = (ctx or {}).get("_aborted") or (ctx or {}).get("_failed_why")
        if code == EXIT_QUIT:
            aborted = "quit (Ctrl-C); run flower here again to continue where it stopped"
        closing = {
            "ok": code == EXIT_OK,
            "cost": self.total_cost(),
            "manifest": self.rt.manifest_path,
            "failed_at": (ctx or {}).get("_failed_at"),
            "aborted": aborted,
        }
        self._announce_end(code, closing)
        self.renderer.closing(**closing)
        return Outcome(code, ctx)

    def total_cost(self) -> float:
        """What the run cost in this process: its steps, and the side questions asked
        while it ran (here or on another front end; the closing line labels their part)."""
        with self.state.side_lock:
            return self.rt.total_cost() + self.state.side_usd

    def _announce_end(self, code: int, closing: dict[str, Any]) -> None:
        """The closing line's facts as an ``end`` event, to the plugins only (the view
        shows them through ``closing``): a page that followed the run says the same."""
        from flower.kernel.events import Event
        from flower.plugins import emit

        started = getattr(self.renderer, "started", None)  # the view's clock, when it has one
        since = started if isinstance(started, float) else self.started
        with self.state.side_lock:
            side_usd, side_count = self.state.side_usd, self.state.side_count
        payload = {
            **closing,
            "manifest": str(closing["manifest"]),
            "code": code,
            "side_usd": side_usd,
            "side_count": side_count,
            "duration_s": time.monotonic() - since,
        }
        emit(Event("end", payload))

    def on_event(self, event: Event) -> None:
        """Every event: remembered for side questions, mirrored for `flower status`, shown."""
        self.state.recent.append(event)
        if event.kind == "step" and event.step:
            self.state.step = event.step
        if event.kind == "aside" and event.payload.get("answer") is not None:
            with self.state.side_lock:
                self.state.side_count += 1
                self.state.side_usd += float(event.payload.get("cost_usd") or 0.0)
        if event.kind == "ask":  # a question belongs to the workflow step that asked it
            self.pending.update(event.payload, event.step or self.state.step)
            self._set_prompt()
        self.renderer(event)
        if event.kind == "ask" and not self.interactive:
            self._unattended(event.payload)

    # --- input ------------------------------------------------------------------------------

    def _listen(self) -> None:
        assert self.loop is not None
        loop = self.loop
        if self.interactive:
            from flower.ui.reader import InputLine

            def on_line(text: str) -> None:  # the reader's thread: hop to the loop
                loop.call_soon_threadsafe(self.heard, text)

            def on_interrupt() -> None:
                loop.call_soon_threadsafe(self.ctrl_c)

            self.reader = InputLine(self.terminal, on_line=on_line, on_interrupt=on_interrupt)
            self.reader.start()
            return
        try:  # a pipe or a service: Ctrl-C (SIGINT) quits cleanly
            loop.add_signal_handler(signal.SIGINT, self.quit)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - not on this platform
            pass

    def _stop_listening(self) -> None:
        if self.reader is not None:
            self.reader.stop()
            self.reader = None
        elif self.loop is not None:
            try:
                self.loop.remove_signal_handler(signal.SIGINT)
            except (NotImplementedError, RuntimeError):  # pragma: no cover
                pass

    def heard(self, text: str) -> None:
        """A line the human typed (on the event loop)."""
        said = text.strip()
        if self.state.telling:
            self.state.telling = False
            self._set_prompt()
            if self.rt.paused:  # the round is stopped and waits for these words
                self.rt.interrupt(said)
                if not said:
                    self.terminal.line("(going on with nothing added)", "dim")
            elif not said:
                self.terminal.line("(nothing said; carrying on)", "dim")
            elif not self.rt.interrupt(said):
                self.terminal.line("(the turn had just ended; sending it as a note)", "dim")
                self._send(said)
            return
        if said.startswith(SIDE_MARKS):  # always a side question, a question waiting or not
            self._aside(said[1:].strip())
            return
        pending = self.channel.pending() if self.channel is not None else []
        if pending:
            self._answer(pending[0], said)
        elif said:
            self._send(said)

    def ctrl_c(self) -> None:
        """Ctrl-C typed (on the event loop): first stop the round and ask, then quit."""
        if self.state.telling or self.state.quitting:
            self.quit()
            return
        self.state.telling = True
        if self.rt.pause():
            head = "Stopped. What should the agent hear?"
            keys = "(Enter = go on with nothing added; Ctrl-C again quits)"
        else:  # between turns: nothing to stop, the words go to the next one
            head = "Nothing is running this moment. What should the agent hear?"
            keys = "(Enter = nothing; Ctrl-C again quits)"
        self.terminal.line(f"{head} {keys}", "bold")
        self._set_prompt()

    def quit(self) -> None:
        """Stop the run: the Runtime writes the step in flight to the manifest on the way out."""
        if not self.state.quitting:
            self.terminal.line(
                f"quitting: saving the step in flight to {self.rt.manifest_path};"
                " run flower here again to continue it",
                "bold",
            )
        self.state.quitting = True
        self.state.telling = False
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def _answer(self, ask: Any, said: str) -> None:
        options = list(ask.options)
        if not said:
            self.channel.decline(ask.id)
        elif said.isdigit() and options:
            number = int(said)
            if not 1 <= number <= len(options):
                self.terminal.line(f"pick 1-{len(options)}, or type an answer", "yellow")
                return
            self.channel.answer(ask.id, options[number - 1])
        else:
            self.channel.answer(ask.id, said)

    def _send(self, said: str) -> None:
        if self.channel is None or self.channel.send(said) is None:
            self.terminal.line("(this workflow has no inbox; the line was not sent)", "yellow")

    def _aside(self, question: str) -> None:
        if not question:
            self.terminal.line("(ask something after the ?)", "dim")
            return
        from flower.commands.aside import answer_aside
        from flower.plugins import emit

        task = asyncio.ensure_future(
            answer_aside(
                question,
                workspace=self.rt.workspace,
                run_dir=self.rt.run_dir / "aside",
                workbench=self.workflow.workbench,
                recent=list(self.state.recent),
                tell=lambda event: emit(event, self.on_event),  # the view and the plugins
            )
        )
        self.state.asides.add(task)
        task.add_done_callback(self.state.asides.discard)

    # --- prompts ------------------------------------------------------------------------------

    def _set_prompt(self) -> None:
        if self.reader is None:
            return
        if self.state.telling:
            self.reader.prompt = "tell the agent > "
            return
        pending = self.channel.pending() if self.channel is not None else []
        if pending and pending[0].options:
            self.reader.prompt = f"answer 1-{len(pending[0].options)} or type > "
        elif pending:
            self.reader.prompt = "answer > "
        else:
            self.reader.prompt = "> "

    def _unattended(self, payload: dict[str, Any]) -> None:
        """No terminal: nobody here can answer. Say so once; after the first unanswered
        question the rest settle at once instead of each waiting the whole timeout."""
        if payload.get("state") == "asked" and not self.state.told_unattended:
            self.state.told_unattended = True
            self.terminal.line(
                "no terminal to answer questions here: it waits for another UI until the"
                " timeout; pass --timeout 0 to let the agents decide at once",
                "yellow",
            )
        elif payload.get("state") == "timeout" and self.channel is not None:
            self.channel.timeout_s = 0


#: What the API (through the CLI) says when it refuses the credentials themselves.
_REFUSED = re.compile(
    r"authentication[_ ](?:error|failed)|invalid[ _-]?(?:x-)?api[ _-]?key|invalid bearer"
    r"|\bHTTP 40[13]\b|\bpermission_error\b|oauth token (?:has )?(?:expired|revoked)"
    r"|credit balance|\bbilling(?:_error)?\b",
    re.IGNORECASE,
)


def refused_credentials(why: str) -> bool:
    """Whether a step failed because the API refused the key (exit 2, as for a missing
    key: the fix is the key, not another run)."""
    return bool(_REFUSED.search(why))


def print_error(text: str) -> None:
    """A one-line error for a user mistake, on stderr."""
    print(f"flower: {text}", file=sys.stderr)


__all__ = ["RECENT_EVENTS", "Outcome", "Session", "print_error"]
