"""The handoff audit: what a retiring session's handoff left out, put back mechanically.

A handoff is written by the session whose context is full, from memory, at the worst
moment; it can drop a check the judge failed, a remark the human queued, a question that
is still waiting, a file it changed, an unknown the brief left open. Nobody notices until
the successor redoes or contradicts something. So before a full session is retired,
flower lists what it knows is still open (the ``flower_open_items`` hook; the defaults
are the builders below), looks for each item in the document, and appends the missing
ones to a marked section (``## 核对补充``) the successor reads in its first prompt. A
degraded (mechanical) handoff gets the same audit.

"Mentioned" is deliberately mechanical: an item counts as mentioned when one of its
needles appears in the document, compared case-folded with whitespace collapsed and
Markdown emphasis and code ticks ignored. A paraphrase therefore reads as missing, and
the item is carried twice: a repeated line costs the successor a few tokens, a dropped
one costs it the work.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.lang import pick
from flower.plugin_types import AuditRequest, OpenItem

if TYPE_CHECKING:
    from flower.records.handoff import Handoff

__all__ = [
    "KIND_TITLES",
    "KIND_TITLES_EN",
    "audit_handoff",
    "changed_files",
    "failed_checks",
    "mentioned",
    "open_unknowns",
    "undelivered",
    "unmentioned",
    "waiting_questions",
]

#: How each kind of item is introduced in the appended section, in this order; a
#: plugin's own kind is introduced by its name.
KIND_TITLES: dict[str, str] = {
    "failed_check": "裁判上一轮判为没通过的检查",
    "mail": "人留下、还没送到的话",
    "question": "还在等人回答的问题",
    "changed_file": "上一步结束以来改过、交接里没提到的文件",
    "unknown": "需求里还悬着的未知",
}
NOTE = "> flower 把这份交接和它知道还没了结的事逐条对过;下面这些交接里没有提到,原样补上。"
#: The same in English (:mod:`flower.kernel.lang`).
KIND_TITLES_EN: dict[str, str] = {
    "failed_check": "Checks the judge failed last round",
    "mail": "What the human said that has not reached the agent yet",
    "question": "Questions still waiting for the human",
    "changed_file": "Files changed since the last step that the handoff does not mention",
    "unknown": "Unknowns still open in the requirements",
}
NOTE_EN = (
    "> flower checked this handoff against everything it knows is still open; what the"
    " handoff does not mention is added below as it is."
)
#: Changed files named one by one; more are counted in one line.
MAX_FILES = 30
#: A line of 未知与假设 that is still open says so.
_OPEN = re.compile(
    r"未知|待定|待确认|未确认|不确定|没确定|尚未|未决|TBD|TODO|unknown|unclear|open question"
    r"|[?？]\s*$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
#: A line that says there is nothing open ("无未知项", "none") is not an open unknown.
_NOTHING = re.compile(r"^(?:无|没有|暂无|不存在|none\b|n/a\b|nothing\b)", re.IGNORECASE)
_NOISE = re.compile(r"[`*]")


def _fold(text: str) -> str:
    return " ".join(_NOISE.sub("", text).casefold().split())


def mentioned(document: str, item: OpenItem) -> bool:
    """Whether ``document`` names ``item`` by one of its needles (or its text)."""
    folded = _fold(document)
    needles = [n for n in (item.needles or (item.text,)) if _fold(n)]
    return any(_fold(needle) in folded for needle in needles)


def unmentioned(doc: Handoff, items: Iterable[OpenItem]) -> list[OpenItem]:
    """The items ``doc`` does not mention, each once, in the order given."""
    text = doc.to_markdown()
    seen: set[tuple[str, str]] = set()
    missing = []
    for item in items:
        key = (item.kind, item.text)
        if key in seen or not item.text.strip():
            continue
        seen.add(key)
        if not mentioned(text, item):
            missing.append(item)
    return missing


def section(missing: list[OpenItem]) -> str:
    """The appended section's text: a note, then the items grouped by kind."""
    titles = pick(KIND_TITLES, KIND_TITLES_EN)
    kinds = [k for k in titles if any(i.kind == k for i in missing)]
    kinds += sorted({i.kind for i in missing} - set(titles))
    parts = [pick(NOTE, NOTE_EN)]
    for kind in kinds:
        lines = [f"- {' '.join(i.text.split())}" for i in missing if i.kind == kind]
        parts.append(f"{titles.get(kind, kind)}:\n" + "\n".join(lines))
    return "\n\n".join(parts)


