"""The handoff document: what a full session leaves its successor.

When a session's context is nearly full, flower does not let the CLI compact it into a
summary nobody can read. The session itself writes a handoff (only it holds the
context), flower saves it as ``<workbench.notes>/交接-<step>.md`` and starts a fresh
session whose first prompt is :meth:`Handoff.prompt_block`. The document is readable
and editable, so a human can see what was kept and what was lost.

Five sections, two of them required: ``doing`` and ``next``. Demanding dead ends would
make the model invent some.

The prompt, the headings and flower's own words are in the language in effect
(:mod:`flower.kernel.lang`); both languages' headings are always read, so a successor in
one language continues a handoff written in the other. The file name keeps the seed's
``交接-`` prefix in every language: it is a key (the bequest and the page look for it).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flower.kernel.files import atomic_write, safe_name
from flower.kernel.lang import EN, current, pick
from flower.records.sections import PLACEHOLDER, parse_sections, placeholder
from flower.records.workbench import ARCHIVE_DIRNAME

if TYPE_CHECKING:
    from flower.records.workbench import Workbench

#: Section field -> its heading in the document, in document order.
SECTIONS: dict[str, str] = {
    "doing": "正在做",
    "decided": "已决定",
    "deadends": "死路",
    "next": "下一步",
    "scene": "现场",
}
SECTIONS_EN: dict[str, str] = {
    "doing": "In progress",
    "decided": "Decided",
    "deadends": "Dead ends",
    "next": "Next steps",
    "scene": "Where things are",
}

#: The heading of the section the handoff audit appends (``runtime/audit.py``): what the
#: document left out of what flower knows is still open. Not one of the five: the model
#: never writes it, and an empty one is not shown.
AUDIT_HEADING = "核对补充"
AUDIT_HEADING_EN = "Added by the audit"

#: Only these must be non-empty for a handoff to be usable.
REQUIRED = ("doing", "next")

#: Other headings a model writes for the same sections (Chinese and English).
ALIASES: dict[str, tuple[str, ...]] = {
    "doing": (
        "正在做",
        "在做什么",
        "正在做的事",
        "当前任务",
        "进行中",
        "目前在做",
        "doing",
        "in progress",
        "current task",
    ),
    "decided": (
        "已决定",
        "已经决定",
        "已定",
        "决定",
        "关键决定",
        "已做的决定",
        "decided",
        "decisions",
    ),
    "deadends": (
        "死路",
        "走不通的路",
        "走不通",
        "已排除",
        "踩过的坑",
        "试过不行",
        "死胡同",
        "dead ends",
        "deadends",
        "dead-ends",
    ),
    "next": ("下一步", "接下来", "下一步做什么", "待办", "next", "next steps", "next step"),
    "scene": (
        "现场",
        "现状",
        "环境",
        "关键文件",
        "scene",
        "state",
        "environment",
        "where things are",
    ),
}

#: The prompt of the handoff round, run as one more turn of the full session.
HANDOFF_PROMPT = """上下文快满了:已用约 {used} tokens,窗口 {window} tokens。
这件事马上要交给一个全新的会话接着做。它看不到这段对话,只能看到你现在写的交接文档。

现在只写交接,不要调用任何工具,不要继续干活。按下面五个小节写,小节标题照抄:

## 正在做
这件事的目标,以及眼下正在做的那一块。

## 已决定
已经拍板的决定和理由,免得接手的人推翻重来。

## 死路
试过但走不通的做法和原因。没有就写"无",不要编。

## 下一步
接手后第一件、第二件要做的事,具体到文件和命令。

## 现场
相关的文件、分支、命令、工作台上已落盘的东西(写路径),以及还没验证的点。
"""

HANDOFF_PROMPT_EN = """\
The context is nearly full: about {used} tokens used of a {window}-token window.
This work is about to pass to a brand-new session. It cannot see this conversation, only \
the handoff you write now.

Write the handoff and nothing else: call no tools and do no more work. Use these five \
sections, headings exactly as given:

## In progress
The goal of this work, and the part of it under way right now.

## Decided
Decisions already made and why, so the successor does not reopen them.

## Dead ends
Approaches that were tried and did not work, and why. If there are none, write "none"; \
do not make any up.

## Next steps
The first and second things to do after taking over, down to files and commands.

