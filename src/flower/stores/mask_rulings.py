"""Old rulings of the judge leave the context once later ones superseded them.

Why: in a guarded step every round after the first starts from the judge's ruling (the
goal guard hands :meth:`~flower.workflow.verdicts.Verdict.feedback` back as the prompt):
its reason, the checks that failed, what to do next. Measured on HT001's coordinator it
was the largest thing a masked round kept (132 of 651 tokens; a real judge's reason runs
longer). A ruling answers the round before it; the next ruling says again what still
fails, so a ruling ten rounds old describes a state that is gone, like a stale ``git
status`` (:mod:`flower.stores.expire`).

So a prompt the goal guard wrote (it opens with one of
:data:`flower.kernel.ruling_words.OPENINGS`) that lies below masking's boundary, and is
not one of the newest :data:`KEEP` rulings, becomes one line saying how long it was.
Only the guard's own words are recognised: a person's prompt never opens that way, and
any other prompt stays. The boundary is masking's, so the view changes only when masking
moves and the cached prefix survives the loads between. Nothing is lost: the stored
session keeps the line as the CLI wrote it, and the run's ledger keeps every ruling.
"""

from __future__ import annotations

from typing import Any

from flower.kernel.ruling_words import opens_a_ruling
from flower.stores.transcript import Entry

__all__ = [
    "KEEP",
    "RULING_TEXT",
    "RULING_TEXT_EN",
    "Rulings",
    "kept_below",
    "mask_rulings",
    "rulings",
]

#: What a superseded ruling becomes; ``{n}`` its characters.
RULING_TEXT = "[旧裁判意见({n} 字符),已被新的取代]"
RULING_TEXT_EN = "[older ruling of the judge ({n} chars), superseded]"
#: The newest rulings that always stay whole.
KEEP = 2


def _ruling_text(entry: Entry) -> tuple[dict[str, Any], str] | None:
    """Where the ruling's text sits in the main-chain prompt ``entry``, to be replaced in
    place: ``(container, key)`` with ``container[key]`` the text (the message when its
    content is a string, else the text block that opens the ruling); ``None`` when the
    prompt is not a ruling."""
    message = entry.get("message") if entry.get("isSidechain") is not True else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return (message, "content") if opens_a_ruling(content) else None  # type: ignore[return-value]
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "text":
            if opens_a_ruling(str(block.get("text", ""))):
                return block, "text"
    return None


#: The rulings of a view, oldest first: ``(line, container, key)``, the ruling's text at
#: ``container[key]`` (:func:`rulings`).
Rulings = list[tuple[int, dict[str, Any], str]]


def rulings(entries: list[Entry], prompts: list[int]) -> Rulings:
    """Every ruling among the prompt lines ``prompts``, oldest first, and where its text
    sits (one pass: :func:`kept_below` and :func:`mask_rulings` share it)."""
    return [(i, *at) for i in prompts if (at := _ruling_text(entries[i])) is not None]


def mask_rulings(found: Rulings, upto: int, english: bool) -> int:
    """Replace every ruling of ``found`` (:func:`rulings`) before line ``upto``, but the
    newest :data:`KEEP` of all, by its placeholder (in place); how many."""
    text = RULING_TEXT_EN if english else RULING_TEXT
    count = 0
    for index, container, key in found[: max(len(found) - KEEP, 0)]:
        if index >= upto:
            break
        body = container[key]
        container[key] = text.format(n=f"{len(body):,}")
        count += 1
    return count


def kept_below(found: Rulings, upto: int) -> int | None:
    """The line of the oldest ruling of ``found`` before line ``upto`` that
    :func:`mask_rulings` keeps whole as one of the newest :data:`KEEP` (a later load
    masks it once newer rulings come: flower's cache mark must sit before it,
    :mod:`flower.stores.anchor`), else ``None``. Asked before :func:`mask_rulings`
    changes the lines."""
    kept = max(len(found) - KEEP, 0)  # the oldest ``kept`` of all are masked
    return found[kept][0] if kept < len(found) and found[kept][0] < upto else None