def audit_handoff(request: AuditRequest) -> list[OpenItem]:
    """Collect the open items, append the ones ``request.doc`` misses; returns those.

    Never raises: a plugin that fails to list its items is reported on stderr and
    skipped, and the handoff goes on with what the others named.
    """
    from flower.plugins import get_plugin_manager

    hook = get_plugin_manager().hook.flower_open_items
    items: list[OpenItem] = []
    for impl in reversed(hook.get_hookimpls()):  # in call order, one at a time: a
        try:  # failing plugin must not take the others' items with it
            got: Any = impl.function(**{arg: request for arg in impl.argnames})
            items.extend(item for item in got or () if isinstance(item, OpenItem))
        except Exception as exc:
            print(
                f"flower: the handoff audit of plugin {impl.plugin_name!r} failed: {exc}",
                file=sys.stderr,
            )
    doc = request.doc
    doc.audit = ""  # an earlier audit's section is not the document's own mention
    missing = unmentioned(doc, items)
    if missing:
        doc.audit = section(missing)
    for item in items:  # mentioned or appended: the successor reads every one of them
        if item.carried is not None:
            try:
                item.carried()
            except Exception as exc:
                print(
                    f"flower: could not settle the open item {item.text!r}: {exc}", file=sys.stderr
                )
    return missing


# --- the default items --------------------------------------------------------------------


def failed_checks(verdict: Any) -> list[OpenItem]:
    """The checks the last verdict failed (nothing after a pass)."""
    if verdict is None or getattr(verdict, "achieved", False):
        return []
    items = []
    for check in getattr(verdict, "failed", None) or []:
        text = str(check).strip()
        ticks = tuple(t for t in re.findall(r"`([^`]{4,})`", text))
        items.append(OpenItem("failed_check", text, needles=(text, *ticks)))
    return items


def undelivered(channel: Any) -> list[OpenItem]:
    """Remarks the human queued that the agent has not fetched from its inbox yet; once
    the handoff carries one, the channel marks it delivered (``HumanChannel.deliver``)."""
    pending = getattr(channel, "pending_mail", None)
    if not callable(pending):
        return []
    deliver = getattr(channel, "deliver", None)

    def settle(mail_id: str) -> Callable[[], object] | None:
        return (lambda: deliver([mail_id])) if callable(deliver) else None

    return [OpenItem("mail", str(m.text), carried=settle(m.id)) for m in pending()]


def waiting_questions(channel: Any) -> list[OpenItem]:
    """Questions asked and not settled: the successor must not ask them again blind."""
    pending = getattr(channel, "pending", None)
    if not callable(pending):
        return []
    return [
        OpenItem("question", f"{a.question} ({a.id})", needles=(str(a.question), str(a.id)))
        for a in pending()
    ]


def changed_files(workspace: Path | None, run_dir: Path | None) -> list[OpenItem]:
    """Files changed since the last step ended (the drift picture), by path."""
    if workspace is None or run_dir is None:
        return []
    from flower.records.drift import since

    drift = since(workspace, run_dir)
    named = [(p, "modified") for p in drift.modified] + [(p, "deleted") for p in drift.deleted]
    named += [(p, "added") for p in drift.added]
    items = [
        OpenItem("changed_file", f"{path} ({how})", needles=(path, Path(path).name))
        for path, how in named[:MAX_FILES]
    ]
    if len(named) > MAX_FILES:
        rest = len(named) - MAX_FILES
        items.append(OpenItem("changed_file", f"and {rest} more (git status shows them)", ("\0",)))
    return items


def open_unknowns(brief: Any) -> list[OpenItem]:
    """The lines of the brief's 未知与假设 that say they are still open."""
    text = str(getattr(brief, "unknowns", "") or "")
    items = []
    for line in text.splitlines():
        if line.lstrip().startswith(("#", ">")):  # amendment headings and quotes
            continue
        clean = _BULLET.sub("", line).strip()
        if clean and _OPEN.search(clean) and not _NOTHING.match(clean):
            items.append(OpenItem("unknown", clean))
    return items
