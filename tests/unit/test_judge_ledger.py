"""The judge ledger's recorder: a row reaches the real store and the notes mirror, a
failing store or notes folder never fails the step, and agreement is counted right."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from flower.kernel.events import Event
from flower.records.ledger import (
    LEDGER_NAME,
    agreement,
    entry,
    override_row,
    record,
    verdict_row,
)
from flower.records.workbench import Workbench
from flower.roles.walls import missing_text
from flower.runtime.refusals import Refusals
from flower.stores.sqlite import SqliteSessionStore
from flower.workflow.verdicts import GOAL_KEY, ROUND_KEY, Verdict

NOT_YET = Verdict.parse("## 结论\n未达成\n## 理由\n测试没跑\n## 未通过\n- `pytest -q` 通过")


@pytest.fixture
def runtime(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = SqliteSessionStore(str(tmp_path / "runs" / "sessions.db"))
    wb = Workbench(ws)
    wb.ensure()
    yield SimpleNamespace(
        store=store, workbench=wb, workspace=ws, run_dir=tmp_path / "runs", run_id="r-1"
    )
    store.close()


def test_a_verdict_and_an_override_reach_the_store_and_the_notes(runtime: Any) -> None:
    record(runtime, verdict_row("干活", 1, NOT_YET, cost_usd=0.125, session_id="s-judge"))
    record(runtime, override_row("干活", 2, "change_goal", "只要 Linux"))
    rows = runtime.store.rulings("r-1")
    assert [(r["kind"], r["state"], r["round"]) for r in rows] == [
        ("verdict", "not_yet", 1),
        ("override", "change_goal", 2),
    ]
    assert rows[0]["failed"] == ["`pytest -q` 通过"] and rows[0]["session_id"] == "s-judge"
    assert rows[0]["workspace"] == str(runtime.workspace) and rows[1]["said"] == "只要 Linux"
    notes = (runtime.workbench.notes / LEDGER_NAME).read_text(encoding="utf-8")
    assert notes.startswith("# 判定记录")
    assert notes.index("第 1 轮 · 未达成") < notes.index("第 2 轮 · 人改了目标")
    assert "$0.1250" in notes and "s-judge" in notes and "人的原话:只要 Linux" in notes


def test_a_store_that_refuses_the_row_still_leaves_the_notes(
    runtime: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime.run_id = ""  # the store refuses a row without a run
    record(runtime, verdict_row("干活", 1, NOT_YET, cost_usd=0, session_id=None))
    assert "could not add the ruling" in capsys.readouterr().err
    assert "未达成" in (runtime.workbench.notes / LEDGER_NAME).read_text(encoding="utf-8")


def test_notes_that_are_not_utf8_are_kept_aside_not_overwritten(runtime: Any) -> None:
    notes = runtime.workbench.notes / LEDGER_NAME
    notes.write_bytes(b"\xff\xfe old")
    record(runtime, override_row("干活", 1, "accept", ""))
    assert "人接受了结果" in notes.read_text(encoding="utf-8")
    (aside,) = [p for p in notes.parent.iterdir() if ".corrupt-" in p.name]
    assert aside.read_bytes() == b"\xff\xfe old"


def test_agreement_counts_only_what_the_human_reviewed() -> None:
    verdicts = [
        {"kind": "verdict", "state": "not_yet", "cost_usd": 0.5},
        {"kind": "verdict", "state": "unreachable", "cost_usd": 0.25},
        {"kind": "verdict", "state": "", "cost_usd": 0.0},
    ]
    assert agreement(verdicts) == {
        "rounds": 3,
        "verdicts": {"not_yet": 1, "unreachable": 1, "vague": 1},
        "overrides": {},
        "reviewed": 0,
        "agreed": 0,
        "rate": None,  # nothing reviewed is no rate, not 100 %
        "cost_usd": 0.75,
        "refused": {},
        "restored": {},
        "checks": {},
        "overruled": 0,
        "rounds_to_achieved": None,
    }
    overrides = [
        {"kind": "override", "state": "change_goal"},
        {"kind": "override", "state": "accept"},
        {"kind": "override", "state": "misjudged"},
    ]
    summary = agreement(verdicts + overrides)
    assert (summary["reviewed"], summary["agreed"], summary["rate"]) == (3, 1, 0.333)
    assert summary["overrides"] == {"change_goal": 1, "accept": 1, "misjudged": 1}


def test_an_entry_is_one_readable_block_whatever_the_reason_holds() -> None:
    row = {**verdict_row("干活", 3, NOT_YET, cost_usd=0, session_id=None), "at": 0.0}
    row["reason"] = "第一行\n\n## 不是标题"
    text = entry(row)
    assert text.startswith("## 干活 · 第 3 轮 · 未达成")
    assert "理由:第一行 ## 不是标题" in text and "裁判会话:(无)" in text


def test_rows_carry_the_lineages_run_id_which_outlives_the_process(runtime: Any) -> None:
    from flower.records.lineage import Lineage

    lineage = Lineage.open(runtime.run_dir, runtime.workspace)
    lineage.remember("干活", "s-1")
    stamped = record(runtime, override_row("干活", 1, "accept", ""))
    assert stamped["run_id"] == lineage.run != runtime.run_id
    assert stamped["cost_usd"] == 0.0 and stamped["failed"] == []
    assert [r["state"] for r in runtime.store.rulings(lineage.run)] == ["accept"]


def test_a_notes_folder_that_cannot_be_written_costs_only_the_mirror(
    runtime: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    shutil.rmtree(runtime.workbench.notes)
    runtime.workbench.notes.write_text("a file where the folder was")
    record(runtime, override_row("干活", 1, "misjudged", "能测"))
    assert f"could not write {LEDGER_NAME}" in capsys.readouterr().err
    assert [r["said"] for r in runtime.store.rulings("r-1")] == ["能测"]  # the store has it


def test_a_ruling_the_notes_missed_comes_back_with_the_next_one(
    runtime: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ruling recorded while the notes could not be written (a full disk: found by the
    chaos harness, benchmarks/chaos) is in the store; the next ruling brings it back."""
    import shutil

    shutil.rmtree(runtime.workbench.notes)
    runtime.workbench.notes.write_text("a file where the folder was")
    record(runtime, verdict_row("干活", 1, NOT_YET, cost_usd=0.5, session_id="s-1"))
    assert f"could not write {LEDGER_NAME}" in capsys.readouterr().err
    runtime.workbench.notes.unlink()
    runtime.workbench.ensure()  # the disk has room again
    record(runtime, override_row("干活", 2, "accept", "好"))
    record(runtime, override_row("干活", 3, "accept", "也好"))
    notes = (runtime.workbench.notes / LEDGER_NAME).read_text(encoding="utf-8")
    assert notes.count("第 1 轮 · 未达成") == 1 and notes.count("s-1") == 1
    assert notes.index("第 1 轮") < notes.index("第 2 轮") < notes.index("第 3 轮")
    assert notes.count("人的原话:好") == 1 and notes.count("人的原话:也好") == 1


