"""A question the last run was waiting on when it stopped, asked again at the wake.

The file itself is :mod:`flower.records.pending` (re-exported here for imports written
before it moved); this is the terminal's part: before "Continue?", each question a run
that is gone left unanswered is shown as it was asked, and the line typed is its answer
(a digit picks an option, Enter lets the agent decide). The workflow gives the answer
to the step that asked when it resumes that step's session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flower.records.pending import (
    PENDING_NAME,
    PendingFile,
    answer_stale,
    read_pending,
    stale_asks,
)

__all__ = ["PENDING_NAME", "PendingFile", "ask_stale", "read_pending"]


def ask_stale(terminal: Any, run_dir: Path) -> bool:
    """Ask each unanswered stale question on the terminal; ``False`` on Ctrl-C (quit)."""
    from flower.ui.reader import ask_line

    for ask in stale_asks(run_dir):
        if ask.get("answer") is not None:
            continue
        options = [str(o) for o in ask.get("options") or []]
        where = f" ({ask['step']})" if ask.get("step") else ""
        terminal.line(f"A question was waiting when the run stopped{where}:", "bold")
        terminal.line(f"  {ask.get('question')}")
        for number, option in enumerate(options, 1):
            terminal.line(f"  {number}. {option}")
        prompt = f"answer 1-{len(options)} or type > " if options else "answer > "
        while True:
            said = ask_line(terminal, prompt)
            if said is None:
                return False
            said = said.strip()
            if said.isdigit() and options:
                if not 1 <= int(said) <= len(options):
                    terminal.line(f"pick 1-{len(options)}, or type an answer", "yellow")
                    continue
                said = options[int(said) - 1]
            break
        answer_stale(run_dir, str(ask.get("id")), said or None)
        if not said:
            terminal.line("(no answer: the agent decides)", "dim")
    return True
