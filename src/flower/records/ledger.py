"""The judge ledger: every verdict, and every time a human overrode one.

A judge that is wrong fails quietly: it sends good work back round after round, or calls
a goal unreachable that a human then reaches by changing one word. Nobody notices unless
the rulings are kept side by side with what the human decided. So every verdict (step,
round, state, failed checks, reason, cost, the judge's session) and every override of
one is a row in the session store (``ledger`` table, so ``flower status`` on any machine
sees it) and an entry in ``<notes>/判定记录.md``, the readable local mirror.

The walls' refusals are kept beside them (``kind="refusal"``): a judge that tried to
edit what it judges, or a coordinator that tried to delete a file with a "glance", is a
fact about the run that a verdict alone would hide (:mod:`flower.runtime.refusals`).

Agreement: the human only weighs in on the rulings flower puts to them (an unreachable
goal). Changing the goal agrees with the judge (the goal as written could not be met);
accepting the result anyway, or saying the judge was wrong, disagrees. The rate is
agreed / reviewed; with nothing reviewed there is no rate, not 100 %.

Recording never fails a step: a store or a notes folder that refuses the row is reported
on stderr and the run goes on.

The notes file is written in the language in effect (:mod:`flower.kernel.lang`), entry by
entry: a run that switched language mid-way has entries of both in one file. Its name
stays ``判定记录.md`` (a key: the page and the bequest point at it).
"""

from __future__ import annotations

import socket
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flower.kernel.files import atomic_write
from flower.kernel.lang import EN, current, pick
from flower.kernel.text import one_line
from flower.records.filelock import locked, move_aside

__all__ = [
    "AGREES",
    "GOAL_KEY",
    "LEDGER_NAME",
    "OVERRIDES",
    "ROUND_KEY",
    "VERDICT_KEY",
    "agreement",
    "entry",
    "goal_met",
    "override_row",
    "record",
    "refusal_row",
    "restored_row",
    "rounds_ruled",
    "run_id_of",
    "verdict_row",
]

# The keys of a goal-guarded workflow's ``ctx`` that say which round a ruling (or a
# refusal) belongs to. The goal guard (``workflow/verdicts.py``, ``workflow/goal.py``) sets
# them; they live here, beside the rows they number, so the Runtime's refusals
# (``runtime/refusals.py``) can read them without importing the workflow above it.
#: ``ctx[GOAL_KEY]`` is the frozen :class:`~flower.workflow.verdicts.Goal` (``ctx[<goal
#: step>]`` its prompt block).
GOAL_KEY = "_goal"
#: ``ctx[VERDICT_KEY]`` is the latest :class:`~flower.workflow.verdicts.Verdict`.
VERDICT_KEY = "_verdict"
#: ``ctx[ROUND_KEY]``: how many rounds the judge has ruled on in this process.
ROUND_KEY = "_goal_rounds"

LEDGER_NAME = "判定记录.md"
TITLE = "# 判定记录\n\n> 每一次裁判的判定,和人对判定的每一次推翻,按时间追加。flower 写,别手改。\n"

#: Override kinds, as the ledger and the ``override`` event name them, and how each
#: reads in the notes.
OVERRIDES: dict[str, str] = {
    "accept": "人接受了结果(判定作废)",
    "change_goal": "人改了目标",
    "misjudged": "人认为裁判判错了,接着做",
}
OVERRIDES_EN: dict[str, str] = {
    "accept": "the human accepted the result (the ruling set aside)",
    "change_goal": "the human changed the goal",
    "misjudged": "the human said the judge was wrong: keep working",
}
#: Overrides that agree with the judge's ruling.
AGREES = frozenset({"change_goal"})
STATE_WORDS = {"achieved": "已达成", "not_yet": "未达成", "unreachable": "无法达成", "": "不明确"}
STATE_WORDS_EN = {
    "achieved": "achieved",
    "not_yet": "not yet",
    "unreachable": "unreachable",
    "": "unclear",
}
TITLE_EN = (
    "# Verdict record\n\n> Every ruling of the judge, and every time a human overrode one,"
    " appended as they happen. Written by flower: do not edit.\n"
)


