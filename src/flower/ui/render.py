"""Events in, lines out: the run view.

A :class:`Renderer` is the ``on_event`` callback of a run. It turns each
:class:`flower.core.events.Event` (docs/workflow.md lists every kind) into lines on a
:class:`flower.ui.terminal.Terminal` and knows nothing of the workflow beyond the event
kinds and their payloads, so any driver (``flower``, ``flower once``, ``flower run``, a
script) shows a run the same way, and a plugin can replace the whole view through the
``flower_renderer`` hook (:func:`renderer_for`).

One Renderer lives for the whole run: it remembers the step count, the context level,
the cost so far and when the run started (a renderer made per event shows $0.00 and
0:00, the original's ``once`` defect).

Icons are ASCII: ``>`` a tool call, ``>>`` a dispatch to a worker, ``*`` done, ``~``
waiting or retrying, ``!`` a warning, ``x`` a failure, ``?`` a question, ``->`` what the
human said. The default view hides what only a developer wants (prompts, thinking,
subagents' words, successful tool results, context levels); ``verbose=True`` shows
every event.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.core.lang import step_label
from flower.core.result import STOPPED
from flower.core.text import one_line
from flower.plugin_types import View  # the protocol lives with the plugin-facing types
from flower.ui.countdown import Countdown
from flower.ui.formats import duration, gist, kilo, plural, tilde
from flower.ui.sanitize import cells, fit
from flower.ui.terminal import Terminal

if TYPE_CHECKING:
    from flower.core.events import Event

__all__ = ["Renderer", "View", "closing_lines", "plural", "renderer_for", "total_words"]

#: Tool names that hand work to a subagent.
DISPATCH_TOOLS = frozenset({"Task", "Agent"})
#: Cells of a step header's rule.
RULE = 60
#: Set to 1 by a driver whose model is scripted (``flower demo``): every cost the view
#: shows is what the CLI computed from scripted usage, not money anyone paid, and says so.
SIMULATED_ENV = "FLOWER_SIMULATED_COSTS"


def wake_label(process: Any) -> str:
    """``wake #N`` for the ``process``-th process of a run (lineage's ``woke``): the
    first run is no wake, so the second process is wake #1."""
    return f"wake #{process - 1}" if isinstance(process, int) and process > 1 else "wake #?"


def total_words(cost: float, side: float = 0.0, *, sides: int = 0, simulated: bool = False) -> str:
    """What a run cost, as the closing line says it: ``total $0.4100``, and with side
    questions (counted in the total: they are paid like any session) their part labelled,
    ``total $0.4100 (side questions $0.0200)``. A web page that followed the run says the
    same words."""
    label = " simulated" if simulated else ""  # each figure, so none reads as real money
    return f"total ${cost:.4f}{label}" + (f" (side questions ${side:.4f}{label})" if sides else "")


def closing_lines(
    *,
    ok: bool,
    cost: float,
    seconds: float,
    manifest: Path | str,
    failed_at: str | None,
    aborted: str | None,
    side: float = 0.0,
    sides: int = 0,
    simulated: bool = False,
) -> list[tuple[str, str, int]]:
    """The closing lines as ``(text, style, indent)``: how it ended, the total (side
    questions included, labelled), the wall time, the manifest's path. The terminal's view
    and a web page's share them, so both end a run in the same words."""
    total = total_words(cost, side, sides=sides, simulated=simulated)
    facts = f"{total} - {duration(seconds)}"
    where = f"manifest: {tilde(manifest)}"
    if ok and not failed_at and not aborted:
        return [(f"* done - {facts} - {where}", "bold green", 0)]
    head = f"x stopped at {step_label(failed_at)}" if failed_at else "x stopped"
    return [
        (f"{head}: {aborted}" if aborted else head, "bold red", 0),
        (f"{facts} - {where}", "red", 2),
    ]


def renderer_for(terminal: Terminal, *, verbose: bool = False) -> View:
    """The view the installed plugins choose (default: :class:`Renderer`)."""
    from flower.plugins import get_plugin_manager

    view = get_plugin_manager().hook.flower_renderer(terminal=terminal, verbose=verbose)
    return view if view is not None else Renderer(terminal, verbose=verbose)


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, OSError, ValueError):
        return False