## Where things are
The relevant files, branches and commands, what is already saved on the workbench (give \
the paths), and what has not been verified yet.
"""

_PATTERNS = (
    "prompt is too long",
    "context length exceeded",
    "context_length_exceeded",
    "maximum context length",
    "too many total text bytes",
    "input length and max_tokens exceed",
    "input is too long",
    "request too large",
    "request_too_large",
    "exceeds the context window",
    "context window exceeded",
    "conversation is too long",
)
_OVERFLOW = re.compile("|".join(re.escape(p) for p in _PATTERNS), re.IGNORECASE)


def is_overflow(*texts: str | None) -> bool:
    """Whether any text is the API refusing a prompt for its size.

    Such an error is not worth retrying (the same prompt stays too long); the Runtime
    turns it into an immediate handoff instead.
    """
    return any(text and _OVERFLOW.search(text) for text in texts)


# --- parsing -------------------------------------------------------------------------------

_ALIAS_TO_FIELD = {alias.lower(): name for name, aliases in ALIASES.items() for alias in aliases}
_ALIAS_TO_FIELD[AUDIT_HEADING] = "audit"
_ALIAS_TO_FIELD[AUDIT_HEADING_EN.lower()] = "audit"
#: The title line, ``# 交接 · <step>`` or ``# Handoff · <step>``.
_TITLE = re.compile(r"^#[ \t]+(?:交接|Handoff)(?:[ \t]*·[ \t]*(?P<step>.+))?$", re.MULTILINE)
#: The note a mechanical handoff carries under its title, in each language.
_DEGRADED = "> 这份交接是机械拼装的:上一代会话没能自己写出来。"
_DEGRADED_EN = "> This handoff was assembled mechanically: the last session could not write one."
_DEGRADED_MARKS = ("机械拼装", "assembled mechanically")


@dataclass
class Handoff:
    """A handoff document, five sections; ``doing`` and ``next`` are required.

    ``degraded`` is true for a document flower assembled mechanically because the
    session could not write one (see :func:`degraded`). ``audit`` is the section the
    handoff audit appended: open items the document did not mention ("" when none).
    """

    doing: str = ""
    decided: str = ""
    deadends: str = ""
    next: str = ""
    scene: str = ""
    step: str = ""
    path: Path | None = field(default=None, compare=False)
    degraded: bool = field(default=False, compare=False)
    audit: str = ""

    @classmethod
    def parse(cls, text: str, *, step: str = "") -> Handoff:
        """Read a model's answer; headings may be ``## 正在做``, ``**下一步**``, ``死路:``…"""
        found = parse_sections(text, _ALIAS_TO_FIELD)
        doc = cls(step=step)
        for name, content in found.items():
            setattr(doc, name, content)
        return doc

    def missing(self) -> list[str]:
        """Required sections that are empty, by field name."""
        return [name for name in REQUIRED if not getattr(self, name).strip()]

    def complete(self) -> bool:
        return not self.missing()

    def sections(self) -> dict[str, str]:
        """Field name -> text, in document order."""
        return {name: getattr(self, name) for name in SECTIONS}

    def to_markdown(self) -> str:
        """The document as a human reads and edits it."""
        word = pick("交接", "Handoff")
        parts = [f"# {word} · {self.step}" if self.step else f"# {word}", ""]
        if self.degraded:
            parts += [pick(_DEGRADED, _DEGRADED_EN), ""]
        for name, heading in pick(SECTIONS, SECTIONS_EN).items():
            parts += [f"## {heading}", "", getattr(self, name).strip() or placeholder(), ""]
        if self.audit.strip():
            parts += [f"## {pick(AUDIT_HEADING, AUDIT_HEADING_EN)}", "", self.audit.strip(), ""]
        return "\n".join(parts)

    def _body(self) -> str:
        """The non-empty sections under the headings of the language in effect."""
        body = "\n\n".join(
            f"## {heading}\n{getattr(self, name).strip()}"
            for name, heading in pick(SECTIONS, SECTIONS_EN).items()
            if getattr(self, name).strip()
        )
        if self.audit.strip():
            body += f"\n\n## {pick(AUDIT_HEADING, AUDIT_HEADING_EN)}\n{self.audit.strip()}"
        return body

    def prompt_block(self) -> str:
        """The successor session's first prompt."""
        body = self._body()
        if current() == EN:
            where = f" (the original is at {self.path})" if self.path else ""
            step = f'"{self.step}"' if self.step else "this work"
            return (
                f"You are taking over {step}. The last session's context filled up; this is"
                f" the handoff it left{where}:\n\n{body}\n\n"
                'Carry on from "Next steps". Look at what is already saved on the workbench'
                " before changing anything, and do not start over."
            )
        where = f"(原文在 {self.path})" if self.path else ""
        step = f"「{self.step}」" if self.step else "这件事"
        return (
            f"你接手{step}。上一代会话的上下文满了,这是它留下的交接{where}:\n\n"
            f"{body}\n\n"
            "从「下一步」接着做。工作台上已经落盘的东西先看再动,不要从头开始。"
        )

    def write(self, path: str | Path) -> Path:
        """Save atomically (``.tmp`` then replace); remembers ``path``."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, self.to_markdown())
        self.path = target
        return target

    @classmethod
    def load(cls, path: str | Path) -> Handoff | None:
        """Read a saved document back; ``None`` when there is none."""
        target = Path(path)
        try:
            text = target.read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
            return None
        title = _TITLE.search(text)
        doc = cls.parse(text, step=(title.group("step") or "").strip() if title else "")
        doc.path = target
        head = text.split("## ", 1)[0]
        doc.degraded = any(mark in head for mark in _DEGRADED_MARKS)
        return doc


def degraded(step: str, prompt: str, *, why: str = "") -> Handoff:
    """A handoff assembled without the model, for when the handoff round fails.

    The successor gets the original task (first 1200 characters) as the scene and is
    told to rebuild its picture from the workbench before going on.
    """
    if current() == EN:
        return Handoff(
            doing=(
                f'Carry on with the original task of step "{step}". The last session\'s context'
                " filled up and it could not write a handoff"
                + (f" (why: {why.strip()[:300]})." if why.strip() else ".")
            ),
            next=(
                "First look at the workbench's notes/ and artifacts/ and at what is saved in"
                " the workspace, to see how far the work got; then go on from there. Do not"
                " start over."
            ),
            scene=(prompt or "").strip()[:1200],
            step=step,
            degraded=True,
        )
    reason = f"(原因:{why.strip()[:300]})" if why.strip() else ""
    return Handoff(
        doing=f"接着做步骤「{step}」的原任务。上一代会话的上下文满了,没能写出交接{reason}。",
        next=(
            "先看工作台 notes/、artifacts/ 和工作区里已经落盘的东西,弄清做到了哪一步,"
            "再从断点接着做;不要从头开始。"
        ),
        scene=(prompt or "").strip()[:1200],
        step=step,
        degraded=True,
    )


def handoff_prompt(lang: str | None = None) -> str:
    """The handoff round's prompt in ``lang`` (default: the language in effect); it has the
    placeholders ``{used}`` and ``{window}``."""
    return pick(HANDOFF_PROMPT, HANDOFF_PROMPT_EN, lang)


def handoff_name(step: str) -> str:
    """``交接-<step>.md``, the step name made safe as one file name."""
    return f"交接-{safe_name(step, default='step')}.md"


def save(doc: Handoff, workbench: Workbench, *, now: float | None = None) -> Path:
    """Write ``doc`` to ``<notes>/交接-<step>.md``, archiving the one it replaces.

    The older document moves to ``notes/archive/交接/<name>-<timestamp>.md``: a step
    that hands off several times keeps every generation's handoff, and the current
    one is always at the same path. Paths go through ``Workbench.place``, so no step
    name can take the write outside the workbench.
    """
    current = workbench.place("notes", handoff_name(doc.step))
    if current.is_file():
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        stem, n = f"{current.stem}-{stamp}", 1
        target = workbench.place("notes", ARCHIVE_DIRNAME, "交接", f"{stem}.md")
        while target.exists():
            n += 1
            target = workbench.place("notes", ARCHIVE_DIRNAME, "交接", f"{stem}-{n}.md")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(current, target)
    return doc.write(current)


__all__ = [
    "ALIASES",
    "AUDIT_HEADING",
    "AUDIT_HEADING_EN",
    "HANDOFF_PROMPT",
    "HANDOFF_PROMPT_EN",
    "PLACEHOLDER",
    "REQUIRED",
    "SECTIONS",
    "SECTIONS_EN",
    "Handoff",
    "degraded",
    "handoff_name",
    "handoff_prompt",
    "is_overflow",
    "parse_sections",
    "save",
]
