"""Masking the arguments of old calls, beside their results.

Why: once a coordinator's old results are masked, what is left of a round is mostly its
own words: the ``Agent`` call that dispatched a worker carries the whole task (a few
hundred characters to several KB), a ``Write`` the whole file, an ``Edit`` both strings.
Measured on HT001's coordinator, a masked round still held 651 tokens, 186 of them in two
dispatch prompts; the worker's report that answered each one was already a one-line
placeholder. An old call's arguments are read again as rarely as its result: the model
remembers *that* it dispatched a worker and what came back, not the prompt word for word
(Anthropic's context editing clears tool inputs with their results for the same reason,
``clear_tool_inputs``).

So a call whose result lies below masking's boundary keeps its name, its id and every
short argument (a path, a description, a flag), and each string argument of
:data:`MIN_CHARS` or more becomes one short line saying how long it was. The boundary is
masking's: the arguments change exactly when the results do, so the prompt cache's
prefix between two moves is untouched. Nothing is lost: the stored session keeps every
line as the CLI wrote it (stores never change a row), and a worker's task is in its own
transcript; a written file is on disk. A human's questions (``mcp__human__*``) stay.
"""

from __future__ import annotations

from typing import Any

from flower.stores.mask import never_masked

__all__ = ["INPUT_TEXT", "INPUT_TEXT_EN", "MIN_CHARS", "input_savings", "mask_input"]

#: What a long argument of an old call becomes; ``{n}`` its characters.
INPUT_TEXT = "[旧参数({n} 字符)已移出]"
INPUT_TEXT_EN = "[older argument ({n} chars) moved out]"
#: A string argument shorter than this stays (a placeholder would save little).
MIN_CHARS = 120
#: About what the placeholder takes (characters), counted against what masking saves.
PLACEHOLDER_CHARS = 20


def _long(block: dict[str, Any]) -> list[tuple[str, str]]:
    """The string arguments of the ``tool_use`` ``block`` long enough to mask."""
    if block.get("type") != "tool_use" or never_masked(block.get("name")):
        return []
    arguments = block.get("input")
    if not isinstance(arguments, dict):
        return []
    return [(k, v) for k, v in arguments.items() if isinstance(v, str) and len(v) >= MIN_CHARS]


def input_savings(block: dict[str, Any]) -> int:
    """About the characters masking the arguments of ``block`` saves (0: nothing)."""
    return sum(max(len(value) - PLACEHOLDER_CHARS, 0) for _, value in _long(block))


def mask_input(block: dict[str, Any], english: bool) -> int:
    """Replace each long string argument of the ``tool_use`` ``block`` by its placeholder
    (a new ``input`` dict, keys in their order); the characters saved."""
    found = _long(block)
    if not found:  # most calls (a path, a short command): nothing built
        return 0
    long = dict(found)
    text = INPUT_TEXT_EN if english else INPUT_TEXT
    saved = 0
    masked: dict[str, Any] = {}
    for name, value in block["input"].items():
        if name in long:
            line = text.format(n=f"{len(value):,}")
            saved += len(value) - len(line)
            value = line
        masked[name] = value
    block["input"] = masked
    return saved
