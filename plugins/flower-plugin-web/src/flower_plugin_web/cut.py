"""An event's payload as the pages get it: long texts, long lists and deep nesting cut,
each cut saying how much was left out.

The run keeps every event whole (the side questions read them), but each page is sent
its copy, and a page's copy of a tool call can be huge: a ``Write`` of 3 MB is
``{"input": {"content": "<3 MB>"}}``, which was sent whole to every page (only texts at
the payload's top level were cut). So the whole payload is walked: a text longer than
:data:`TEXT` is cut; a list or an object keeps its first :data:`ITEMS`; below
:data:`DEPTH` levels a value is replaced by a line saying so; and all the texts of one
payload together keep at most :data:`TOTAL` characters. A payload with nothing to cut
is returned as is (no copy).
"""

from __future__ import annotations

from typing import Any

#: Characters of one text.
TEXT = 16_384
#: Items of one list, or keys of one object.
ITEMS = 200
#: Levels of nesting kept.
DEPTH = 8
#: Characters of all the texts of one payload together.
TOTAL = 128 * 1024


def shortened(payload: Any) -> Any:
    """``payload`` as the pages get it (the original when nothing needed cutting)."""
    return _Cutter().walk(payload, 0)


def cut_text(text: str, keep: int = TEXT) -> str:
    return f"{text[:keep]}… (cut: {len(text)} characters in all)"


class _Cutter:
    def __init__(self) -> None:
        self.left = TOTAL

    def walk(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if not isinstance(value, (dict, list, tuple)):
            return value
        if depth >= DEPTH:
            return f"… (cut: nested deeper than {DEPTH} levels)"
        if isinstance(value, dict):
            return self.mapping(value, depth)
        return self.sequence(value, depth)

    def text(self, value: str) -> str:
        keep = min(TEXT, max(self.left, 0))
        self.left -= min(len(value), keep)
        return value if len(value) <= keep else cut_text(value, keep)

    def mapping(self, value: dict[Any, Any], depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        changed = len(value) > ITEMS
        for n, (key, item) in enumerate(value.items()):
            if n == ITEMS:
                out["…"] = f"(cut: {len(value) - ITEMS} more keys)"
                break
            short_key = self.text(key) if isinstance(key, str) else key
            short = self.walk(item, depth + 1)
            changed = changed or short is not item or short_key is not key
            out[short_key] = short
        return out if changed else value

    def sequence(self, value: list[Any] | tuple[Any, ...], depth: int) -> Any:
        out = [self.walk(item, depth + 1) for item in value[:ITEMS]]
        changed = len(value) > ITEMS or any(
            a is not b for a, b in zip(out, value[:ITEMS], strict=True)
        )
        if len(value) > ITEMS:
            out.append(f"… (cut: {len(value) - ITEMS} more items)")
        return out if changed else value
