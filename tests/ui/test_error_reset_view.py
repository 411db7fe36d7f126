"""The terminal and the ``error`` / ``reset`` kinds: nothing twice by default (the
``result`` line and the handoff's ``done`` line say it), the details with -v."""

from __future__ import annotations

import io

from flower.kernel.events import Event
from flower.kernel.result import STOPPED, StepResult
from flower.kernel.terminal import Terminal
from flower.runtime.step_events import ended, reset
from flower.ui.render import Renderer

ERROR = Event("error", {"error": "API Error: 401", "class": "fatal", "attempts": 2}, "干活")
RESET = Event("reset", {"session_id": "s1", "generation": 2, "path": None, "degraded": True})


def shown(event: Event, *, verbose: bool) -> str:
    out = io.StringIO()
    Renderer(Terminal(out), verbose=verbose)(event)
    return out.getvalue()


def test_the_default_view_says_nothing_more() -> None:
    assert shown(ERROR, verbose=False) == "" and shown(RESET, verbose=False) == ""


def test_verbose_says_the_class_and_the_generation() -> None:
    assert shown(ERROR, verbose=True) == "x fatal error after 2 attempts: API Error: 401\n"
    assert shown(RESET, verbose=True) == (
        "~ generation 2 starts a new session from a degraded handoff\n"
    )


def test_a_failed_step_ends_with_error_then_result_a_stopped_one_without_error() -> None:
    failed = StepResult(step="干活", ok=False, error="HTTP 400: bad request", attempts=1)
    assert [e.kind for e in ended(failed)] == ["error", "result"]
    assert ended(failed)[0].payload["error"] == "HTTP 400: bad request"
    stopped = StepResult(step="干活", ok=False, error=STOPPED + "the process was exiting")
    assert [e.kind for e in ended(stopped)] == ["result"]
    assert ended(stopped)[0].payload["stopped"] is True
    assert [e.kind for e in ended(StepResult(step="干活", ok=True))] == ["result"]


def test_reset_names_the_retired_session_and_the_document() -> None:
    from pathlib import Path

    event = reset("干活", "s1", 1, path=Path("/wb/notes/交接-干活.md"), degraded=False)
    assert (event.kind, event.step) == ("reset", "干活")
    assert event.payload == {
        "session_id": "s1", "generation": 1, "path": "/wb/notes/交接-干活.md", "degraded": False
    }  # fmt: skip
