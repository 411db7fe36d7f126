"""The brief: the one thing the clarify conversation leaves behind.

The questions and answers of clarifying are scaffolding, like a worker's trial and error:
they stay on disk and out of every later context. Downstream sessions start from four
sections, each there to stop one kind of failure:

- 目标 (goal): building the wrong thing;
- 验收标准 (accept): nobody able to say whether it is done;
- 边界 (bounds): scope creep, for every worker downstream;
- 未知与假设 (unknowns): silent wrong premises. What was not asked, what a timeout left
  open, what was guessed, written where a later reader can catch it.

Only these four sections are read; anything else in the clarifier's answer (it has been
seen pasting whole files) is dropped. Once complete, the brief is frozen to disk
(:meth:`Brief.write`); a human changes requirements by editing that file or by an
amendment block appended to it (``### 补充 · …``, see ``HumanChannel.amend``): that block
and everything after it land, verbatim, in 未知与假设.

Both languages' headings are always read (``## 目标`` and ``## Goal`` alike), so a brief
frozen by a Chinese run is read by an English one and the reverse; what is written uses
the language in effect (:mod:`flower.kernel.lang`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from flower.kernel.lang import pick
from flower.records.sections import Frozen, parse_sections, placeholder

#: Field -> its heading, in document order.
SECTIONS: dict[str, str] = {
    "goal": "目标",
    "accept": "验收标准",
    "bounds": "边界",
    "unknowns": "未知与假设",
}
SECTIONS_EN: dict[str, str] = {
    "goal": "Goal",
    "accept": "Acceptance criteria",
    "bounds": "Scope",
    "unknowns": "Unknowns and assumptions",
}

#: Headings a model writes for the same sections (matched longest first, any case).
ALIASES: dict[str, tuple[str, ...]] = {
    "goal": ("目标", "goal", "objective"),
    "accept": ("验收标准", "验收条件", "完成标准", "验收", "acceptance criteria", "acceptance"),
    "bounds": (
        "边界",
        "范围边界",
        "不做什么",
        "范围",
        "bounds",
        "boundaries",
        "scope",
        "out of scope",
    ),
    "unknowns": (
        "未知与假设",
        "未知项与假设",
        "已知未知",
        "未知项",
        "假设",
        "未知",
        "unknowns and assumptions",
        "assumptions and unknowns",
        "unknowns",
        "assumptions",
    ),
}

_ALIAS_TO_FIELD = {alias.lower(): name for name, aliases in ALIASES.items() for alias in aliases}

#: The last section: amendment blocks appended to the file belong to it.
_APPENDIX = "unknowns"

TITLE = "# 需求确认书"
TITLE_EN = "# The brief"
#: Deleting the file does not clarify anew: the clarify session continues where it was
#: and gives the same brief back. Starting over is ``flower --new`` (archived, not lost).
_NOTE = (
    "> 澄清之后冻结的需求。要改需求,直接改这个文件;"
    "要从头另做一件事,用 flower --new(这份文件会归档,不会丢)。"
)
_NOTE_EN = (
    "> The requirements, frozen after clarifying. To change them, edit this file; to start"
    " something else from scratch, run flower --new (this file is archived, not lost)."
)


def headings(lang: str | None = None) -> dict[str, str]:
    """Field -> heading in ``lang`` (default: the language in effect)."""
    return pick(SECTIONS, SECTIONS_EN, lang)


@dataclass
class Brief(Frozen):
    """A frozen requirement: complete when all four sections have text."""

    goal: str = ""
    accept: str = ""
    bounds: str = ""
    unknowns: str = ""
    path: Path | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str) -> Brief:
        """Read a clarifier's answer (or a brief file). Never raises; a section it cannot
        find stays empty and :meth:`missing` names it."""
        found = parse_sections(text, _ALIAS_TO_FIELD, appendix=_APPENDIX)
        brief = cls()
        for name, content in found.items():
            setattr(brief, name, content)
        return brief

    def missing(self) -> list[str]:
        """The headings of the empty sections, in document order, ready to show (in the
        language in effect)."""
        return [heading for name, heading in headings().items() if not getattr(self, name).strip()]

    def complete(self) -> bool:
        return not self.missing()

    def sections(self) -> dict[str, str]:
        """Field -> text, in document order."""
        return {name: getattr(self, name) for name in SECTIONS}

    def to_markdown(self) -> str:
        """The file a human reads and edits; an empty section shows the placeholder."""
        parts = [pick(TITLE, TITLE_EN), "", pick(_NOTE, _NOTE_EN), ""]
        for name, heading in headings().items():
            parts += [f"## {heading}", "", getattr(self, name).strip() or placeholder(), ""]
        return "\n".join(parts)

    def prompt_block(self) -> str:
        """What a downstream session is given: the non-empty sections, nothing else."""
        return "\n\n".join(
            f"## {heading}\n{getattr(self, name).strip()}"
            for name, heading in headings().items()
            if getattr(self, name).strip()
        )


__all__ = ["ALIASES", "SECTIONS", "SECTIONS_EN", "TITLE", "TITLE_EN", "Brief", "headings"]