def verdict_row(
    step: str, round_: int, verdict: Any, *, cost_usd: float, session_id: str | None
) -> dict[str, Any]:
    """A ledger row for one ruling of the judge."""
    return {
        "step": step,
        "round": round_,
        "kind": "verdict",
        "state": verdict.state,
        "reason": verdict.reason,
        "failed": list(verdict.failed),
        "cost_usd": float(cost_usd or 0.0),
        "session_id": session_id,
        "said": "",
    }


def override_row(step: str, round_: int, choice: str, said: str) -> dict[str, Any]:
    """A ledger row for a human overriding the ruling of round ``round_``."""
    return {
        "step": step,
        "round": round_,
        "kind": "override",
        "state": choice,
        "reason": pick(OVERRIDES, OVERRIDES_EN).get(choice, choice),
        "failed": [],
        "cost_usd": 0.0,
        "session_id": None,
        "said": said,
    }


def restored_row(step: str, name: str, reason: str) -> dict[str, Any]:
    """A ledger row for a frozen document flower put back (``state``: the file name;
    ``reason``: what had happened to it)."""
    return {
        "step": step,
        "round": 0,
        "kind": "restored",
        "state": name,
        "reason": reason,
        "failed": [],
        "cost_usd": 0.0,
        "session_id": None,
        "said": "",
    }


def refusal_row(
    step: str, round_: int, tool: str, reason: str, *, session_id: str | None, thread: str
) -> dict[str, Any]:
    """A ledger row for a tool call a wall refused: ``state`` is the tool, ``said`` the
    thread that asked (``main`` or the subagent's type), ``reason`` the wall's words."""
    return {
        "step": step,
        "round": round_,
        "kind": "refusal",
        "state": tool,
        "reason": reason,
        "failed": [],
        "cost_usd": 0.0,
        "session_id": session_id,
        "said": thread,
    }


def record(runtime: Any, row: Mapping[str, Any]) -> dict[str, Any]:
    """Stamp ``row`` with the run, workspace, host and time; add it to the store and to
    ``<notes>/判定记录.md``. Never raises; returns the stamped row."""
    stamped = {**row, "run_id": run_id_of(runtime), "at": time.time()}
    stamped["workspace"] = str(getattr(runtime, "workspace", "") or "")
    stamped["host"] = socket.gethostname()
    recorder = getattr(getattr(runtime, "store", None), "record_ruling", None)
    if callable(recorder):
        try:
            recorder(stamped)
        except Exception as exc:  # the notes file still gets it
            print(f"flower: could not add the ruling to the store's ledger: {exc}", file=sys.stderr)
    workbench = getattr(runtime, "workbench", None)
    if workbench is not None:
        path = workbench.notes / LEDGER_NAME
        try:
            _append(path, "\n\n".join([*_missing(runtime, path, stamped), entry(stamped)]))
        except OSError as exc:
            print(f"flower: could not write {LEDGER_NAME}: {exc}", file=sys.stderr)
    from flower.records.state_copy import save_state

    save_state(runtime, stamped["run_id"])  # outside the workspace: a lost store loses none
    return stamped


def _missing(runtime: Any, path: Path, stamped: Mapping[str, Any]) -> list[str]:
    """The entries of the run's earlier rulings the store has and the notes file lacks:
    a ruling recorded while the file could not be written (a full disk) comes back with
    the next one (found by benchmarks/chaos). Never raises."""
    reader = getattr(getattr(runtime, "store", None), "rulings", None)
    if not callable(reader):
        return []
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        rows = [r for r in reader(stamped["run_id"]) if r.get("at") != stamped["at"]]
        return [e for e in (entry(r) for r in rows) if e not in text]
    except Exception:  # the notes are a mirror: never fail a ruling over them
        return []


