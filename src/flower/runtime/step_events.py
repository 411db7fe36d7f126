"""The events that end a step (``error``, ``result``) and start a new generation (``reset``).

The original flower had kinds for both, and a view needs them as kinds of their own:

- ``error``: the step ended failed, for good. A ``retry`` is a failure being ridden out,
  a ``result`` with ``ok=False`` is the bookkeeping of the end; a view that paints failures
  red should not have to tell those apart by payload. Not sent for a step stopped from
  outside (a quit, an exiting process: the ``result`` says ``stopped``), which is nobody's
  error.
- ``reset``: the context filled, the handoff document is written, and the step goes on in
  a new session that starts from that document alone. What a view shows of the retired
  session's conversation is history from here on; the ``session`` event with the new id
  follows once the CLI reports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flower.kernel.events import Event
from flower.kernel.result import STOPPED

if TYPE_CHECKING:
    from pathlib import Path

    from flower.kernel.result import StepResult


def failure(result: StepResult) -> str | None:
    """The error a step failed with for good, or ``None`` when it succeeded or was
    stopped from outside (a quit, an exiting process: nobody's error)."""
    if result.ok or (result.error or "").startswith(STOPPED):
        return None
    return result.error or "unknown error"


def ended(result: StepResult, classified: dict[str, str] | None = None) -> list[Event]:
    """``error`` (when the step failed and was not stopped from outside), then ``result``.

    ``classified`` holds the classes the Runtime gave error texts (the retry loop's, and
    the final error's, :func:`failure`): a plugin's ``flower_classify_error`` is asked
    once per failure, not again for the event (a classifier may count, rate-limit or call
    out). An error it does not hold is of class ``"unknown"``."""
    stopped = not result.ok and (result.error or "").startswith(STOPPED)
    found: list[Event] = []
    error = failure(result)
    if error is not None:
        payload: dict[str, Any] = {
            "error": error,
            "class": (classified or {}).get(error) or "unknown",
            "session_id": result.session_id,
            "attempts": result.attempts,
        }
        found.append(Event("error", payload, step=result.step))
    payload = {
        "ok": result.ok, "session_id": result.session_id, "cost_usd": result.cost_usd,
        "num_turns": result.num_turns, "error": result.error, "context": result.context,
        "attempts": result.attempts, "duration_s": result.duration_s, "stopped": stopped,
    }  # fmt: skip
    found.append(Event("result", payload, step=result.step))
    return found


def reset(step: str, retired: str, generation: int, *, path: Path | None, degraded: bool) -> Event:
    """``reset``: generation ``generation`` of ``step`` starts in a new session from the
    handoff document (``path`` where it was saved, ``None`` when it could not be).
    ``session_id`` is the retired session's, as in the handoff's ``done`` event."""
    payload = {
        "session_id": retired,
        "generation": generation,
        "path": str(path) if path else None,
        "degraded": degraded,
    }
    return Event("reset", payload, step=step)


__all__ = ["ended", "failure", "reset"]
