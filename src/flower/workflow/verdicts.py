"""The goal and the verdict: "is this round done?", decided by someone who did not do it.

The brief stops "building the wrong thing"; this layer stops "calling it done too early".
A worker judging its own work is systematically optimistic (half the tests run, one of
three call sites fixed, "should be fine"), so an independent judge in its own session,
with no write tools, first turns the brief into a :class:`Goal` (a statement and a list of
checks that can each be run or observed here), then after each round answers with a
:class:`Verdict`.

Three outcomes, not two: ``achieved`` moves on; ``not_yet`` sends the worker back with what
is missing (to carry on, not to restart); ``unreachable`` stops and asks the human, since
another round cannot help. Without the third, a goal that cannot be met, or cannot be
verified in this environment, burns round after round until the budget is gone.

Both documents read both languages' headings and state words whatever the language in
effect; they are written in the language in effect (:mod:`flower.kernel.lang`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from flower.kernel.lang import EN, current, localized, pick
from flower.kernel.ruling_words import OPENINGS, OPENINGS_EN
from flower.records.ledger import GOAL_KEY, ROUND_KEY, VERDICT_KEY
from flower.records.sections import PLACEHOLDERS, Frozen, bullets, inert, placeholder, scan

# ``ctx[GOAL_KEY]`` (the frozen :class:`Goal`), ``ctx[VERDICT_KEY]`` (the latest
# :class:`Verdict`) and ``ctx[ROUND_KEY]`` (rounds ruled in this process) are defined in
# :mod:`flower.records.ledger`, below the Runtime that reads them too; importable from here.

# --- the goal ------------------------------------------------------------------------------

#: Field -> heading, in document order.
SECTIONS: dict[str, str] = {"statement": "目标", "checks": "判定清单"}
SECTIONS_EN: dict[str, str] = {"statement": "Goal", "checks": "Checks"}

ALIASES: dict[str, tuple[str, ...]] = {
    "statement": ("目标", "goal"),
    "checks": (
        "判定清单",
        "判定条件",
        "验收清单",
        "检查项",
        "判定",
        "checks",
        "checklist",
        "acceptance checks",
    ),
}
_GOAL_FIELDS = {alias.lower(): name for name, aliases in ALIASES.items() for alias in aliases}

#: The mark of a check this environment cannot verify: ``[此环境无法验证:<why>]``, in
#: English ``[cannot verify here: <why>]``; either is read in any language.
UNVERIFIABLE = "此环境无法验证"
UNVERIFIABLE_EN = "cannot verify here"
_UNVERIFIABLE = re.compile(
    r"[\[【]\s*(?:(?:此环境)?无法验证"
    r"|(?:cannot|can't|can not)\s+(?:be\s+)?verif(?:y|ied)(?:\s+here)?"
    r"|unverifiable(?:\s+here)?)\s*[::\]】]",
    re.IGNORECASE,
)

GOAL_TITLE = "# 完成判定"
GOAL_TITLE_EN = "# Definition of done"
#: The label of a human's change to the goal (:meth:`Goal.amend`).
AMEND_LABEL = "人修改"
AMEND_LABEL_EN = "changed by the human"


@dataclass
class Goal(Frozen):
    """A frozen goal: one statement and checks that can each be decided on the spot.

    "Make it good" cannot be judged; "``python conv.py a.md`` writes ``a.html`` containing
    ``<h1>``" can. Complete when there is a statement and at least one check.
    """

    statement: str = ""
    checks: list[str] = field(default_factory=list)
    path: Path | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str) -> Goal:
        """Read a judge's answer (or a goal file). Never raises."""
        found = scan(text, _GOAL_FIELDS).found
        checks = [c for c in bullets(found.get("checks", "")) if c not in PLACEHOLDERS]
        return cls(statement=found.get("statement", ""), checks=checks)

    @property
    def unverifiable(self) -> list[str]:
        """Checks marked as impossible to verify here.

        Their fate is sealed when the goal is set: no round can pass them. Seeing them
        now, before any work, costs nothing; seeing them at the verdict costs every round.
        """
        return [check for check in self.checks if _UNVERIFIABLE.search(check)]

    def missing(self) -> list[str]:
        """Headings of what is missing, in document order."""
        return [
            heading
            for name, heading in pick(SECTIONS, SECTIONS_EN).items()
            if not (self.checks if name == "checks" else self.statement.strip())
        ]

    def complete(self) -> bool:
        return not self.missing()

    def to_markdown(self) -> str:
        checks = "\n".join(f"- {check.strip()}" for check in self.checks if check.strip())
        heading = pick(SECTIONS, SECTIONS_EN)
        return "\n".join(
            [
                pick(GOAL_TITLE, GOAL_TITLE_EN),
                "",
                f"## {heading['statement']}",
                "",
                self.statement.strip() or placeholder(),
                "",
                f"## {heading['checks']}",
                "",
                checks or placeholder(),
                "",
            ]
        )

    def prompt_block(self) -> str:
        """The non-empty parts, for the judge and the worker."""
        parts = []
        heading = pick(SECTIONS, SECTIONS_EN)
        if self.statement.strip():
            parts.append(f"## {heading['statement']}\n{self.statement.strip()}")
        if self.checks:
            items = "\n".join(f"- {check}" for check in self.checks)
            parts.append(f"## {heading['checks']}\n{items}")
        return "\n\n".join(parts)

    def amend(self, text: str, *, label: str = AMEND_LABEL, at: float | None = None) -> Goal:
        """Append a human's change to the statement; returns ``self`` (chain ``.write``).

        Appended, never overwritten: the old goal is history, and seeing what changed beats
        not seeing it. A line of ``text`` that would read as a heading or a fence is quoted,
        so the change stays inside the statement when the file is read back.
        """
        lines = (text or "").strip().splitlines()
        if not lines:
            return self
        label = " ".join(localized(str(label), AMEND_LABEL, AMEND_LABEL_EN).split())
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(at))
        rest = inert("\n".join(lines[1:]), _GOAL_FIELDS)
        block = f"({label} {stamp}) {lines[0].strip()}" + (f"\n{rest}" if rest else "")
        old = self.statement.strip()
        self.statement = f"{old}\n\n{block}" if old else block
        return self