def _stream(refusals: Refusals, *events: Event) -> list[Event]:
    out = [refusals.see(e, "sess-1") for e in events]
    return [e for e in out if e is not None]


def test_a_refused_call_becomes_an_event_and_a_ledger_row(runtime: Any) -> None:
    runtime.ctx = {GOAL_KEY: "goal", ROUND_KEY: 1}  # one round ruled: round 2 in progress
    refusals = Refusals(runtime, "干活")
    no_such = "<tool_use_error>Error: No such tool available: CronCreate.</tool_use_error>"
    found = _stream(
        refusals,
        Event("tool", {"id": "t1", "name": "CronCreate", "subagent": False}),
        Event("tool", {"id": "t2", "name": "Bash", "subagent": True}),
        Event("tool", {"id": "t3", "name": "Read", "subagent": False}),
        Event("tool_result", {"id": "t1", "text": no_such, "error": True}),
        Event("tool_result", {"id": "t2", "text": missing_text("coder", "Bash"), "error": True}),
        Event("tool_result", {"id": "t3", "text": "File does not exist.", "error": True}),
        # a file that quotes a refusal is read fine: not a refusal
        Event("tool", {"id": "t4", "name": "Read", "subagent": True}),
        Event("tool_result", {"id": "t4", "text": no_such, "error": False}),
        Event("text", {"text": no_such, "error": True}),
        # a result whose call was never seen (a resumed turn) is still kept
        Event("tool_result", {"id": "t9", "text": no_such, "error": True}),
    )
    assert [(e.kind, e.payload["tool"], e.payload["thread"]) for e in found] == [
        ("refused", "CronCreate", "main"),
        ("refused", "Bash", "subagent"),
        ("refused", "?", "main"),
    ]
    assert found[0].payload["reason"] == "No such tool available: CronCreate."
    rows = runtime.store.rulings("r-1")
    assert [(r["kind"], r["state"], r["round"], r["said"]) for r in rows] == [
        ("refusal", "CronCreate", 2, "main"),
        ("refusal", "Bash", 2, "subagent"),
        ("refusal", "?", 2, "main"),
    ]
    notes = (runtime.workbench.notes / LEDGER_NAME).read_text(encoding="utf-8")
    assert "## 干活 · 第 2 轮 · 拦下 CronCreate" in notes and "- 谁:subagent" in notes
    assert agreement(rows)["refused"] == {"?": 1, "Bash": 1, "CronCreate": 1}
    assert agreement(rows)["rounds"] == 0  # refusals are not rulings


@pytest.mark.parametrize(("step", "ctx", "expected"), [
    ("干活·判定#3", {GOAL_KEY: "g", ROUND_KEY: 3}, 3),  # the judge's step names its round
    ("干活", {GOAL_KEY: "g"}, 1),  # the first round, before any ruling
    ("干活", {GOAL_KEY: "g", ROUND_KEY: 2}, 3),
    ("once", None, 0),  # no goal guard: no round
    ("确认需求", {ROUND_KEY: 0}, 0),  # no goal yet
])  # fmt: skip
def test_a_refusal_belongs_to_the_round_in_progress(
    runtime: Any, step: str, ctx: dict[str, Any] | None, expected: int
) -> None:
    runtime.ctx = ctx
    _stream(
        Refusals(runtime, step),
        Event("tool", {"id": "t1", "name": "Write", "subagent": False}),
        Event(
            "tool_result",
            {"id": "t1", "error": True, "text": "PreToolUse:Write hook error: 主线程不亲自动手(…)"},
        ),
    )
    rows = runtime.store.rulings("r-1")
    assert [(r["round"], r["reason"]) for r in rows] == [(expected, "主线程不亲自动手(…)")]
