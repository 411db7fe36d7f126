"""Execution outranks opinion: the goal guard's checks that flower runs itself, each round.

After a work round and before the judge rules, :func:`run_round` runs every runnable
check of the goal (:mod:`flower.workflow.checks`, :mod:`flower.workflow.check_run`) and reports
each (a ``check`` event, a ``check`` row in the judge ledger). The judge is shown what
ran and what it showed (:func:`prompt_block`); then :func:`overrule` holds the verdict to
it: a check that failed makes the round ``not_yet`` whatever the judge said, and the
ledger says "overruled by check N" with its output. A check that could not run here is
reported as such and left to the judge, never counted as passed.

:class:`Stuck` watches the rounds: the same checks failing K rounds in a row (the work
changes, the failures do not) is a state of its own; the goal guard asks the human what
to do with the evidence, or stops with the reason "stuck".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flower.kernel.events import Event, EventCallback
from flower.kernel.lang import pick
from flower.plugins import emit
from flower.workflow.base import Ctx, StepAbort
from flower.workflow.check_run import CheckResult, run_checks
from flower.workflow.checks import runnable_checks

__all__ = [
    "STUCK_AFTER",
    "Stuck",
    "ask_when_stuck",
    "check_row",
    "choice_of",
    "failed_by_round",
    "overrule",
    "prompt_block",
    "run_round",
]

#: Rounds in a row with the same failed checks before a run counts as stuck.
STUCK_AFTER = 3

HEAD = "# flower 亲自跑过的检查(跑的结果比任何说法都算数)"
HEAD_EN = "# Checks flower ran itself (what they showed outranks any report)"
STATES = {"passed": "通过", "failed": "没通过", "cannot_run": "这里跑不了"}
STATES_EN = {"passed": "passed", "failed": "failed", "cannot_run": "could not run here"}
OVERRULED = "被第 {n} 条检查推翻(`{cmd}`:{why}),这一轮算没达成。"
OVERRULED_EN = "Overruled by check {n} (`{cmd}`: {why}); this round counts as not achieved."
STUCK_QUESTION = "同样的检查已经连续 {n} 轮没通过:{evidence}。活在变,失败没变。接着做,还是停下?"
STUCK_QUESTION_EN = (
    "The same checks failed {n} rounds in a row: {evidence}. The work changes, the failures"
    " do not. Keep going, or stop?"
)
GO_ON = ("接着做", "keep going")
STOP = ("停下", "stop")
#: The stop's reason: the terminal's words are English (as the goal guard's own stops).
STUCK_STOP = (
    "stuck: the same checks failed {n} rounds in a row ({evidence}); stopped for a person to look"
)


async def run_round(
    runtime: Any, goal: Any, *, step: str, round_: int, on_event: EventCallback | None
) -> list[CheckResult]:
    """Run the goal's runnable checks for this round; emit and record each. ``[]`` when
    the goal has none (the judge then rules by reading, as it always did)."""
    checks = runnable_checks(list(getattr(goal, "checks", []) or []))
    if not checks:
        return []
    from flower.records.ledger import record
    from flower.roles.sandbox import protected_paths
    from flower.workflow.held_out import verify_scripts

    held_out = verify_scripts(runtime, step=step, on_event=on_event)
    workbench = getattr(runtime, "workbench", None)
    leave_out = protected_paths(runtime.run_dir, workbench)
    sandbox = getattr(runtime, "sandbox", None)
    results = await run_checks(
        checks,
        runtime.workspace,
        leave_out=leave_out,
        held_out=held_out,
        sandboxed=bool(getattr(sandbox, "enabled", True)),
    )
    for result in results:
        emit(Event("check", {"round": round_, **result.payload()}, step=step), on_event)
        record(runtime, check_row(step, round_, result))
    return results


def check_row(step: str, round_: int, result: CheckResult) -> dict[str, Any]:
    """A ledger row for one check flower ran: ``state`` passed / failed / cannot_run,
    ``reason`` why (and the end of its output), ``failed`` the check's text."""
    why = result.why or ""
    tail = result.tail.strip()[-600:]
    return {
        "step": step,
        "round": round_,
        "kind": "check",
        "state": result.state,
        "reason": f"{why}\n{tail}".strip() if tail else why,
        "failed": [result.text],
        "cost_usd": 0.0,
        "session_id": None,
        "said": result.command or f"file {result.text}",
    }


