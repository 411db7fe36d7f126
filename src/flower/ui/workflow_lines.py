"""The run view's lines for the workflow's events: wakes, steps, goal checks, verdicts,
the human's overrides, bequests, questions, notes and side questions.

Split from :mod:`flower.ui.render` (whose :class:`~flower.ui.render.Renderer` is made of
this and :mod:`flower.ui.runtime_lines`) because these lines change with the workflow
(a new step kind, a new ruling) and the runtime's with the CLI; one handler per event
kind, each ``(payload, step) -> None``, named ``_<kind>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flower.kernel.formats import plural, tilde
from flower.kernel.lang import step_label
from flower.kernel.sanitize import cells, fit
from flower.kernel.text import one_line
from flower.ui.closing_words import wake_label
from flower.ui.line_view import LineView

__all__ = ["RULE", "WorkflowLines"]

#: Cells of a step header's rule.
RULE = 60


class WorkflowLines(LineView):
    """The handlers of the workflow's event kinds (see :mod:`flower.ui.render`)."""

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
