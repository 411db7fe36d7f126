"""The handoff audit's mechanics: what counts as mentioned, which items the defaults
name, how the section reads and parses back, and a broken plugin that loses nothing."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from flower import hookimpl
from flower.human.channel import HumanChannel
from flower.plugin_types import AuditRequest, OpenItem
from flower.plugins import get_plugin_manager
from flower.records.drift import record
from flower.records.handoff import AUDIT_HEADING, Handoff, degraded
from flower.runtime.audit import (
    audit_handoff,
    changed_files,
    failed_checks,
    mentioned,
    open_unknowns,
    undelivered,
    unmentioned,
    waiting_questions,
)
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Verdict


def doc(**sections: str) -> Handoff:
    return Handoff(doing="在做解析器", next="写渲染器", step="干活", **sections)


def test_mentioned_ignores_case_spacing_emphasis_and_code_ticks() -> None:
    item = OpenItem("failed_check", "`pytest -q` 全部通过")
    assert mentioned("还要让 **PYTEST   -q** 全部通过", item)
    assert not mentioned("测试还没跑", item)
    by_needle = OpenItem("changed_file", "src/a.py (modified)", needles=("src/a.py", "a.py"))
    assert mentioned("改了 a.py", by_needle)
    assert not mentioned("改了 b.py", by_needle)


def test_unmentioned_keeps_order_drops_repeats_and_blank_items() -> None:
    items = [
        OpenItem("mail", "加一个 README"),
        OpenItem("mail", "加一个 README"),
        OpenItem("mail", "  "),
        OpenItem("unknown", "渲染器的字体待定"),
        OpenItem("failed_check", "写渲染器"),  # the document says it
    ]
    missing = unmentioned(doc(), items)
    assert [(i.kind, i.text) for i in missing] == [
        ("mail", "加一个 README"),
        ("unknown", "渲染器的字体待定"),
    ]


def test_failed_checks_come_from_a_verdict_that_did_not_pass() -> None:
    not_yet = Verdict.parse("## 结论\n未达成\n## 未通过\n- `pytest -q` 通过\n- 文档写好")
    items = failed_checks(not_yet)
    assert [i.text for i in items] == ["`pytest -q` 通过", "文档写好"]
    assert "pytest -q" in items[0].needles  # the command alone counts as a mention
    achieved = Verdict.parse("## 结论\n已达成\n## 未通过\n- 文档写好")
    assert failed_checks(achieved) == [] and failed_checks(None) == []


def test_open_unknowns_are_the_lines_that_say_they_are_open() -> None:
    brief = Brief(
        unknowns="- 假设用 Python 3.11\n- 部署方式待定\n- 要不要支持 Windows?\n"
        "### 补充 · 运行中补充 · 10:00\n> 原话:还不确定\n1. 配色 TBD\n- 无未知项\n- None open?"
    )
    assert [i.text for i in open_unknowns(brief)] == [
        "部署方式待定",
        "要不要支持 Windows?",
        "配色 TBD",
    ]
    assert open_unknowns(None) == []


def test_channel_items_are_undelivered_mail_and_waiting_questions(tmp_path: Path) -> None:
    channel = HumanChannel(log_path=tmp_path / "log.md", timeout_s=None)
    channel.send("先别动数据库")
    delivered = channel.send("这句已经送到")
    assert delivered is not None
    delivered.state = "delivered"
    assert [i.text for i in undelivered(channel)] == ["先别动数据库"]
    assert waiting_questions(channel) == [] and undelivered(object()) == []


def test_changed_files_are_what_changed_since_the_last_step(tmp_path: Path) -> None:
    ws, run_dir = tmp_path / "ws", tmp_path / "runs"
    ws.mkdir()
    (ws / "keep.txt").write_text("a")
    (ws / "edit.txt").write_text("a")
    (ws / "gone.txt").write_text("a")
    record(ws, run_dir)
    (ws / "edit.txt").write_text("longer")
    os.utime(ws / "edit.txt", ns=(time.time_ns(), time.time_ns() + 10**9))
    (ws / "gone.txt").unlink()
    (ws / "new.txt").write_text("b")
    texts = [i.text for i in changed_files(ws, run_dir)]
    assert texts == ["edit.txt (modified)", "gone.txt (deleted)", "new.txt (added)"]
    assert changed_files(None, run_dir) == []


def test_the_section_is_marked_grouped_and_round_trips(tmp_path: Path) -> None:
    handoff = doc()
    request = AuditRequest(runtime=None, step="干活", doc=handoff, ctx={})
    pm = get_plugin_manager()

    class Items:
        @hookimpl
        def flower_open_items(self, request: AuditRequest) -> list[OpenItem]:
            return [
                OpenItem("mail", "加一个 README"),
                OpenItem("ticket", "工单 #42 还开着", needles=("#42",)),
                OpenItem("failed_check", "页面能打开"),
            ]

    pm.register(Items(), name="test-items")
    try:
        missing = audit_handoff(request)
    finally:
        pm.unregister(name="test-items")
    assert [i.kind for i in missing] == ["mail", "ticket", "failed_check"]
    text = handoff.to_markdown()
    assert f"## {AUDIT_HEADING}" in text
    section = handoff.audit
    # the defaults' kinds in their fixed order, a plugin's own kind after them
    assert section.index("页面能打开") < section.index("加一个 README") < section.index("#42")
    saved = Handoff.load(handoff.write(tmp_path / "交接.md"))
    assert saved is not None and saved.audit == handoff.audit and saved.doing == "在做解析器"
    assert f"## {AUDIT_HEADING}" in saved.prompt_block()


def test_a_document_that_mentions_everything_gets_no_section() -> None:
    handoff = doc(scene="README 还没加")
    pm = get_plugin_manager()

    class Items:
        @hookimpl
        def flower_open_items(self) -> list[OpenItem]:  # a subset of the arguments
            return [OpenItem("mail", "README", needles=("readme",))]

    pm.register(Items(), name="test-items")
    try:
        assert audit_handoff(AuditRequest(runtime=None, step="干活", doc=handoff)) == []
    finally:
        pm.unregister(name="test-items")
    assert handoff.audit == "" and AUDIT_HEADING not in handoff.to_markdown()


def test_a_plugin_that_raises_loses_nothing_of_the_others(
    capsys: pytest.CaptureFixture[str],
) -> None:
    handoff = degraded("干活", "build the thing", why="round failed")
    pm = get_plugin_manager()

    class Broken:
        @hookimpl
        def flower_open_items(self, request: AuditRequest) -> list[OpenItem]:
            raise RuntimeError("tracker down")

    class Fine:
        @hookimpl
        def flower_open_items(self, request: AuditRequest) -> list[OpenItem]:
            return [OpenItem("mail", "别删测试")]

    pm.register(Broken(), name="test-broken")
    pm.register(Fine(), name="test-fine")
    try:
        missing = audit_handoff(AuditRequest(runtime=None, step="干活", doc=handoff))
    finally:
        pm.unregister(name="test-broken")
        pm.unregister(name="test-fine")
    assert [i.text for i in missing] == ["别删测试"]
    assert "别删测试" in handoff.audit and handoff.degraded  # a degraded handoff is audited too
    assert "tracker down" in capsys.readouterr().err


def test_a_second_audit_replaces_the_first_section() -> None:
    handoff = doc()
    handoff.audit = "an older section that mentions 加一个 README"
    pm = get_plugin_manager()

    class Items:
        @hookimpl
        def flower_open_items(self) -> list[OpenItem]:
            return [OpenItem("mail", "加一个 README")]

    pm.register(Items(), name="test-items")
    try:
        missing = audit_handoff(AuditRequest(runtime=None, step="干活", doc=handoff))
    finally:
        pm.unregister(name="test-items")
    assert len(missing) == 1 and "older section" not in handoff.audit


def test_changed_files_name_the_first_ones_and_count_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flower.runtime.audit as audit

    ws, run_dir = tmp_path / "ws", tmp_path / "runs"
    ws.mkdir()
    record(ws, run_dir)
    for name in ("a.txt", "b.txt", "c.txt"):
        (ws / name).write_text(name)
    monkeypatch.setattr(audit, "MAX_FILES", 2)
    assert [i.text for i in changed_files(ws, run_dir)] == [
        "a.txt (added)",
        "b.txt (added)",
        "and 1 more (git status shows them)",
    ]
    monkeypatch.setattr(audit, "MAX_FILES", 3)  # exactly as many as shown: no count line
    assert len(changed_files(ws, run_dir)) == 3


def test_waiting_questions_are_named_by_text_and_id() -> None:
    from types import SimpleNamespace

    waiting = SimpleNamespace(question="用 LF 还是 CRLF?", id="q3")
    channel = SimpleNamespace(pending=lambda: [waiting])
    (item,) = waiting_questions(channel)
    assert item.text == "用 LF 还是 CRLF? (q3)" and item.kind == "question"
    assert mentioned("q3 还在等回答", item) and mentioned("用 lf 还是 crlf?", item)


def test_carried_mail_is_delivered_and_the_inbox_does_not_hand_it_out_again(
    tmp_path: Path,
) -> None:
    import asyncio

    channel = HumanChannel(log_path=tmp_path / "log.md", timeout_s=None)
    kept = channel.send("加一个 README")
    other = channel.send("先别动数据库")
    assert kept is not None and other is not None
    seen: list[str] = []
    channel.on_event = lambda e: seen.append(e.payload["state"]) if e.kind == "mail" else None
    handoff = doc(scene="先别动数据库")  # mentions one remark; the audit appends the other
    pm = get_plugin_manager()

    class FromChannel:
        @hookimpl
        def flower_open_items(self) -> list[OpenItem]:
            return undelivered(channel)

    pm.register(FromChannel(), name="test-channel")
    try:
        missing = audit_handoff(AuditRequest(runtime=None, step="干活", doc=handoff))
    finally:
        pm.unregister(name="test-channel")
    assert [i.text for i in missing] == ["加一个 README"]
    assert channel.pending_mail() == [] and seen == ["delivered", "delivered"]
    inbox = asyncio.run(channel._inbox_tool({}))
    assert "加一个 README" not in inbox["content"][0]["text"]  # not handed out twice
    assert channel.deliver([kept.id]) == []  # already delivered: nothing happens


def test_an_item_whose_source_fails_to_settle_is_still_carried(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken() -> None:
        raise RuntimeError("inbox gone")

    handoff = doc()
    pm = get_plugin_manager()

    class Items:
        @hookimpl
        def flower_open_items(self) -> list[OpenItem]:
            return [OpenItem("mail", "加一个 README", carried=broken)]

    pm.register(Items(), name="test-items")
    try:
        missing = audit_handoff(AuditRequest(runtime=None, step="干活", doc=handoff))
    finally:
        pm.unregister(name="test-items")
    assert len(missing) == 1 and "加一个 README" in handoff.audit
    assert "inbox gone" in capsys.readouterr().err
