"""What both halves of the run view share: the view's state and its one output verb.

The run view (:class:`flower.ui.render.Renderer`) is split by whose events it shows:
:mod:`flower.ui.workflow_lines` (steps, verdicts, questions, notes: the workflow's) and
:mod:`flower.ui.runtime_lines` (prompts, tools, retries, handoffs, results: the
runtime's). This base names the state they read and write, which the Renderer alone
sets up, so each half type-checks on its own and neither imports the other.
"""

from __future__ import annotations

import threading

from flower.kernel.terminal import Terminal
from flower.ui.countdown import Countdown

__all__ = ["LineView"]


class LineView:
    """The state of one run's view, and :meth:`_say` (one line on the terminal)."""

    terminal: Terminal
    verbose: bool
    #: Whether someone can type an answer here (a question then says how).
    answerable: bool
    #: The context level the last ``context`` event reported.
    context: int
    #: The run's cost so far (``result`` events), and the side questions' part of it.
    cost: float
    sides: int
    side_cost: float
    #: Costs are simulated (``closing_words.SIMULATED_ENV``): each figure says so.
    simulated: bool
    started: float
    _shown: set[str]
    _offline_streak: bool
    _countdown: Countdown
    _lock: threading.RLock

    def _say(self, text: str, style: str = "", indent: int = 0) -> None:
        self.terminal.line(text, style, indent=indent)

    def _usd(self, amount: float) -> str:
        """A cost as the view shows it: ``$0.0123``, or ``$0.0123 simulated``."""
        return f"${amount:.4f}" + (" simulated" if self.simulated else "")
