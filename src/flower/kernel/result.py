"""What one step cost and produced: the :class:`StepResult` a Runtime returns.

Its own module so the Runtime and the attempt reader can both use it without importing
each other; ``flower.runtime.runner.StepResult`` is the documented place to import it from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["KILLED", "STOPPED", "StepResult", "stopped_by"]

#: ``StepResult.error`` of a step that was in flight when a signal ended the process.
KILLED = "killed-by-signal"
#: How ``StepResult.error`` begins when something outside the step ended it before it
#: finished (a quit, an exiting process): the step did not fail, it was stopped.
STOPPED = "stopped: "


def stopped_by(exc: BaseException) -> str:
    """The error of a step that ``exc`` ended from outside, in words a user reads on the
    terminal and in the manifest (not an exception's class name alone)."""
    import asyncio

    if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
        return STOPPED + "interrupted before it finished"
    if isinstance(exc, SystemExit):
        return STOPPED + "the process was exiting"
    detail = " ".join(str(exc).split())[:200]
    return STOPPED + (f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__)


@dataclass
class StepResult:
    """Everything flower accounts for one finished step.

    ``attempts`` counts attempts that failed and were retried (plus the last one): a
    human interrupt and a handoff are not failed attempts. ``errors`` keeps every error
    met on the way, ``error`` only the one the step ended with. ``retired`` lists the
    session ids handed off, oldest first; ``session_id`` is the one the step ended in.
    ``context`` is the context size (tokens) the model last reported. ``audited``
    counts the open items the handoff audit had to add to this step's handoffs (items
    the retiring sessions' documents left out). ``refused`` says why the step's own check
    refused its last answer and stopped the run (its session itself did not fail; a
    workflow sets it), ``""`` otherwise.
    """

    step: str
    session_id: str | None = None
    ok: bool = False
    cost_usd: float = 0.0
    num_turns: int = 0
    text: str = ""
    error: str | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    attempts: int = 1
    errors: list[str] = field(default_factory=list)
    resumed: bool = False
    retired: list[str] = field(default_factory=list)
    context: int = 0
    audited: int = 0
    refused: str = ""

    @property
    def duration_s(self) -> float:
        """Wall time of the step, handoffs and waits included."""
        return max(0.0, self.ended_at - self.started_at) if self.ended_at else 0.0