# --- the verdict ---------------------------------------------------------------------------

ACHIEVED, NOT_YET, UNREACHABLE = "achieved", "not_yet", "unreachable"

VERDICT_SECTIONS: dict[str, str] = {"state": "结论", "reason": "理由", "failed": "未通过"}
VERDICT_SECTIONS_EN: dict[str, str] = {
    "state": "Verdict",
    "reason": "Reason",
    "failed": "Failed checks",
}

VERDICT_ALIASES: dict[str, tuple[str, ...]] = {
    "state": ("结论", "判定", "判定结果", "verdict", "conclusion", "ruling"),
    "reason": ("理由", "原因", "reason", "reasons", "reasoning"),
    "failed": ("未通过", "未通过项", "没通过", "failed", "failed checks", "not passed"),
}
_VERDICT_FIELDS = {
    alias.lower(): name for name, aliases in VERDICT_ALIASES.items() for alias in aliases
}

#: State words, any position, case-insensitive. The regex tries them longest first and
#: takes the leftmost match, so 未达成 is never read as 达成 and 无法达成 never as 达成.
#: "Cannot verify here" is unreachable: another round cannot verify it either, and it must
#: never pass as achieved.
STATE_WORDS: dict[str, tuple[str, ...]] = {
    UNREACHABLE: (
        "无法达成",
        "不可达成",
        "做不到",
        "无法验证",
        "没法验证",
        "验证不了",
        "无法判定",
        "unreachable",
        "impossible",
        "unverifiable",
        "cannot be verified",
        "cannot verify",
        "can't verify",
        "not verifiable",
        "cannot be achieved",
        "can't be achieved",
    ),
    NOT_YET: (
        "尚未达成",
        "没有达成",
        "未达成",
        "没达成",
        "not yet",
        "not achieved",
        "not met",
        "not_yet",
        "no",
    ),
    ACHIEVED: ("已达成", "达成", "achieved", "yes"),
}


def _word(word: str) -> str:
    if word.isascii():  # English words only on word boundaries (not "no" in "note")
        body = r"\s+".join(re.escape(part) for part in word.split())
        return rf"(?<![A-Za-z0-9_]){body}(?![A-Za-z0-9_])"
    return re.escape(word)


