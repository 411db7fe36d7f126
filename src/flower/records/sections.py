"""The one section parser behind every document a model writes: Handoff, Brief, Goal, Verdict.

A model answers in loose markdown: ``## 目标``, ``**目标**``, ``目标:``, ``3. 边界``, headings
with text on the same line, code pasted in fences, the whole answer wrapped in a
```` ```markdown ```` fence. Every document reads that the same way, so there is one reader.

The property every document relies on: what :func:`scan` returns is a fixed point. A body
it produces never holds a line that could be read back as a heading, a fence or an
amendment marker, and leading or trailing whitespace never changes how a line reads. So a
document written out with its sections under canonical headings parses back to itself,
whatever text it was first parsed from. Three rules carry that:

- the text after a heading on the same line is read as if it were its own line (so
  ``目标: 边界: x`` is two headings, and ``目标: ```python`` opens a fence);
- a line counts as a fence wherever it is: inside a ```` ```markdown ```` wrapper a fence with
  an info string opens a nested block instead of becoming body text;
- the prefix of a heading (``#``, list markers, checkboxes, bold) uses the same marker
  grammar as :func:`bullets`, so an item written back as ``- <item>`` is a heading only if
  the line it came from already was one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from flower.kernel.files import atomic_write

#: Written for an empty section; read back, it counts as empty, so copying the template
#: does not fake a complete document.
PLACEHOLDER = "(未填)"
PLACEHOLDER_EN = "(not filled in)"
#: Either language's placeholder reads as empty, whichever language wrote the file.
PLACEHOLDERS = frozenset({PLACEHOLDER, PLACEHOLDER_EN})

#: An amendment block appended to a frozen document (``### 补充 · <label> · <time>…``, in
#: English ``### Amendment · …``). Where a parser is given an ``appendix`` field, this line
#: and everything after it is that field's text verbatim: a human's amendment may itself
#: say ``边界: …`` and must not be read as a repeat of a section that is already filled
#: (the first one wins).
AMEND_MARK = re.compile(r"\s*#{1,6}\s*(?:补充|Amendment)\s*·")


def placeholder(lang: str | None = None) -> str:
    """The placeholder in ``lang`` (default: the language in effect)."""
    from flower.kernel.lang import pick

    return pick(PLACEHOLDER, PLACEHOLDER_EN, lang)


_FENCE = re.compile(r"\s*(`{3,}|~{3,})\s*([\w+-]*)")
_UNWRAP = frozenset({"markdown", "md"})
_HASH = re.compile(r"#{1,6}\s*")
_BOLD = re.compile(r"(\*\*|__)\s*")
_WS = re.compile(r"\s*")
# One list marker or checkbox. Shared by headings and bullets (see the module docstring).
# A number needs no space after it (``1.运行``), but ``1.5`` and ``3.10`` are not markers.
_ITEM = re.compile(r"(?:[-*+](?=\s|$)|(?P<num>[0-9]{1,3}[.、)．)])(?![0-9])|\[[ xX]\](?=\s|$))\s*")


def _space(line: str, pos: int) -> int:
    """Past the whitespace at ``pos`` (any Unicode whitespace, as ``str.strip`` sees it:
    stripping a body must never change how one of its lines reads)."""
    blank = _WS.match(line, pos)
    return blank.end() if blank else pos


def _skip_items(line: str, pos: int) -> tuple[int, bool]:
    """Past every list marker and checkbox at ``pos``; whether one was a number."""
    numbered = False
    while item := _ITEM.match(line, pos):
        numbered = numbered or item.group("num") is not None
        pos = item.end()
    return pos, numbered


def bullets(text: str) -> list[str]:
    """One item per non-empty line, list markers and checkboxes stripped.

    Markers are stripped repeatedly (``- [ ] 1. x`` is ``x``), so an item never starts with
    one and ``- <item>`` reads back as the same item.
    """
    items: list[str] = []
    for line in (text or "").splitlines():
        start, _ = _skip_items(line, _space(line, 0))
        item = line[start:].strip()
        if item:
            items.append(item)
    return items


@dataclass(frozen=True)
class _Outline:
    """The aliases of one document compiled into one case-insensitive alternation."""

    pattern: re.Pattern[str]
    fields: tuple[str, ...]


@functools.lru_cache(maxsize=64)
def _compile(pairs: tuple[tuple[str, str], ...]) -> _Outline:
    # Longest first: a regex alternation takes the first alternative that matches, and
    # 未知 must not win over 未知与假设.
    ordered = sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)
    groups = "|".join(f"({re.escape(alias)})" for alias, _ in ordered)
    return _Outline(re.compile(groups, re.IGNORECASE), tuple(f for _, f in ordered))


def _outline(aliases: Mapping[str, str]) -> _Outline:
    return _compile(tuple((alias.lower(), name) for alias, name in aliases.items() if alias))


def _heading(line: str, start: int, outline: _Outline) -> tuple[str, int] | None:
    """``(field, where the text after the heading starts)`` when ``line[start:]`` is a
    heading, else ``None``.

    Accepted: ``## 正在做``, ``**下一步**``, ``死路:``, ``3. 下一步``, ``- [ ] **现场**: ...``.
    A bare word followed by text (``下一步 先跑测试``) is a heading only with a marker
    (``#``, a number, bold), so a sentence that starts with an alias stays a sentence.
    Positions, not slices: a line chaining thousands of headings stays linear.
    """
    pos = _space(line, start)
    hashed = _HASH.match(line, pos)
    if hashed:
        pos = hashed.end()
    pos, numbered = _skip_items(line, pos)
    bold = ""
    if opened := _BOLD.match(line, pos):
        bold, pos = opened.group(1), opened.end()
        pos, inner = _skip_items(line, pos)
        numbered = numbered or inner
    found = outline.pattern.match(line, pos)
    if found is None:
        return None
    name, end = outline.fields[(found.lastindex or 1) - 1], found.end()
    at = _space(line, end)
    closed = bool(bold) and line.startswith(bold, at)
    if closed:
        at = _space(line, at + len(bold))
    if line.startswith((":", ":"), at):
        at = _space(line, at + 1)
        if bold and not closed and line.startswith(bold, at):
            at = _space(line, at + len(bold))
        return name, at
    if at == len(line):
        return name, at
    if (hashed or numbered or bold) and (closed or line[end].isspace()):
        return name, at
    return None


def _labels(line: str) -> bool:
    """Whether a heading of the section being read, in a section that already has text,
    is a label inside it, kept as body.

    Told to write its assumptions under 未知与假设, a model writes ``- 假设:用 LF`` or
    ``### 假设`` there: dropping that as a repeat of the section (the first one wins) would
    lose the premise. Not a ``#``/``##`` heading, which starts the section over: a real
    repeat.
    """
    hashed = _HASH.match(line, _space(line, 0))
    return hashed is None or hashed.group().count("#") >= 3


def _has_text(line: str) -> bool:
    """Whether a body line gives its section text: an item that is not the placeholder
    (a lone list marker has none: a list written back drops it)."""
    return any(item not in PLACEHOLDERS for item in bullets(line))


def _closes(line: str, fence: str) -> bool:
    bare = line.strip()
    return len(bare) >= len(fence) and bare == fence[0] * len(bare)


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` read.

    ``found``: field -> text of its first non-empty section. ``headed``: whether any line
    was a heading at all (the verdict reads a bare answer differently). ``plain``: every
    line outside fences, stripped, for a reader that searches the whole answer.
    """

    found: dict[str, str]
    headed: bool
    plain: str


def scan(text: str, aliases: Mapping[str, str], *, appendix: str | None = None) -> Scan:
    """Split ``text`` into sections by heading; the first non-empty one of a field wins.

    ``aliases`` maps a heading (any case) to a field name; longer aliases win over shorter
    ones they start with. Fenced blocks are dropped (a heading inside pasted code is not a
    heading) and an unclosed fence drops everything after it, so a cut-off answer does not
    look complete; a ```` ```markdown ```` fence is the model wrapping the document itself
    and its content is kept. A heading of the section being read, inside it and below
    ``##`` (``- 假设:…`` under 未知与假设), is a label in its text, not a repeat. With
    ``appendix``, an :data:`AMEND_MARK` line and everything after it are appended verbatim
    to that field.
    """
    outline = _outline(aliases)
    lines = (text or "").removeprefix("\ufeff").splitlines()
    found: dict[str, str] = {}
    plain: list[str] = []
    headed = False
    current: str | None = None
    buffer: list[str] = []
    filled = False  # whether the section being read has text yet (see _labels)
    wrappers: list[str] = []  # open ```markdown fences, innermost last
    code: str | None = None  # the open code fence
    amendment: str | None = None

    def close() -> None:
        content = "\n".join(buffer).strip()
        if current is not None and content and content not in PLACEHOLDERS:
            found.setdefault(current, content)

    for index, raw in enumerate(lines):
        if code is not None:
            if _closes(raw, code):
                code = None
            continue
        pos = 0  # where the line being read starts: after a heading, its text is one
        while True:
            fence = _FENCE.match(raw, pos)
            if fence:
                if wrappers and _closes(raw[pos:], wrappers[-1]):
                    wrappers.pop()
                elif fence.group(2).lower() in _UNWRAP:
                    wrappers.append(fence.group(1))
                else:
                    code = fence.group(1)
                break
            if appendix is not None and AMEND_MARK.match(raw, pos):
                amendment = "\n".join([raw[pos:], *lines[index + 1 :]]).strip()
                break
            if not pos:
                plain.append(raw)
            hit = _heading(raw, pos, outline)
            if hit is not None and not pos and hit[0] == current and filled and _labels(raw):
                hit = None
            if hit is None:
                body = raw[pos:].strip() if pos else raw
                buffer.append(body)
                filled = filled or _has_text(body)
                break
            close()
            headed, current, buffer, filled = True, hit[0], [], False
            pos = hit[1]
            if pos == len(raw):
                break
        if amendment is not None:
            break
    close()
    if appendix is not None and amendment is not None:
        base = found.get(appendix, "")
        found[appendix] = f"{base}\n\n{amendment}" if base else amendment
    return Scan(found, headed, "\n".join(plain).strip())


def parse_sections(
    text: str, aliases: Mapping[str, str], *, appendix: str | None = None
) -> dict[str, str]:
    """Field -> text of its first non-empty section (see :func:`scan`)."""
    return scan(text, aliases, appendix=appendix).found


def inert(text: str, aliases: Mapping[str, str]) -> str:
    """``text`` with every line that would read as structure quoted with ``> ``.

    For text flower itself adds inside a section (an amendment to a goal): a line of it
    that says ``判定: …`` or opens a fence must stay inside that section, and a quote keeps
    it readable.
    """
    outline = _outline(aliases)
    out: list[str] = []
    for line in (text or "").splitlines():
        structural = (
            _FENCE.match(line) or AMEND_MARK.match(line) or _heading(line, 0, outline) is not None
        )
        out.append(f"> {line}" if structural else line)
    return "\n".join(out)


def load_text(path: str | Path) -> str | None:
    """A document's text; ``None`` when it is absent, unreadable or not UTF-8."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def save_text(path: str | Path, text: str) -> Path:
    """Write a document atomically, creating its folder."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, text)
    return target


class Frozen:
    """``write`` (the freeze) and ``load`` for a document that parses and renders itself.

    A document class mixes this in and provides ``parse``, ``to_markdown`` and a ``path``
    field; the file on disk is then exactly what ``to_markdown`` says, written atomically,
    and reading it back goes through the same parser as a model's answer.
    """

    path: Path | None

    @classmethod
    def parse(cls, text: str) -> Self:
        raise NotImplementedError

    def to_markdown(self) -> str:
        raise NotImplementedError

    def write(self, path: str | Path) -> Path:
        """Freeze: write atomically (folders created) and remember ``path``."""
        self.path = save_text(path, self.to_markdown())
        return self.path

    @classmethod
    def load(cls, path: str | Path) -> Self | None:
        """The file read back; ``None`` when absent, unreadable or not UTF-8."""
        text = load_text(path)
        if text is None:
            return None
        document = cls.parse(text)
        document.path = Path(path)
        return document


def amendments(text: str) -> str:
    """The amendment blocks a document file ends with (from its first :data:`AMEND_MARK`
    line to the end), ``""`` when it has none."""
    lines = (text or "").splitlines()
    for index, line in enumerate(lines):
        if AMEND_MARK.match(line):
            return "\n".join(lines[index:]).strip()
    return ""


__all__ = [
    "AMEND_MARK",
    "PLACEHOLDER",
    "PLACEHOLDERS",
    "PLACEHOLDER_EN",
    "Frozen",
    "Scan",
    "amendments",
    "bullets",
    "inert",
    "load_text",
    "parse_sections",
    "placeholder",
    "save_text",
    "scan",
]
