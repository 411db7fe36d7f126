"""What a resumed session is told: after a failed attempt, and after the human interrupted it.

The seed's Chinese ``RESUME_PROMPT`` stays where the reference puts it
(:mod:`flower.runtime.resilience`); the interrupt notes, Chinese and English, live here, and
``Runtime.INTERRUPT_NOTE`` and ``Runtime.CONTINUE_NOTE`` are the Runtime's names for them
(kept as class attributes, so a subclass may set its own; they live here, not on the Runtime,
so that these words need not import the Runtime that uses them). Beside them, the English
of all three and the one rule they follow: a default text follows the language in effect
(:mod:`flower.kernel.lang`), a text the caller set (a subclass's note, a
``Resilience(resume_prompt=...)``) is theirs and stays as given.
"""

from __future__ import annotations

from flower.kernel.lang import localized

__all__ = [
    "CONTINUE_NOTE",
    "CONTINUE_NOTE_EN",
    "INTERRUPT_NOTE",
    "INTERRUPT_NOTE_EN",
    "RESUME_PROMPT_EN",
    "interrupt_prompt",
]

#: After the human's words, when they interrupted the round (``Runtime.INTERRUPT_NOTE``).
INTERRUPT_NOTE = (
    "\n\n(上面这句是人在你干活时插进来的话。刚才在跑的工具调用返回了 interrupted,"
    "那是打断带来的正常副作用,不是环境故障;需要的话重新执行即可。先回应这句话,再接着做。)"
)
#: After a pause the human ended without a word (Enter) (``Runtime.CONTINUE_NOTE``).
CONTINUE_NOTE = (
    "(人刚才按了一下暂停,没有要补充的话。刚才在跑的工具调用返回了 interrupted,"
    "那是暂停带来的正常副作用,不是环境故障;它们可能没做完,需要的话核实后重新执行。接着做。)"
)

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
    if said.strip():
        return said + localized(interrupt_note, INTERRUPT_NOTE, INTERRUPT_NOTE_EN)
    return localized(continue_note, CONTINUE_NOTE, CONTINUE_NOTE_EN)
