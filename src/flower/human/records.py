"""What the human channel records: questions, remarks, and the two files it appends to.

Kept apart from :mod:`flower.human.channel` (which re-exports every name) so the file
formats, which people and the brief parser read, sit in one small place. Each is
written in the language in effect (:mod:`flower.kernel.lang`); the brief parser reads an
amendment block of either language (``### 补充 · …`` or ``### Amendment · …``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from flower.kernel.lang import EN, current, localized, pick

LOG_HEADER = "# 问答记录\n\n> flower 自动追加的留档,只给人看,不会再发给模型。\n"
LOG_HEADER_EN = (
    "# Questions and answers\n\n> Appended by flower, for people only: nothing here is fed"
    " back to a model.\n"
)
AMEND_NOTE = "(与上文冲突时以此为准)"
AMEND_NOTE_EN = " (wins where it contradicts the text above)"
#: The label of a remark sent during the run, and of an unlabelled one.
AMEND_LABEL = "运行中补充"
AMEND_LABEL_EN = "added during the run"
_UNLABELLED = ("补充", "addition")


def log_header(lang: str | None = None) -> str:
    """The Q&A log's first lines, written when the file is created."""
    return pick(LOG_HEADER, LOG_HEADER_EN, lang)


def amendment_block(text: str, *, label: str = AMEND_LABEL, at: float | None = None) -> str:
    """The block :meth:`HumanChannel.amend` appends to a brief.

    The header line is not a section heading, so the block lands in the body of the
    brief's last section and survives a parse/write round trip. Every line of the text
    is quoted with ``> `` so that a remark such as ``目标:改成网页版`` or a stray code
    fence cannot be read as document structure and swallow the sections around it.
    """
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
    label = " ".join(localized(str(label), AMEND_LABEL, AMEND_LABEL_EN).split()) or pick(
        *_UNLABELLED
    )
    quoted = "\n".join(f"> {line}".rstrip() for line in text.strip().splitlines())
    mark, note = pick(("补充", AMEND_NOTE), ("Amendment", AMEND_NOTE_EN))
    return f"\n### {mark} · {label} · {stamp}{note}\n{quoted}\n"


@dataclass
class Ask:
    """One question to the human and what became of it.

    Attributes:
        id: ``q1``, ``q2``... (one counter shared with :class:`Mail`).
        state: ``asked``, then one of ``answered`` / ``timeout`` / ``declined`` /
            ``over_budget`` / ``invalid`` / ``cancelled``.
        answer: What the model receives: the human's words or the canned text.
        remaining: Questions still allowed after this one (``-1``: unlimited).
        settled_at: ``time.time()`` when the state left ``asked``.
    """

    id: str
    question: str
    options: list[str] = field(default_factory=list)
    state: str = "asked"
    answer: str = ""
    remaining: int = -1
    asked_at: float = field(default_factory=time.time)
    settled_at: float | None = None

    @property
    def settled(self) -> bool:
        return self.state != "asked"

    def payload(self) -> dict[str, Any]:
        """The ``Event("ask")`` payload."""
        return {
            "id": self.id,
            "question": self.question,
            "options": list(self.options),
            "state": self.state,
            "answer": self.answer,
            "remaining": self.remaining,
            "asked_at": self.asked_at,
        }


@dataclass
class Mail:
    """Something the human said unasked, waiting for the agent's next inbox check.

    Attributes:
        id: ``m3``... (one counter shared with :class:`Ask`).
        state: ``queued``, then ``delivered``.
        amended: The file the text was appended to, ``""`` when it was not.
        via: Which front end it came from when not the run's own (``"page"``: the web
            page), so the terminal can show a line it did not type; ``""`` otherwise.
    """

    id: str
    text: str
    state: str = "queued"
    sent_at: float = field(default_factory=time.time)
    delivered_at: float | None = None
    amended: str = ""
    via: str = ""

    def payload(self) -> dict[str, Any]:
        """The ``Event("mail")`` payload."""
        return {"id": self.id, "text": self.text, "state": self.state, "amended": self.amended,
                "via": self.via}  # fmt: skip


def _stamp(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def ask_entry(ask: Ask) -> str:
    """A settled question as a Q&A log entry (a ``##`` line, then 问/选项/答)."""
    asked, options, said = pick(("问:", "选项:", "答:"), ("Q: ", "Options: ", "A: "))
    lines = ["", f"## {ask.id} · {_stamp(ask.settled_at)} · {ask.state}", f"{asked}{ask.question}"]
    if ask.options:
        lines.append(f"{options}{' / '.join(ask.options)}")
    lines.append(f"{said}{ask.answer}")
    return "\n".join(lines) + "\n"


def mail_entry(mail: Mail) -> str:
    """A delivered remark as a Q&A log entry."""
    if current() == EN:
        where = f" (appended to {mail.amended})" if mail.amended else ""
        return (
            f"\n## {mail.id} · {_stamp(mail.delivered_at)} · the human added{where}\n{mail.text}\n"
        )
    where = f"(已追加到 {mail.amended})" if mail.amended else ""
    return f"\n## {mail.id} · {_stamp(mail.delivered_at)} · 人主动补充{where}\n{mail.text}\n"


def transcript_of(items: list[Ask | Mail]) -> str:
    """Questions and remarks as Markdown, one bullet each, in the order given."""
    from flower.kernel.lang import pick

    asked, options, said, added = pick(
        (" 问:", "选项:", "答", " 人主动补充"), (" asked: ", "options: ", "answer", " added")
    )
    colon = pick(":", ": ")
    lines: list[str] = []
    for item in items:
        if isinstance(item, Ask):
            lines.append(f"- {item.id}{asked}{item.question}")
            if item.options:
                lines.append(f"  {options}{' / '.join(item.options)}")
            lines.append(f"  {said}[{item.state}]{colon}{item.answer}")
        else:
            lines.append(f"- {item.id}{added}[{item.state}]{colon}{item.text}")
    return "\n".join(lines)
