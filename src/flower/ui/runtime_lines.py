"""The run view's lines for the runtime's events: prompts, sessions, the model's words
and thinking, tool calls and their results, refusals, checks, the context level,
handoffs, retries, offline waits, interrupts, results, the budget, errors.

Split from :mod:`flower.ui.render` (whose :class:`~flower.ui.render.Renderer` is made of
this and :mod:`flower.ui.workflow_lines`) because these lines follow what the CLI and
the Runtime report, and change with them; one handler per event kind, each
``(payload, step) -> None``, named ``_<kind>``.
"""

from __future__ import annotations

import math
import time
from typing import Any

from flower.kernel.formats import duration, gist, kilo, plural, tilde
from flower.kernel.lang import step_label
from flower.kernel.result import STOPPED
from flower.kernel.text import one_line
from flower.ui.line_view import LineView

__all__ = ["CLI_STOPPED_TEXTS", "DISPATCH_TOOLS", "RuntimeLines"]

#: Tool names that hand work to a subagent.
DISPATCH_TOOLS = frozenset({"Task", "Agent"})

#: How the CLI answers a tool call that an interrupt stopped: its own instruction to the
#: model ("The user doesn't want to proceed … STOP"), never meant for a person's screen.
CLI_STOPPED_TEXTS = (
    "The user doesn't want to proceed with this tool use",
    "[Request interrupted by user",
)


class RuntimeLines(LineView):
    """The handlers of the runtime's event kinds (see :mod:`flower.ui.render`)."""

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
        from flower.roles.walls import is_refusal

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
        from flower.records.frozen_copy import TOLD

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
        """The run's budget (``runtime/budget.py``): a warning near the cap. At the cap the
        stopped step's result says why, and the command how to go on."""
        from flower.runtime.budget import money

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
