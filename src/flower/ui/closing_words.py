"""The words a run's view says about the run as a whole: the cost total, the closing
lines, which wake a process is.

Split from :mod:`flower.ui.render` because they are not the terminal's alone: a web page
that followed a run (``flower_plugin_web.ending``) ends it in the same words, and
``flower demo`` and the launcher set :data:`SIMULATED_ENV` without wanting the view's
event handlers. Everything here is a pure function of the facts it is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flower.kernel.formats import duration, tilde
from flower.kernel.lang import step_label

__all__ = ["SIMULATED_ENV", "closing_lines", "total_words", "wake_label"]

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
