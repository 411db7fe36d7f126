"""``<run_dir>/outcome.json``: how the last run in this folder ended, for the next wake.

Waking is where an unattended night is judged: the person comes back and needs to know
whether the work is done, stopped and why, or was killed mid-step, and what pressing
Enter will do now (a finished run must not quietly spend again). The manifest has every
step's row, but not the run's end: a gate that refused, a quit, a budget, a kill. So a
workflow writes ``running`` (with its pid) when it starts and how it ended when it ends;
a ``running`` left by a process that is gone means it was killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from flower.kernel.files import atomic_write
from flower.records.pending import alive as _alive

__all__ = ["OUTCOME_NAME", "describe", "ended", "read_outcome", "write_outcome"]

OUTCOME_NAME = "outcome.json"
#: The states a run ends in (``running`` while it runs; ``killed`` is how a ``running``
#: left by a dead process reads).
STATES = ("running", "done", "stopped", "quit", "killed")


def write_outcome(
    run_dir: Path, state: str, *, step: str = "", why: str = "", met: bool = False
) -> None:
    """Record how this run stands (``met``: it ended with the goal met); never raises
    (bookkeeping must not stop a run)."""
    data = {
        "state": state, "step": step, "why": why, "met": met, "pid": os.getpid(),
        "at": time.time(),
    }  # fmt: skip
    with contextlib.suppress(OSError):
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(run_dir) / OUTCOME_NAME, json.dumps(data, ensure_ascii=False) + "\n")


def read_outcome(run_dir: Path) -> dict[str, Any]:
    """How the last run ended (``{}`` when no run recorded one); ``running`` by a process
    that is gone reads ``killed``."""
    try:
        data = json.loads((Path(run_dir) / OUTCOME_NAME).read_text(encoding="utf-8"))
        state = str(data["state"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if state == "running" and not _alive(int(data.get("pid") or 0)):
        data["state"] = "killed"
    return dict(data)


def ended(outcome: dict[str, Any]) -> str:
    """How a run ended, as the words after "it" ("finished: every step passed", "stopped at
    干活 (work): …", "was quit during …"); "" for a run not ended by itself (running,
    killed) or none. The wake line and a page that watched the run say the same."""
    from flower.kernel.lang import step_label

    state, step, why = outcome.get("state"), outcome.get("step") or "", outcome.get("why") or ""
    step = step_label(str(step)) if step else ""  # a key, glossed in English
    during = f" during {step}" if step else ""
    if state == "done":
        return "finished: " + (why or "every step passed")
    if state == "stopped":
        return f"stopped at {step}: {why}" if why else f"stopped{during}"
    if state == "quit":
        return f"was quit{during} (Ctrl-C)"
    return ""


def describe(outcome: dict[str, Any]) -> str:
    """The outcome as the wake line says it ("" when there is none)."""
    from flower.kernel.lang import step_label

    state, step = outcome.get("state"), outcome.get("step") or ""
    step = step_label(str(step)) if step else ""  # a key, glossed in English
    during = f" during {step}" if step else ""
    if state in ("done", "stopped", "quit"):
        return "last time it " + ended(outcome)
    if state == "killed" and outcome.get("why"):  # the signal it left on, as it left
        return f"last time its process was stopped by {outcome['why']}{during}"
    if state == "killed":
        return f"last time its process was killed{during} (a signal, a crash or a reboot)"
    if state == "running":
        return f"it is running now{during}"
    return ""
