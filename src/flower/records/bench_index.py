"""What the workbench says about itself: the one-line description of each file, the
``INDEX.md`` listing, and the rules block put into a session's system prompt, in Chinese
(the seed's) and English.

Kept apart from :mod:`flower.records.workbench` (the folders and the walled writes, which
re-exports the names here): this is wording an agent reads every turn, that is
machinery. The language is the one in effect (:mod:`flower.kernel.lang`) when the index is
rendered; ``INDEX.md`` is rebuilt on every refresh, so it follows a switch at once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from flower.kernel.lang import EN, current
from flower.kernel.text import one_line

__all__ = [
    "DESC_HEAD_CHARS",
    "DESC_LINES",
    "DESC_MAX",
    "describe",
    "describe_text",
    "render_index",
    "rules_block",
]

#: How many leading lines may carry the ``desc:`` line.
DESC_LINES = 8
DESC_MAX = 100
#: How much of a file's head is read to find those lines: enough for eight long lines,
#: and never the whole of a big file that has no newline (a blob, a minified bundle).
DESC_HEAD_CHARS = 16_384

_COMMENT = re.compile(r"^\s*(?:#|//|--)\s?(.*)$")
_DESC = re.compile(r"^desc\s*[:：]\s*(.*)$", re.IGNORECASE)
_DOCSTRING = re.compile(r"^\s*[rRbBuU]?(\"\"\"|''')\s*(.*)$")
_WORDY = re.compile(r"\w")


def describe(path: Path) -> str:
    """The one-line description of a file: its ``desc:`` line within the first 8 lines
    (after ``#``, ``//`` or ``--``), else its first non-empty comment, else the first
    line of its docstring; cut to 100 characters. ``""`` when there is none."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            head = fh.read(DESC_HEAD_CHARS)
    except OSError:
        return ""
    return describe_text(head)


def describe_text(text: str) -> str:
    """:func:`describe` for text already read. A byte-order mark is ignored, and an empty
    ``desc:`` line describes nothing (the fallbacks still apply)."""
    lines = text.removeprefix("\ufeff").splitlines()[:DESC_LINES]
    fallback = ""
    for i, line in enumerate(lines):
        if i == 0 and line.startswith("#!"):
            continue
        comment = _COMMENT.match(line)
        if comment:
            body = comment.group(1).strip().lstrip("#").strip()
            desc = _DESC.match(body)
            if desc:
                if desc.group(1).strip():
                    return one_line(desc.group(1), DESC_MAX)
                continue
            if not fallback and _WORDY.search(body) and not _is_pragma(body):
                fallback = body
            continue
        doc = _DOCSTRING.match(line)
        if doc and not fallback:
            quote, rest = doc.group(1), doc.group(2)
            first = rest.split(quote)[0].strip()
            if not first and i + 1 < len(lines):
                first = lines[i + 1].split(quote)[0].strip()
            if first:
                fallback = first
    return one_line(fallback, DESC_MAX)


def _is_pragma(body: str) -> bool:
    low = body.lower()
    return low.startswith(("-*-", "coding", "vim:", "type:", "noqa", "pylint", "eslint", "!"))


def _english() -> bool:
    return current() == EN


def size_text(n: int) -> str:
    """A file's size where it has no description."""
    if n < 1024:
        return f"{n} bytes" if _english() else f"{n} 字节"
    return f"{n / 1024:.1f}K"


def render_index(shown: Sequence[tuple[str, str]], folders: Sequence[str], *, total: int) -> str:
    """``INDEX.md``: the ``(relative path, description)`` pairs in ``shown``, by folder;
    ``total`` files exist (the rest are counted in one line)."""
    if _english():
        lines = ["# Workbench index", "", "(written by flower; edits are overwritten)", ""]
    else:
        lines = ["# 工作台索引", "", "(flower 自动生成,改了会被覆盖)", ""]
    if not total:
        lines.append("(empty so far)" if _english() else "(还是空的)")
    for folder in folders:
        mine = sorted((e for e in shown if e[0].startswith(folder + "/")), key=lambda e: e[0])
        if not mine:
            continue
        lines.append(f"## {folder}/")
        lines.extend(f"- {rel} — {desc}" for rel, desc in mine)
        lines.append("")
    hidden = total - len(shown)
    if hidden > 0:
        lines.append(
            f"({hidden} older file(s) not listed)"
            if _english()
            else f"(另有 {hidden} 个较旧的文件没有列出)"
        )
    return "\n".join(lines).rstrip() + "\n"


def rules_block(
    *, where: str, external: bool, scripts: str, artifacts: str, notes: str, index: str
) -> str:
    """The workbench's place and three rules, ending where the index follows."""
    if _english():
        if external:
            place = (
                f"The workbench is outside the repository: {where}/ (not in the workspace:"
                " always use absolute paths)."
            )
        else:
            place = f"The workbench is at {where}/ (relative to the workspace root)."
        lines = [
            "## Workbench",
            place,
            f"1. Scripts worth running twice go into {scripts}/, with `# desc: one line"
            " saying what it does` as the first line.",
            f"2. Results longer than 2000 characters go into {artifacts}/; the conversation"
            " gets the path and the conclusion only.",
            f"3. Key decisions go into {notes}/, one decision per file.",
            "",
            f"The index now ({index}):",
            "",
        ]
        return "\n".join(lines)
    if external:
        place = f"工作台在仓库之外:{where}/ ——它不在工作区里,请一律用绝对路径访问。"
    else:
        place = f"工作台在 {where}/(相对工作区根目录)。"
    return "\n".join(
        [
            "## 工作台",
            place,
            f"1. 需要第二次运行的脚本写进 {scripts}/,第一行写 `# desc: 一句话说明`。",
            f"2. 长于 2000 字的结果写进 {artifacts}/,对话里只给路径和结论。",
            f"3. 关键决定写进 {notes}/,一个决定一个文件。",
            "",
            f"当前索引({index}):",
            "",
        ]
    )