def rounds_ruled(runtime: Any, step: str) -> int:
    """How many rounds of ``step`` the judge has ruled on in this run, over every process
    and wake (the highest round of its verdicts in the store; 0 when none or no store)."""
    reader = getattr(getattr(runtime, "store", None), "rulings", None)
    if not callable(reader):
        return 0
    try:
        rows = reader(run_id_of(runtime))
    except Exception:  # a store that cannot say: count from this process on
        return 0
    verdicts = [r for r in rows if r.get("kind") == "verdict" and r.get("step") == step]
    return max((int(r.get("round") or 0) for r in verdicts), default=0)


def goal_met(runtime: Any, run_id: str | None = None) -> bool:
    """Whether the judge's latest verdict in the run ``run_id`` (default: the runtime's;
    any process, any machine sharing the store) says the goal was met."""
    reader = getattr(getattr(runtime, "store", None), "rulings", None)
    if not callable(reader):
        return False
    try:
        rows = [r for r in reader(run_id or run_id_of(runtime)) if r.get("kind") == "verdict"]
    except Exception:  # a store that cannot say: not known to be met
        return False
    return bool(rows) and rows[-1].get("state") == "achieved"


#: The notes' words for a row, per language (the Chinese is the seed's, byte for byte).
_ENTRY_WORDS: dict[str, dict[str, str]] = {
    "zh": {
        "round": "第 {n} 轮", "refused": "拦下 {state}", "at": "- 时间:", "thread": "- 谁:",
        "session": "- 会话:", "none": "(无)", "wall": "- 墙的话:", "said": "- 人的原话:",
        "judge": "- 裁判会话:{session} · 花费 ${cost:.4f}", "reason": "- 理由:",
        "failed": "- 未通过:", "restored": "恢复 {state}", "check": "flower 跑检查:{state}",
        "ran": "- 检查:", "rewind": "倒回 {state}",
    },
    "en": {
        "round": "round {n}", "refused": "refused {state}", "at": "- at: ",
        "thread": "- thread: ", "session": "- session: ", "none": "(none)",
        "wall": "- the wall said: ", "said": "- in their words: ",
        "judge": "- judge's session: {session} · cost ${cost:.4f}", "reason": "- reason: ",
        "failed": "- failed: ", "restored": "restored {state}",
        "check": "flower ran a check: {state}", "ran": "- check: ",
        "rewind": "rewound {state}",
    },
}  # fmt: skip


#: A check row's state in the notes: [in Chinese, in English].
CHECK_WORDS = (
    {"passed": "通过", "failed": "没通过", "cannot_run": "这里跑不了"},
    {"passed": "passed", "failed": "failed", "cannot_run": "could not run here"},
)
#: How a verdict row's ``said`` marks a ruling a failed check overruled (goal guard).
OVERRULED_MARK = "overruled by check "


