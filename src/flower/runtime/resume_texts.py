"""What a resumed session is told, in English: after a failed attempt, and after the human
interrupted it.

The seed's Chinese texts stay where the reference puts them (``RESUME_PROMPT`` in
:mod:`flower.runtime.resilience`, ``Runtime.INTERRUPT_NOTE`` and ``Runtime.CONTINUE_NOTE``);
their English lives here, beside the one rule both follow: a default text follows the
language in effect (:mod:`flower.kernel.lang`), a text the caller set (a subclass's note, a
``Resilience(resume_prompt=...)``) is theirs and stays as given.
"""

from __future__ import annotations

from flower.kernel.lang import localized

__all__ = ["CONTINUE_NOTE_EN", "INTERRUPT_NOTE_EN", "RESUME_PROMPT_EN", "interrupt_prompt"]

#: After a failed attempt. Like the Chinese, it names no error: the model needs "you were
#: cut off, carry on", not a 503 it would start discussing.
RESUME_PROMPT_EN = (
    "The last round was cut off before it finished. Look at what is already saved on the"
    " workbench first, then carry on from where it stopped; do not start over."
)
#: After the human's words, when they interrupted the round.
INTERRUPT_NOTE_EN = (
    "\n\n(The line above is the human, cutting in while you worked. The tool calls that were"
    " running came back as interrupted: that is the normal side effect of an interruption,"
    " not a fault in the environment; run them again if you need to. Answer the human first,"
    " then carry on.)"
)
#: After a pause the human ended without a word.
CONTINUE_NOTE_EN = (
    "(The human paused you for a moment and has nothing to add. The tool calls that were"
    " running came back as interrupted: that is the normal side effect of the pause, not a"
    " fault in the environment; they may not have finished, so check and run them again if"
    " you need to. Carry on.)"
)


def interrupt_prompt(said: str, interrupt_note: str, continue_note: str) -> str:
    """The prompt that continues an interrupted session: the human's words and the note,
    or the note for a pause with nothing said. The notes are the Runtime's (its class
    constants, or a subclass's own)."""
    from flower.runtime.base import Runtime

    if said.strip():
        return said + localized(interrupt_note, Runtime.INTERRUPT_NOTE, INTERRUPT_NOTE_EN)
    return localized(continue_note, Runtime.CONTINUE_NOTE, CONTINUE_NOTE_EN)