def prompt_block(results: list[CheckResult]) -> str:
    """What the judge is shown of the checks that ran ("" when none ran)."""
    if not results:
        return ""
    states = pick(STATES, STATES_EN)
    lines = [pick(HEAD, HEAD_EN)]
    for r in results:
        what = f"`{r.command}`" if r.command else r.text
        status = (
            "" if r.status is None else pick(f",退出码 {r.status}", f", exit status {r.status}")
        )
        took = pick(f",{r.seconds:.1f} 秒", f", {r.seconds:.1f} s")
        why = pick(":", ": ") + r.why if r.why else ""
        lines.append(f"- {r.index}. [{states[r.state]}] {what}{status}{took}{why}")
        if r.state != "passed" and r.tail.strip():
            tail = "\n".join(r.tail.strip().splitlines()[-12:])
            lines.append("  ```\n  " + tail.replace("\n", "\n  ") + "\n  ```")
    return "\n".join(lines)


def overrule(verdict: Any, results: list[CheckResult]) -> CheckResult | None:
    """Hold ``verdict`` to what the checks showed: the first failed check, when one failed
    and the judge said achieved (the verdict is then ``not_yet``, its failed checks lead
    the list and its reason says who overruled it); ``None`` otherwise. A failed check
    is added to a ``not_yet`` verdict's failed list too, when the judge left it out."""
    failed = [r for r in results if r.state == "failed"]
    if not failed:
        return None
    missing = [r.text for r in failed if r.text not in verdict.failed]
    verdict.failed = [*missing, *verdict.failed]
    if verdict.state != "achieved":
        return None
    first = failed[0]
    said = pick(OVERRULED, OVERRULED_EN).format(
        n=first.index, cmd=first.command or first.text, why=first.why
    )
    verdict.state = "not_yet"
    verdict.reason = f"{said} {verdict.reason}".strip()
    return first


@dataclass
class Stuck:
    """The failed checks of each round so far; stuck when the last ``after`` rounds failed
    the very same non-empty set."""

    after: int = STUCK_AFTER
    #: Each round's failed checks, by their text (as the ledger keeps them).
    rounds: list[frozenset[str]] = field(default_factory=list)

    def see(self, results: list[CheckResult]) -> bool:
        """Add a round's results; whether the run is stuck now."""
        self.rounds.append(frozenset(r.text for r in results if r.state == "failed"))
        last = self.rounds[-self.after :]
        return len(last) == self.after and bool(last[0]) and all(r == last[0] for r in last)

    def reset(self) -> None:
        self.rounds.clear()

    def failing(self) -> frozenset[str]:
        return self.rounds[-1] if self.rounds else frozenset()


async def ask_when_stuck(channel: Any, stuck: Stuck, ran: list[Any], ctx: Ctx) -> bool:
    """The same checks failed ``stuck.after`` rounds in a row: ask the human whether to
    go on (False: another round) or stop (``StepAbort``, ``ctx["_stuck"]``); nobody to
    answer stops too, with the evidence in the reason."""
    failing = [r for r in ran if r.text in stuck.failing()]
    evidence = "; ".join(f"{r.index}. `{r.command or r.text}`: {r.why}" for r in failing)
    question = pick(STUCK_QUESTION, STUCK_QUESTION_EN).format(n=stuck.after, evidence=evidence)
    options = [pick(*GO_ON), pick(*STOP)]
    ask = await channel.ask(question, options) if channel is not None else None
    answer = (ask.answer or "").strip() if ask is not None and ask.state == "answered" else ""
    if answer and choice_of(answer, options) == options[0]:
        stuck.reset()
        return False
    ctx["_stuck"] = True
    raise StepAbort(STUCK_STOP.format(n=stuck.after, evidence=evidence))


def failed_by_round(runtime: Any, step: str) -> list[frozenset[str]]:
    """The checks ``step`` failed in each round the ledger has, in round order (by text,
    from its ``check`` rows; a round whose checks all passed is an empty set)."""
    reader = getattr(getattr(runtime, "store", None), "rulings", None)
    if not callable(reader):
        return []
    from flower.records.ledger import run_id_of

    try:
        rows = [r for r in reader(run_id_of(runtime)) if r.get("kind") == "check"]
    except Exception:  # a store that cannot say: count from this process on
        return []
    by_round: dict[int, set[str]] = {}
    for row in rows:
        if row.get("step") != step:
            continue
        failed = by_round.setdefault(int(row.get("round") or 0), set())
        if row.get("state") == "failed":
            failed.update(str(text) for text in row.get("failed") or [])
    return [frozenset(by_round[n]) for n in sorted(by_round)]


def choice_of(answer: str, options: list[str]) -> str | None:
    """Which option an answer picks: its text, its number (``2``), its first words
    (``accept``: read as free words it would mean the opposite, "keep working"), or
    ``None`` (free text)."""
    if answer.isdigit() and 1 <= int(answer) <= len(options):
        return options[int(answer) - 1]
    folded = " ".join(answer.casefold().split())
    for option in options:
        if folded == option.casefold() or folded.startswith(option.casefold()):
            return option
    if len(folded) >= 3:
        started = [option for option in options if option.casefold().startswith(folded)]
        if len(started) == 1:
            return started[0]
    return None
