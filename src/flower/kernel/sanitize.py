"""What text may reach the terminal, and how wide it is there.

Everything flower prints in a run comes from somewhere it does not control: the model's
words, a tool's output, a file name. A terminal obeys escape sequences wherever they
come from, so a tool result could retitle the window, move the cursor over the input
line, switch the character set or (on some terminals) write files. :func:`clean` drops
every such sequence *whole*: stripping only the ESC byte would leave ``[31m`` or
``]0;title`` on screen. Only flower's own styling (added later by the terminal) passes.

Widths are counted in terminal cells, not characters: a CJK character takes two cells,
a combining accent none. Wrapping and cutting by ``len()`` would overrun the line and
tear the input prompt, which is redrawn by moving the cursor.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rich.cells import cell_len, get_character_cell_size

__all__ = ["cells", "clean", "fit", "graphemes", "wrap"]

#: Escape sequences, each matched whole (ECMA-48). Order matters: CSI and the string
#: sequences are tried before the generic two-character ``ESC x``.
_SEQUENCE = re.compile(
    r"""
      (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]?      # CSI ... final
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])                       # OSC DCS SOS PM APC
      .*? (?:\x07|\x1b\\|\x9c|\Z)                                   # ... BEL or ST (or the end)
    | \x1b [\x20-\x2f]* [\x30-\x7e]?                                # ESC (intermediates) final
    """,
    re.VERBOSE | re.DOTALL,
)
#: Every C0 control but newline and tab, DEL, and the C1 block.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` with every escape sequence and control character removed.

    Kept: ``\\n`` and ``\\t`` (tabs are expanded when the line is wrapped). ``\\r\\n``
    becomes ``\\n``; a lone ``\\r`` (a progress bar redrawing itself) is dropped, since
    it would move the cursor back over what is on screen. A string sequence (OSC, DCS,
    ...) left open runs to the end of the text, as a terminal would swallow it.
    Text without controls is returned unchanged (the same object).
    """
    if not _CONTROL.search(text):
        return text
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _CONTROL.sub("", text)


def cells(text: str) -> int:
    """Display width of (clean) ``text`` in terminal cells: wide characters count 2,
    combining marks 0."""
    if text.isascii():
        return len(text)
    return cell_len(text)


def graphemes(text: str) -> Iterator[tuple[str, int]]:
    """``(cluster, width)`` for each user-perceived character of ``text``.

    A cluster is a base character with the zero-width marks after it (combining
    accents, variation selectors, zero-width joiners and what they join), so cutting
    between clusters never separates an accent from its letter or halves a wide
    character.
    """
    if text.isascii():
        for ch in text:
            yield ch, 1
        return
    try:
        from rich.cells import split_graphemes  # rich >= 14
    except ImportError:  # pragma: no cover - older rich: per code point, marks attached
        yield from _clusters(text)
        return
    spans, _ = split_graphemes(text)
    for start, end, width in spans:
        yield text[start:end], width


def _clusters(text: str) -> Iterator[tuple[str, int]]:  # pragma: no cover - rich < 14
    cluster, width = "", 0
    for ch in text:
        size = get_character_cell_size(ch)
        if cluster and (size == 0 or cluster.endswith("\u200d")):
            cluster += ch
            continue
        if cluster:
            yield cluster, width
        cluster, width = ch, size
    if cluster:
        yield cluster, width


def fit(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells, ending in ``...`` when cut.

    Never splits a wide character: when one does not fit, the cut comes before it and
    the line is a cell short.
    """
    if width <= 0:
        return ""
    if cells(text) <= width:
        return text
    if width <= 3:
        return "..."[:width]
    room, kept = width - 3, []
    for cluster, size in graphemes(text):
        if size > room:
            break
        kept.append(cluster)
        room -= size
    return "".join(kept) + "..."


def wrap(text: str, width: int, *, tab: int = 4) -> list[str]:
    """Rows of at most ``width`` cells: ``text`` split at newlines, then wrapped.

    Breaks after the last space that fits when the row has one (words stay whole),
    otherwise between clusters (CJK text has no spaces). Tabs become spaces up to the
    next multiple of ``tab`` cells. Trailing spaces of a row are dropped; an empty
    ``text`` is one empty row.
    """
    width = max(1, width)
    rows: list[str] = []
    for para in text.split("\n"):
        if "\t" in para:
            para = _expand_tabs(para, tab)
        if para.isascii():
            _wrap_ascii(para, width, rows)
        else:
            _wrap_cells(para, width, rows)
    return rows


def _expand_tabs(para: str, tab: int) -> str:
    out, col = [], 0
    for cluster, size in graphemes(para):
        if cluster == "\t":
            pad = tab - col % tab
            out.append(" " * pad)
            col += pad
        else:
            out.append(cluster)
            col += size
    return "".join(out)


def _wrap_ascii(para: str, width: int, rows: list[str]) -> None:
    while len(para) > width:
        cut = para.rfind(" ", 1, width + 1)
        if cut <= 0 or not para[:cut].strip():
            rows.append(para[:width])
            para = para[width:]
        else:
            rows.append(para[:cut].rstrip())
            para = para[cut + 1 :]
    rows.append(para.rstrip())


def _wrap_cells(para: str, width: int, rows: list[str]) -> None:
    row: list[str] = []
    used = 0
    space = -1  # index in row of the last space
    for cluster, size in graphemes(para):
        if used + size > width and row:
            if cluster == " ":  # the break falls on a space: drop it
                rows.append("".join(row).rstrip())
                row, used, space = [], 0, -1
                continue
            if space > 0 and "".join(row[:space]).strip():
                rows.append("".join(row[:space]).rstrip())
                row = row[space + 1 :]
                used = sum(cells(c) for c in row)
            if not (space > 0) or used + size > width:  # the carried word still leaves no room
                rows.append("".join(row).rstrip())
                row, used = [], 0
            space = -1
        if cluster == " ":
            space = len(row)
        row.append(cluster)
        used += size
    rows.append("".join(row).rstrip())