_ORDERED = sorted(
    ((word, state) for state, words in STATE_WORDS.items() for word in words),
    key=lambda pair: len(pair[0]),
    reverse=True,
)
_STATE_RE = re.compile("|".join(f"({_word(word)})" for word, _ in _ORDERED), re.IGNORECASE)
_STATE_OF = tuple(state for _, state in _ORDERED)
#: Before an achieved word in the same clause, these say "not" or "partly" (未能达成,
#: 没有完全达成, 基本达成, not fully achieved): no table of whole words can list every
#: such phrase, and reading one as achieved closes the work the judge did not pass.
_QUALIFIED = re.compile(
    r"[未没不无]|非(?!常)|部分|基本|大体|大致|几乎|接近|差不多"
    r"|(?<![A-Za-z])(?:not|never|partially|partly|mostly|almost|nearly|largely)(?![A-Za-z])"
    r"|n't",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[,,。;;::!!??、\n]")
_BARE_YES = re.compile(r"1|true", re.IGNORECASE)
_BARE_NO = re.compile(r"0|false", re.IGNORECASE)
_END_MARK = re.compile(r"[\s。.!!]+$")
_NOTHING_FAILED = frozenset({"无", "没有", "none", "n/a", "全部通过", "all passed"})

#: What :meth:`Verdict.to_markdown` writes under 结论, read back as the same state.
_SAY = {ACHIEVED: "已达成", NOT_YET: "未达成", UNREACHABLE: "无法达成"}
_SAY_EN = {ACHIEVED: "achieved", NOT_YET: "not yet", UNREACHABLE: "unreachable"}
#: Written for a verdict with no clear state: no state word, no digit, not the placeholder
#: (an empty 结论 would send the reader searching the whole document).
_VAGUE = "(判读不出)"
_VAGUE_EN = "(unclear)"
#: Written under 未通过 when nothing failed.
_NONE = "无"
_NONE_EN = "none"

VERDICT_TITLE = "# 裁判结论"
VERDICT_TITLE_EN = "# The judge's verdict"


def _state(text: str) -> str:
    word = _STATE_RE.search(text)
    if word is not None:
        start = text.rfind("\n", 0, word.start()) + 1
        end = text.find("\n", word.end())
        line = text[start : end if end >= 0 else len(text)]
        named = {_STATE_OF[(m.lastindex or 1) - 1] for m in _STATE_RE.finditer(line)}
        if len(named) == len(STATE_WORDS):
            # Every state on one line is the rules' menu ("已达成 / 未达成 / 无法验证,
            # 三选一") copied back, not a choice; reading its first word would pass the work.
            return ""
        state = _STATE_OF[(word.lastindex or 1) - 1]
        if state == ACHIEVED and _qualified(text, word.start(), word.group()):
            return NOT_YET
        return state
    if re.search(r"\b1\b", text):
        return ACHIEVED
    if re.search(r"\b0\b", text):
        return NOT_YET
    return ""


def _qualified(text: str, start: int, word: str) -> bool:
    """Whether the achieved word at ``start`` is negated or hedged in its own clause.

    ``已达成`` carries its own "already" and is taken as said.
    """
    if word == _SAY[ACHIEVED]:  # the English "achieved" has no "already": its clause decides
        return False
    before = text[max(0, start - 24) : start]
    clause = _CLAUSE_END.split(before)[-1]
    return _QUALIFIED.search(clause) is not None


def _failed(text: str) -> list[str]:
    items = [item for item in bullets(text) if item not in PLACEHOLDERS]
    if len(items) == 1 and _END_MARK.sub("", items[0]).lower() in _NOTHING_FAILED:
        return []
    return items


@dataclass
class Verdict(Frozen):
    """One judgement. ``state`` is ``achieved``, ``not_yet``, ``unreachable`` or ``""``.

    An empty state means the answer could not be read: callers must treat it as not
    achieved. "Could not tell" and "done" are different things, and confusing them lets a
    vague sentence close the work.

    The same shape as the other documents (``parse``, ``missing``/``complete``,
    ``to_markdown``, ``prompt_block``, ``write``/``load``), so a verdict can be kept on disk,
    read back, checked and quoted into another session's prompt like a brief or a goal.
    """

    state: str = ""
    reason: str = ""
    failed: list[str] = field(default_factory=list)
    path: Path | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str) -> Verdict:
        """Read a judge's answer. Never raises.

        1. The 结论 section (or 判定 …) is the conclusion. 2. With no heading at all, a bare
        ``1``/``true`` or ``0``/``false`` answer is read as such. 3. Otherwise the leftmost
        state word in the conclusion (the whole text when there is no 结论 section); an
        achieved word negated or hedged in its clause (未能达成, 基本达成) is not yet.
        4. Failing that a standalone ``1`` / ``0``. 5. Else no state.
        Without any heading, the whole answer is the reason.
        """
        read = scan(text, _VERDICT_FIELDS)
        if not read.headed:
            if _BARE_YES.fullmatch(read.plain):
                return cls(state=ACHIEVED)
            if _BARE_NO.fullmatch(read.plain):
                return cls(state=NOT_YET)
        reason = read.found.get("reason", "")
        if not read.headed and read.plain not in PLACEHOLDERS:
            reason = read.plain
        return cls(
            state=_state(read.found.get("state") or read.plain),
            reason=reason,
            failed=_failed(read.found.get("failed", "")),
        )

    @property
    def achieved(self) -> bool:
        return self.state == ACHIEVED

    @property
    def unreachable(self) -> bool:
        return self.state == UNREACHABLE

    @property
    def ok(self) -> bool:
        """Whether a clear state was read; a verdict that is not ``ok`` is not a pass."""
        return self.state in _SAY

    def missing(self) -> list[str]:
        """Headings of what is missing, in document order (in the language in effect).

        The conclusion must be a clear state; a ``not_yet`` or ``unreachable`` must also say
        why (a reason or the failed checks), because the worker, or the human, is sent back
        with exactly that. A bare achieved (the seed's ``1``/``true``) needs nothing more.
        """
        heading = pick(VERDICT_SECTIONS, VERDICT_SECTIONS_EN)
        gaps = [] if self.ok else [heading["state"]]
        if self.state in (NOT_YET, UNREACHABLE) and not (self.reason.strip() or self.failed):
            gaps.append(heading["reason"])
        return gaps

    def complete(self) -> bool:
        return not self.missing()

    def prompt_block(self) -> str:
        """The non-empty parts under their headings, to quote the ruling to another session
        (a vague conclusion is left out rather than quoted as a state)."""
        heading = pick(VERDICT_SECTIONS, VERDICT_SECTIONS_EN)
        parts = []
        if self.ok:
            parts.append(f"## {heading['state']}\n{pick(_SAY, _SAY_EN)[self.state]}")
        if self.reason.strip():
            parts.append(f"## {heading['reason']}\n{self.reason.strip()}")
        failed = [item.strip() for item in self.failed if item.strip()]
        if failed:
            parts.append(f"## {heading['failed']}\n" + "\n".join(f"- {item}" for item in failed))
        return "\n\n".join(parts)

    def feedback(self) -> str:
        """What the worker is told at the start of its next round: where it falls short,
        not how to fix it (that is its job), and to continue rather than start over."""
        if current() == EN:
            return self._feedback_en()
        opening = OPENINGS.get(self.state, OPENINGS[""])
        parts = [opening, "", "裁判的理由:", self.reason.strip() or "(裁判没有写理由)"]
        if self.failed:
            parts += ["", "没通过的检查:", *(f"- {item}" for item in self.failed)]
        parts += [
            "",
            "在现在的基础上接着做,不要推倒重来:只补上面这些差距,已经做好的部分别动,"
            "也不要扩大范围。",
        ]
        return "\n".join(parts)

    def _feedback_en(self) -> str:
        opening = OPENINGS_EN.get(self.state, OPENINGS_EN[""])
        parts = [opening, "", "The judge's reason:", self.reason.strip() or "(no reason given)"]
        if self.failed:
            parts += ["", "Checks that failed:", *(f"- {item}" for item in self.failed)]
        parts += [
            "",
            "Carry on from where you are; do not start over. Close only the gaps above, leave"
            " what already works alone, and do not widen the scope.",
        ]
        return "\n".join(parts)

    def to_markdown(self) -> str:
        failed = "\n".join(f"- {item.strip()}" for item in self.failed if item.strip())
        heading = pick(VERDICT_SECTIONS, VERDICT_SECTIONS_EN)
        return "\n".join(
            [
                pick(VERDICT_TITLE, VERDICT_TITLE_EN),
                "",
                f"## {heading['state']}",
                "",
                pick(_SAY, _SAY_EN).get(self.state, pick(_VAGUE, _VAGUE_EN)),
                "",
                f"## {heading['reason']}",
                "",
                self.reason.strip() or placeholder(),
                "",
                f"## {heading['failed']}",
                "",
                failed or pick(_NONE, _NONE_EN),
                "",
            ]
        )


__all__ = [
    "ACHIEVED",
    "ALIASES",
    "GOAL_KEY",
    "NOT_YET",
    "ROUND_KEY",
    "SECTIONS",
    "SECTIONS_EN",
    "STATE_WORDS",
    "UNREACHABLE",
    "UNVERIFIABLE",
    "UNVERIFIABLE_EN",
    "VERDICT_ALIASES",
    "VERDICT_KEY",
    "VERDICT_SECTIONS",
    "VERDICT_SECTIONS_EN",
    "Goal",
    "Verdict",
]