#: How the CLI answers a tool call that an interrupt stopped: its own instruction to the
#: model ("The user doesn't want to proceed … STOP"), never meant for a person's screen.
CLI_STOPPED_TEXTS = (
    "The user doesn't want to proceed with this tool use",
    "[Request interrupted by user",
)


class Renderer:
    """Events in, lines out: the run view. Knows nothing of the workflow beyond Event kinds.

    Call it with every event of a run (it is an ``on_event`` callback); :meth:`banner`
    before a wake-up, :meth:`closing` at the end. Thread-safe.
    """

    #: Kinds that keep a countdown on screen; any other event clears it.
    _WAITING = frozenset({"retry", "offline", "system", "context"})

    def __init__(self, terminal: Terminal, *, verbose: bool = False) -> None:
        self.terminal = terminal
        self.verbose = verbose
        #: Whether someone can type an answer here (default: stdin and the output are
        #: terminals); only then does a question say how to answer it.
        self.answerable = terminal.is_tty and _stdin_is_tty()
        self.context = 0
        self.cost = 0.0
        #: Side questions answered (``aside`` events, wherever they were asked) and what
        #: they cost: the closing line labels their part of the total.
        self.sides = 0
        self.side_cost = 0.0
        #: Costs are simulated (``SIMULATED_ENV``): each is labelled so beside its figure.
        self.simulated = os.environ.get(SIMULATED_ENV, "") == "1"
        self.started = time.monotonic()
        self._shown: set[str] = set()  # questions on screen, not yet settled
        self._offline_streak = False
        self._countdown = Countdown(terminal)
        self._lock = threading.RLock()
        self._handlers: dict[str, Callable[[dict[str, Any], str | None], None]] = {
            "wake": self._wake,
            "step": self._step,
            "skip": self._skip,
            "task": self._task,
            "verdict": self._verdict,
            "override": self._override,
            "bequest": self._bequest,
            "ask": self._ask,
            "mail": self._mail,
            "aside": self._aside,
            "prompt": self._prompt,
            "session": self._session,
            "system": self._system,
            "text": self._text,
            "thinking": self._thinking,
            "tool": self._tool,
            "tool_result": self._tool_result,
            "refused": self._refused,
            "restored": self._restored,
            "check": self._check,
            "context": self._context,
            "handoff": self._handoff,
            "retry": self._retry,
            "offline": self._offline,
            "interrupt": self._interrupt,
            "result": self._result,
            "unknown": self._unknown,
            "budget": self._budget,
            "error": self._error,
            "reset": self._reset,
        }

    def _say(self, text: str, style: str = "", indent: int = 0) -> None:
        self.terminal.line(text, style, indent=indent)

    # --- the entry points -----------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        """Show one event (any kind; an unknown kind is shown only when verbose).

        Never raises: a payload of an unexpected shape is shown as it is, since an
        exception here would reach stderr around the one output path.
        """
        kind = event.kind
        with self._lock:
            if kind not in self._WAITING:
                self._countdown.stop()
            if kind != "offline":
                self._offline_streak = False
            handler = self._handlers.get(kind)
            if handler is not None:
                try:
                    handler(event.payload, event.step)
                except Exception:  # a payload of another shape: shown raw, never raised
                    self._say(f"{kind}: {gist(event.payload, 160)}", "dim")
            elif self.verbose:
                self._say(f"{kind}: {gist(event.payload, 160)}", "dim")

    def banner(self, state: dict[str, Any], *, context: int, workspace: Path) -> None:
        """The wake banner: where the run continues and what it carries.

        ``state`` is :func:`flower.wake_state`'s dict; ``context`` the work session's
        last context size (0 when unknown). Goal checks and context are shown only when
        known; "brief confirmed" only when the brief is frozen.
        """
        where = tilde(workspace)
        woke = int(state.get("woke") or 0)
        if not state.get("waking") and not state.get("steps"):
            self._say(f"* new run in {where}", "bold")
            return
        parts = ["brief confirmed"] if state.get("waking") else []
        checks = int(state.get("checks") or 0)
        if checks > 0:
            parts.append(plural(checks, "goal check"))
        if context > 0:
            parts.append(f"work context {kilo(context)}")
        parts.append(wake_label(woke + 1))  # ``woke`` processes before this one
        self._say(f"<- continuing in {where}  " + " - ".join(parts), "bold")
        if state.get("drift"):
            self._say(f"   {state['drift']}", "yellow")

    def closing(
        self,
        *,
        ok: bool,
        cost: float,
        manifest: Path,
        failed_at: str | None,
        aborted: str | None,
    ) -> None:
        """The closing line: how it ended, total cost, wall time, the manifest's path.

        ``cost`` is the whole run's in this process, side questions included; the part
        of them this view saw answered (``aside`` events) is labelled."""
        with self._lock:
            self._countdown.stop()
            lines = closing_lines(
                ok=ok, cost=cost, seconds=time.monotonic() - self.started, manifest=manifest,
                failed_at=failed_at, aborted=aborted, side=self.side_cost, sides=self.sides,
                simulated=self.simulated,
            )  # fmt: skip
            for text, style, indent in lines:
                self._say(text, style, indent)

    def _usd(self, amount: float) -> str:
        """A cost as the view shows it: ``$0.0123``, or ``$0.0123 simulated``."""
        return f"${amount:.4f}" + (" simulated" if self.simulated else "")

    # --- the workflow's events ------------------------------------------------------------

    def _wake(self, p: dict[str, Any], step: str | None) -> None:
        if p.get("notice"):
            self._say(f"! {p['notice']}", "yellow")
        if self.verbose:
            self._say(
                f"{wake_label(p.get('woke'))}: {len(p.get('steps') or {})} step(s) known", "dim"
            )

    def _step(self, p: dict[str, Any], step: str | None) -> None:
        name = fit(step_label(step or "step"), RULE - 8)
        rule = f"== {name} " + "=" * max(3, RULE - 4 - cells(name))
        mark = f"  {p.get('index', '?')}/{p.get('total', '?')}"
        if p.get("resumed"):
            mark += f"  <- continuing - {wake_label(p.get('woke'))}"
        self._say("")
        self._say(rule + mark, "bold")

    def _skip(self, p: dict[str, Any], step: str | None) -> None:
        where = f"{p.get('index', '?')}/{p.get('total', '?')}"
        self._say(f"~ {step_label(step or 'step')} skipped ({where}): already done", "dim")

    def _task(self, p: dict[str, Any], step: str | None) -> None:
        checks = list(p.get("unverifiable") or [])
        if not checks:
            return
        total = int(p.get("total") or len(checks))
        self._say(
            f"! {len(checks)} of {plural(total, 'goal check')} cannot be verified here;"
            " the judge will not pass them:",
            "yellow",
        )
        for check in checks:
            self._say(f"- {check}", "yellow", indent=4)
        if p.get("path"):
            self._say(f"(edit {tilde(p['path'])} to change them)", "dim", indent=4)

    def _verdict(self, p: dict[str, Any], step: str | None) -> None:
        state = p.get("state") or ""
        word, icon, style = {
            "achieved": ("achieved", "*", "green"),
            "not_yet": ("not yet", "~", "yellow"),
            "unreachable": ("unreachable", "!", "red"),
        }.get(state, ("unclear", "~", "yellow"))
        rounds = f"round {p.get('round', '?')}/{p.get('rounds', '?')}"
        earlier = p.get("earlier") or 0
        if isinstance(earlier, int) and earlier > 0 and isinstance(p.get("round"), int):
            # a wake counts on from the rounds before it; its limit is this process's own
            rounds = f"round {p['round']}, {p['round'] - earlier}/{p.get('rounds', '?')} this time"
        reason = one_line(p.get("reason") or "", 300)
        self._say(f"{icon} verdict ({rounds}): {word}" + (f" - {reason}" if reason else ""), style)
        for check in p.get("failed") or []:
            self._say(f"- {check}", style, indent=4)

    def _bequest(self, p: dict[str, Any], step: str | None) -> None:
        files = p.get("files") or []
        done = [f"{Path(f['path']).name} ({f['action']})" for f in files]
        how = " (assembled mechanically: " + one_line(p.get("why") or "", 120) + ")"
        self._say("left a note for the next tool in " + ", ".join(done)
                  + (how if p.get("mechanical") else ""), "dim")  # fmt: skip
        for f in files:
            if f.get("warning"):
                self._say(f"! {one_line(f['warning'], 300)}", "yellow", indent=4)

    def _override(self, p: dict[str, Any], step: str | None) -> None:
        word = {"accept": "accepted the result anyway", "change_goal": "changed the goal"}.get(
            p.get("choice") or "", "said the judge was wrong"
        )
        said = one_line(p.get("said") or "", 200)
        self._say(f"! you overruled the judge (round {p.get('round', '?')}): {word}"
                  + (f" - {said}" if said else ""), "bold")  # fmt: skip

    def _ask(self, p: dict[str, Any], step: str | None) -> None:
        state, qid = p.get("state"), str(p.get("id") or "")
        if state == "asked":
            self._shown.add(qid)
            self._question(p)
            options = p.get("options") or []
            if self.answerable:  # what to do when nobody can is the driver's to say
                pick = f"1-{len(options)} or " if options else ""
                self._say(f"type {pick}your answer; Enter skips", "dim", indent=2)
            return
        if qid not in self._shown and state != "invalid":  # settled at once: never shown
            self._question(p)
        self._shown.discard(qid)
        if state == "answered":
            self._say(f"-> {one_line(p.get('answer') or '', 300)}", "green", indent=2)
        elif state == "timeout":
            self._say("-> no answer, the agent decides", "dim", indent=2)
        elif state == "declined":
            self._say("-> declined; the agent decides", "dim", indent=2)
        elif state == "over_budget":
            self._say("-> no questions left; the agent decides", "dim", indent=2)
        elif state == "cancelled":
            self._say("-> question withdrawn", "dim", indent=2)
        elif state == "invalid":
            self._say("! the agent asked an empty question", "dim")

    def _question(self, p: dict[str, Any]) -> None:
        self._say(f"? {p.get('question', '')}", "bold yellow")
        for n, option in enumerate(p.get("options") or [], 1):
            self._say(f"{n}) {option}", indent=4)

    def _mail(self, p: dict[str, Any], step: str | None) -> None:
        if p.get("state") == "queued" and p.get("via"):  # typed elsewhere: say what it was
            self._say(f"> ({p['via']}) {one_line(p.get('text') or '', 400)}", "dim")
        if p.get("state") == "queued":
            if p.get("amended"):
                self._say("* noted; appended to the brief", "green", indent=2)
            else:
                self._say("* noted; the agent reads it at its next inbox check", "green", indent=2)
        elif p.get("state") == "delivered":
            self._say("* the agent read your note", "dim", indent=2)

    def _aside(self, p: dict[str, Any], step: str | None) -> None:
        """A side question (``flower.commands.aside``): the question when asked, then the
        answer line by line; one asked on another front end says which."""
        via = f"({p['via']}) " if p.get("via") else ""
        if p.get("answer") is None:
            question = one_line(str(p.get("question") or ""), 300)
            self._say(f"? {via}{question} (asking on the side; the run goes on)", "dim")
            return
        self.sides += 1
        self.side_cost += float(p.get("cost_usd") or 0)
        said = str(p.get("answer") or "")
        failed = p.get("ok") is False or said.startswith("could not answer: ")
        for line in said.splitlines() or [""]:
            self._say(f"? {line}", "yellow" if failed else "cyan")

    # --- the runtime's events -------------------------------------------------------------

    def _prompt(self, p: dict[str, Any], step: str | None) -> None:
        if self.verbose:
            how = " (resume)" if p.get("resume") else ""
            self._say(f"prompt{how}: {one_line(p.get('text') or '', 200)}", "dim")

    def _session(self, p: dict[str, Any], step: str | None) -> None:
        if p.get("generation"):
            self._say(f"~ new session after {plural(p['generation'], 'handoff')}", "dim")
        if self.verbose:
            self._say(f"session {p.get('session_id')}", "dim")

    def _system(self, p: dict[str, Any], step: str | None) -> None:
        if p.get("subtype") == "api_retry":
            self._api_retry(p)
        elif self.verbose:
            self._say(f"system: {p.get('subtype')}", "dim")

    def _api_retry(self, p: dict[str, Any]) -> None:
        """The CLI retrying a request inside one attempt (before flower sees a failure)."""
        status = p.get("error_status")
        why = str(p.get("error") or "error").replace("_", " ")
        why = f"{why} ({status})" if status else why
        delay = float(p.get("retry_delay_ms") or 0) / 1000
        count = f"{p.get('attempt', '?')}/{p.get('max_retries', '?')}"
        self._say(f"~ API {why}: the CLI retries ({count}) in {delay:.1f}s", "yellow")
        self._countdown.start(lambda left: f"~ the CLI retries in {math.ceil(left)}s", delay)

    def _text(self, p: dict[str, Any], step: str | None) -> None:
        text = str(p.get("text") or "").strip()
        if not text:
            return
        if p.get("summed_up") and not self.verbose:
            return  # a later event says it shorter (the judge's ruling: the verdict line)
        if not p.get("subagent"):
            self._say(text)
        elif self.verbose:
            self._say(text, "dim", indent=4)

    def _thinking(self, p: dict[str, Any], step: str | None) -> None:
        if self.verbose:
            indent = 4 if p.get("subagent") else 0
            self._say(f"(thinking) {str(p.get('text') or '').strip()}", "dim italic", indent)

    def _tool(self, p: dict[str, Any], step: str | None) -> None:
        name = str(p.get("name") or "?")
        raw = p.get("input")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if name.startswith("mcp__") and name.rsplit("__", 1)[-1] in ("ask", "inbox"):
            if self.verbose:  # the ask/mail events show these
                self._say(f"> {name}", "dim")
            return
        if p.get("subagent"):
            self._say(f"> {name}({gist(data, 80)})", "dim cyan", indent=4)
        elif name in DISPATCH_TOOLS:
            who = data.get("subagent_type") or "agent"
            what = one_line(str(data.get("description") or data.get("prompt") or ""), 100)
            self._say(f">> {who}: {what}", "bold magenta")
        else:
            self._say(f"> {name}({gist(data)})", "cyan")

    def _tool_result(self, p: dict[str, Any], step: str | None) -> None:
        from flower.core.walls import is_refusal

        indent = 6 if p.get("subagent") else 2
        text = p.get("text") or ""
        if p.get("error") and text.startswith(CLI_STOPPED_TEXTS):  # the CLI's words for it
            self._say("~ stopped with the round", "dim", indent)
        elif p.get("error") and not is_refusal(text):  # a refusal has its own line
            self._say(f"x {one_line(text, 300)}", "red", indent)
        elif self.verbose:
            self._say(f"= {one_line(text, 160)}", "dim", indent)

    def _refused(self, p: dict[str, Any], step: str | None) -> None:
        indent = 6 if p.get("thread") == "subagent" else 2
        reason = one_line(p.get("reason") or "", 120)
        self._say(f"! walls refused {p.get('tool')}: {reason}", "yellow", indent)

    def _check(self, p: dict[str, Any], step: str | None) -> None:
        mark = {"passed": "*", "failed": "x", "cannot_run": "?"}.get(str(p.get("state")), "?")
        word = {"passed": "passed", "failed": "failed", "cannot_run": "could not run"}
        what = f"`{p.get('command')}`" if p.get("command") else one_line(p.get("check") or "", 80)
        why = f": {one_line(p['why'], 100)}" if p.get("why") else ""
        took = f" ({float(p.get('seconds') or 0):.1f}s)" if p.get("command") else ""
        state = word.get(str(p.get("state")), str(p.get("state")))
        style = "green" if p.get("state") == "passed" else "yellow"
        self._say(f"{mark} check {p.get('index')} {state}: {what}{took}{why}", style, 2)

    def _restored(self, p: dict[str, Any], step: str | None) -> None:
        from flower.core.frozen_copy import TOLD

        why = TOLD.get(str(p.get("what")), one_line(p.get("why") or "", 120))
        self._say(f"! {p.get('name')} {why}", "yellow", 2)

    def _context(self, p: dict[str, Any], step: str | None) -> None:
        self.context = int(p.get("used") or 0)
        if self.verbose:
            self._say(f"context {kilo(self.context)} / {kilo(p.get('window'))}", "dim")

    def _handoff(self, p: dict[str, Any], step: str | None) -> None:
        phase = p.get("phase")
        if phase == "near":
            self._say(
                f"~ context {kilo(p.get('used'))}: a handoff comes at {kilo(p.get('at'))}", "yellow"
            )
        elif phase == "writing":
            self._say(f"~ context full ({kilo(p.get('used'))}): writing the handoff...", "yellow")
        elif phase == "done":
            kind = "a mechanical handoff" if p.get("degraded") else "the handoff"
            where = f" -> {tilde(p['path'])}" if p.get("path") else ""
            self._say(f"* {kind} is written{where}; continuing in a new session", "yellow")

    def _retry(self, p: dict[str, Any], step: str | None) -> None:
        same = " (same session)" if p.get("resume") else ""
        delay = float(p.get("delay") or 0)
        self._say(
            f"~ attempt {p.get('attempt', '?')}/{p.get('max_attempts', '?')} failed"
            f" ({p.get('class', '?')}): {one_line(p.get('error') or '', 200)}"
            f" - retrying in {delay:.1f}s{same}",
            "yellow",
        )
        self._countdown.start(lambda left: f"~ retrying in {math.ceil(left)}s", delay)

    def _offline(self, p: dict[str, Any], step: str | None) -> None:
        where = f"{p.get('host')}:{p.get('port')}"
        waited = float(p.get("waited") or 0)
        nxt = float(p.get("next_probe_in") or 0)
        if not self._offline_streak or not self.terminal.is_tty:
            self._say(
                f"! offline: {where} unreachable for {duration(waited)}; probing every"
                f" {duration(nxt)}, giving up after {duration(float(p.get('max_wait') or 0))}",
                "yellow",
            )
        self._offline_streak = True
        started = time.monotonic() - waited
        self._countdown.start(
            lambda left: (
                f"~ offline: waiting for {where} for"
                f" {duration(time.monotonic() - started)} - next probe in {math.ceil(left)}s"
            ),
            nxt,
        )

    def _interrupt(self, p: dict[str, Any], step: str | None) -> None:
        said = one_line(p.get("said") or "", 300)
        # the pause itself (the prompt asking for words is on screen), or Enter with no
        # words (the input line echoes "(going on with nothing added)"): nothing to add
        if said:
            self._say(f"-> told the agent: {said}", "magenta")

    def _result(self, p: dict[str, Any], step: str | None) -> None:
        self.cost += float(p.get("cost_usd") or 0)
        facts = [
            plural(int(p.get("num_turns") or 0), "turn"),
            self._usd(float(p.get("cost_usd") or 0)),
        ]
        if p.get("context"):
            facts.append(f"context {kilo(p['context'])}")
        facts.append(duration(float(p.get("duration_s") or 0)))
        if int(p.get("attempts") or 1) > 1:
            facts.append(plural(int(p["attempts"]), "attempt"))
        name = step_label(step or "step")  # a key, glossed in English: 干活 (work)
        if p.get("ok"):
            self._say(f"* {name} done - " + " - ".join(facts), "green")
        elif p.get("stopped"):  # a quit or an exit ended it: not the step's own failure
            self._say(f"~ {name} stopped - " + " - ".join(facts), "yellow")
            why = str(p.get("error") or "").removeprefix(STOPPED)
            if why:
                self._say(one_line(why, 400), "yellow", indent=2)
        else:
            self._say(f"x {name} failed - " + " - ".join(facts), "red")
            if p.get("error"):
                self._say(one_line(str(p["error"]), 400), "red", indent=2)

    def _budget(self, p: dict[str, Any], step: str | None) -> None:
        """The run's budget (``core/budget.py``): a warning near the cap. At the cap the
        stopped step's result says why, and the command how to go on."""
        from flower.core.budget import money

        phase, cap = p.get("phase"), p.get("cap")
        spent = f"{money(p.get('spent'))} of {money(cap)} spent"
        spent += " (simulated)" if self.simulated else ""
        if phase == "near":
            share = f" ({float(p['spent']) / float(cap):.0%})" if cap else ""
            left = money(p.get("left"))
            self._say(f"! budget: {spent}{share}; the run stops at the cap, {left} left", "yellow")
        elif self.verbose:
            self._say(f"budget: {spent}", "dim")

    # ``error`` and ``reset`` are kinds for views that want them; here the ``result`` line
    # and the handoff's ``done`` line already say so, and only -v adds these details.
    def _error(self, p: dict[str, Any], step: str | None) -> None:
        if self.verbose:
            tries = plural(int(p.get("attempts") or 0), "attempt")
            error = one_line(p.get("error") or "", 200)
            self._say(f"x {p.get('class', '?')} error after {tries}: {error}", "dim")

    def _reset(self, p: dict[str, Any], step: str | None) -> None:
        if self.verbose:
            base = "a degraded handoff" if p.get("degraded") else "the handoff"
            self._say(
                f"~ generation {p.get('generation', '?')} starts a new session from {base}", "dim"
            )

    def _unknown(self, p: dict[str, Any], step: str | None) -> None:
        if self.verbose:
            self._say(f"(an SDK message flower does not show: {p.get('type')})", "dim")
