"""How a judge's ruling opens when it becomes the worker's next prompt.

The goal guard (:meth:`flower.workflow.verdicts.Verdict.feedback`) starts every ruling it
hands back with one of these sentences; the session store (:mod:`flower.stores.mask_rulings`)
recognises an old ruling by them, so that one superseded by later ones can leave the
context. They live in the kernel because both layers read them and the stores may not
import the workflow.
"""

from __future__ import annotations

__all__ = ["OPENINGS", "OPENINGS_EN", "opens_a_ruling"]

#: The first sentence of a ruling by its state (``""``: the judge said nothing clear).
OPENINGS = {
    "achieved": "裁判认为目标已经达成。",
    "not_yet": "裁判认为上一轮的结果还没有达成目标。",
    "unreachable": "裁判认为按现在的条件这个目标达不到,或者在这个环境里验证不了。",
    "": "裁判没有给出明确的结论,这一轮按没有达成处理。",
}
OPENINGS_EN = {
    "achieved": "The judge found the goal achieved.",
    "not_yet": "The judge found that the last round has not achieved the goal yet.",
    "unreachable": (
        "The judge found the goal unreachable as things stand, or impossible to"
        " verify in this environment."
    ),
    "": "The judge gave no clear verdict; this round counts as not achieved.",
}
_ALL = tuple(OPENINGS.values()) + tuple(OPENINGS_EN.values())


def opens_a_ruling(text: str) -> bool:
    """Whether ``text`` is a ruling the goal guard handed back (by its first sentence)."""
    return text.startswith(_ALL)