def entry(row: Mapping[str, Any]) -> str:
    """One row as the notes file shows it."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(row.get("at") or 0)))
    english = current() == EN
    w = _ENTRY_WORDS["en" if english else "zh"]
    head = f"## {row['step']} · {w['round'].format(n=row['round'])} · "
    session = row.get("session_id") or w["none"]
    if row["kind"] == "refusal":
        thread = row.get("said") or "main"
        lines = [head + w["refused"].format(state=row["state"]), "", w["at"] + when]
        lines += [w["thread"] + thread, w["session"] + session]
        if row.get("reason"):
            lines.append(w["wall"] + one_line(row["reason"], 300))
        return "\n".join(lines) + "\n"
    if row["kind"] == "check":
        check = (row.get("failed") or [""])[0]
        lines = [
            head + w["check"].format(state=CHECK_WORDS[english].get(row["state"], row["state"])),
            "",
            w["at"] + when,
        ]
        lines.append(w["ran"] + one_line(str(check), 300))
        if row.get("reason"):
            lines.append(w["reason"] + one_line(row["reason"], 300))
        return "\n".join(lines) + "\n"
    if row["kind"] == "restored":
        lines = [head + w["restored"].format(state=row["state"]), "", w["at"] + when]
        if row.get("reason"):
            lines.append(w["reason"] + one_line(row["reason"], 300))
        return "\n".join(lines) + "\n"
    if row["kind"] == "rewind":  # `flower rewind`: where to, and what the human said
        lines = [head + w["rewind"].format(state=row["state"]), "", w["at"] + when]
        if row.get("reason"):
            lines.append(w["reason"] + one_line(row["reason"], 300))
        if row.get("said"):
            lines.append(w["said"] + one_line(row["said"]))
        return "\n".join(lines) + "\n"
    if row["kind"] == "override":
        words = OVERRIDES_EN if english else OVERRIDES
        lines = [head + words.get(row["state"], row["state"]), "", w["at"] + when]
        if row.get("said"):
            lines.append(w["said"] + one_line(row["said"]))
        return "\n".join(lines) + "\n"
    words = STATE_WORDS_EN if english else STATE_WORDS
    lines = [head + words.get(row["state"], row["state"]), "", w["at"] + when]
    lines.append(w["judge"].format(session=session, cost=row["cost_usd"]))
    if row.get("reason"):
        lines.append(w["reason"] + one_line(row["reason"]))
    lines += [w["failed"] + one_line(check) for check in row.get("failed") or []]
    return "\n".join(lines) + "\n"


def agreement(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """What ``flower status`` shows of a ledger: rounds judged, verdicts by state,
    overrides by kind, and how often the human agreed with the judge."""
    rows = list(rows)
    verdicts = [r for r in rows if r.get("kind") == "verdict"]
    overrides = [r for r in rows if r.get("kind") == "override"]
    refusals = [r for r in rows if r.get("kind") == "refusal"]
    restored = [r for r in rows if r.get("kind") == "restored"]
    checks = [r for r in rows if r.get("kind") == "check"]
    overruled = [r for r in verdicts if str(r.get("said") or "").startswith(OVERRULED_MARK)]
    agreed = sum(1 for r in overrides if r.get("state") in AGREES)
    return {
        "rounds": len(verdicts),
        "verdicts": dict(Counter(r.get("state") or "vague" for r in verdicts)),
        "overrides": dict(Counter(r.get("state") for r in overrides)),
        "reviewed": len(overrides),
        "agreed": agreed,
        "rate": round(agreed / len(overrides), 3) if overrides else None,
        "cost_usd": round(sum(float(r.get("cost_usd") or 0.0) for r in verdicts), 6),
        "refused": dict(Counter(str(r.get("state")) for r in refusals)),
        "restored": dict(Counter(str(r.get("state")) for r in restored)),
        "checks": dict(Counter(str(r.get("state")) for r in checks)),
        "overruled": len(overruled),
        "rounds_to_achieved": _rounds_to_achieved(verdicts),
    }


def _rounds_to_achieved(verdicts: list[Mapping[str, Any]]) -> int | None:
    """The round of the first ``achieved`` verdict (``None``: not achieved yet)."""
    for row in verdicts:
        if row.get("state") == "achieved":
            return int(row.get("round") or 0) or None
    return None


def run_id_of(runtime: Any) -> str:
    """The run's lasting id (the lineage's, which survives wakes and moves), else the
    Runtime's process id."""
    from flower.records.lineage import continuing_run

    run_dir, workspace = getattr(runtime, "run_dir", None), getattr(runtime, "workspace", None)
    lasting = continuing_run(run_dir, workspace) if run_dir and workspace else ""
    return lasting or str(getattr(runtime, "run_id", "") or "")


def _append(path: Path, text: str) -> None:
    """Append one entry: the file rewritten atomically (a reader never sees half of it)
    under the run's file lock (two flowers in one folder lose neither's entry). A file
    that is not UTF-8 is moved aside, never overwritten."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        try:
            existing = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            existing = pick(TITLE, TITLE_EN)
        except UnicodeDecodeError:
            move_aside(path, "corrupt")
            existing = pick(TITLE, TITLE_EN)
        atomic_write(path, existing.rstrip("\n") + "\n\n" + text)
