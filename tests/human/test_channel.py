"""HumanChannel without the CLI: quota, timeouts, threads, the inbox, the files.

The tool handlers are called the way the SDK calls them (a dict in, a result dict out);
test_human_e2e.py drives the same handlers through the real CLI.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from flower.human.channel import (
    AMEND_NOTE,
    DECLINED_TEXT,
    EMPTY_INBOX_TEXT,
    INVALID_TEXT,
    LOG_HEADER,
    OVER_BUDGET_TEXT,
    TIMEOUT_TEXT,
    Ask,
    HumanChannel,
    amendment_block,
)
from flower.kernel.channel_protocol import Channel, channel_tools
from flower.kernel.events import Event

pytestmark = pytest.mark.anyio

BLOCK_HEAD = re.compile(
    r"^### 补充 · (?P<label>.+) · \d{4}-\d\d-\d\d \d\d:\d\d" + re.escape(AMEND_NOTE) + "$"
)


class Recorder(list[Event]):
    def states(self, kind: str = "ask") -> list[tuple[str, str]]:
        return [(e.payload["id"], e.payload["state"]) for e in self if e.kind == kind]


async def tool_text(result: dict[str, Any]) -> str:
    (block,) = result["content"]
    assert block["type"] == "text"
    return str(block["text"])


def answer_when_asked(ch: HumanChannel, text: str, *, delay: float = 0.0) -> list[int]:
    """on_event that answers every new question from a fresh thread; returns the thread ids."""
    threads: list[int] = []

    def respond(ask_id: str) -> None:
        time.sleep(delay)
        threads.append(threading.get_ident())
        assert ch.answer(ask_id, text)

    def on_event(event: Event) -> None:
        if event.kind == "ask" and event.payload["state"] == "asked":
            threading.Thread(target=respond, args=(event.payload["id"],)).start()

    ch.on_event = on_event
    return threads


# --- shape ---------------------------------------------------------------------------------


def test_it_is_a_channel_with_the_documented_tool_names() -> None:
    ch = HumanChannel()
    assert isinstance(ch, Channel)
    assert (ch.tool_name, ch.inbox_tool_name) == ("mcp__human__ask", "mcp__human__inbox")
    assert channel_tools(ch, inbox=True) == ["mcp__human__ask", "mcp__human__inbox"]
    servers = ch.mcp_servers()
    assert list(servers) == ["human"] and servers["human"]["name"] == "human"
    assert (ch.timeout_s, ch.max_asks, ch.remaining, ch.on_event) == (1800.0, None, -1, None)


def test_importing_the_channel_does_not_load_the_sdk() -> None:
    code = (
        "import sys, flower.human.channel, flower_plugins.human; "
        "print('claude_agent_sdk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_the_default_plugin_builds_it_from_the_hook_arguments(tmp_path: Path) -> None:
    from flower import plugins

    assert "flower_plugins.human" in plugins.DEFAULT_PLUGINS
    built = plugins.get_plugin_manager().hook.flower_human_channel(
        log_path=tmp_path / "log.md", amend_path=tmp_path / "需求.md", max_asks=2, timeout_s=0
    )
    assert isinstance(built, HumanChannel)
    assert (built.log_path, built.amend_path) == (tmp_path / "log.md", tmp_path / "需求.md")
    assert (built.max_asks, built.timeout_s, built.remaining) == (2, 0, 2)


# --- asking --------------------------------------------------------------------------------


async def test_timeout_zero_settles_at_once_and_counts_against_the_quota() -> None:
    events = Recorder()
    ch = HumanChannel(timeout_s=0, max_asks=2, on_event=events.append)
    started = time.monotonic()
    results = [await ch.ask("要不要缓存?") for _ in range(3)]
    assert time.monotonic() - started < 0.5
    assert [a.state for a in results] == ["timeout", "timeout", "over_budget"]
    assert [a.answer for a in results] == [TIMEOUT_TEXT, TIMEOUT_TEXT, OVER_BUDGET_TEXT]
    assert [a.remaining for a in results] == [1, 0, 0] and ch.remaining == 0
    assert [a.id for a in results] == ["q1", "q2", "q3"]
    # settled without waiting: one event each, no "asked" a UI would have to answer
    assert events.states() == [("q1", "timeout"), ("q2", "timeout"), ("q3", "over_budget")]
    assert all(a.settled_at is not None for a in results) and ch.pending() == []


async def test_quota_zero_refuses_every_question_and_negative_means_unlimited() -> None:
    none = HumanChannel(max_asks=0, timeout_s=0)
    assert (await none.ask("可以吗?")).state == "over_budget"
    unlimited = HumanChannel(max_asks=-1, timeout_s=0)
    assert unlimited.max_asks is None
    assert [(await unlimited.ask(f"问题{i}")).remaining for i in range(5)] == [-1] * 5


async def test_a_question_over_budget_never_blocks_even_with_no_timeout() -> None:
    ch = HumanChannel(max_asks=1, timeout_s=None)
    answer_when_asked(ch, "好")
    assert (await asyncio.wait_for(ch.ask("第一个"), 5)).state == "answered"
    over = await asyncio.wait_for(ch.ask("第二个"), 1.0)
    assert (over.state, over.answer, over.remaining) == ("over_budget", OVER_BUDGET_TEXT, 0)


async def test_an_empty_question_is_invalid_and_costs_nothing() -> None:
    ch = HumanChannel(max_asks=1, timeout_s=0)
    result = await ch._ask_tool({"question": "   \n"})
    assert result.get("is_error") is True and await tool_text(result) == INVALID_TEXT
    assert ch.asks[0].state == "invalid" and ch.remaining == 1
    assert (await ch.ask("真正的问题")).state == "timeout"


async def test_timeout_expires_when_nobody_answers() -> None:
    events = Recorder()
    ch = HumanChannel(timeout_s=0.2, on_event=events.append)
    started = time.monotonic()
    ask = await ch.ask("用哪个端口?", ["8080", "9090"])
    waited = time.monotonic() - started
    assert 0.18 <= waited < 2.0
    assert (ask.state, ask.answer) == ("timeout", TIMEOUT_TEXT)
    assert events.states() == [("q1", "asked"), ("q1", "timeout")]
    assert ch.pending() == [] and ch.answer("q1", "太晚了") is False
    assert ask.answer == TIMEOUT_TEXT


async def test_an_answer_from_another_thread_wakes_the_waiting_loop() -> None:
    ch = HumanChannel(timeout_s=10)
    threads = answer_when_asked(ch, "  用 SQLite  ", delay=0.1)
    started = time.monotonic()
    ask = await ch.ask("用什么数据库?", ["SQLite", "Postgres"])
    assert time.monotonic() - started < 5.0
    assert (ask.state, ask.answer) == ("answered", "用 SQLite")
    assert threads and threads[0] != threading.get_ident()
    assert ch.pending() == [] and ch.answer(ask.id, "again") is False


async def test_many_waiting_questions_each_get_their_own_answer_from_many_threads() -> None:
    ch = HumanChannel(timeout_s=10)

    answered: list[str] = []

    def ui() -> None:  # UI threads polling pending(), racing each other for every ask
        deadline = time.monotonic() + 8
        while len(answered) < 20 and time.monotonic() < deadline:
            for ask in ch.pending():
                if ch.answer(ask.id, f"答{ask.question}"):
                    answered.append(ask.id)
            time.sleep(0.002)

    workers = [threading.Thread(target=ui) for _ in range(4)]
    for t in workers:
        t.start()
    asks = await asyncio.gather(*(ch.ask(f"问{i}") for i in range(20)))
    for t in workers:
        t.join()
    assert [a.answer for a in asks] == [f"答问{i}" for i in range(20)]
    assert {a.state for a in asks} == {"answered"} and ch.pending() == []
    assert sorted(answered) == sorted(a.id for a in asks)  # each answered exactly once


async def test_an_answer_racing_the_timeout_never_leaves_a_mixed_state() -> None:
    # Whichever wins, the ask's state, its answer and answer()'s return value agree.
    for n in range(40):
        ch = HumanChannel(timeout_s=0.02)
        said: list[bool] = []

        def racer(ch: HumanChannel = ch, said: list[bool] = said, n: int = n) -> None:
            time.sleep(0.015 + (n % 10) * 0.001)
            said.append(ch.answer("q1", "赶上了"))

        t = threading.Thread(target=racer)
        t.start()
        ask = await ch.ask("快答")
        t.join()
        await asyncio.sleep(0)
        if said[0]:
            assert (ask.state, ask.answer) == ("answered", "赶上了")
        else:
            assert (ask.state, ask.answer) == ("timeout", TIMEOUT_TEXT)


async def test_decline_and_an_empty_answer_let_the_model_decide() -> None:
    ch = HumanChannel(timeout_s=10)

    def on_event(event: Event) -> None:
        if event.payload.get("state") == "asked":
            qid = event.payload["id"]
            reason = "我也不确定" if qid == "q1" else ""
            go = (lambda: ch.decline(qid, reason)) if qid == "q1" else (lambda: ch.answer(qid, " "))
            threading.Timer(0.05, go).start()

    ch.on_event = on_event
    first, second = await ch.ask("要深色模式吗?"), await ch.ask("要英文界面吗?")
    assert (first.state, second.state) == ("declined", "declined")
    assert first.answer.startswith(DECLINED_TEXT) and "我也不确定" in first.answer
    assert second.answer == DECLINED_TEXT
    assert ch.decline("q1") is False and ch.decline("nope") is False


async def test_options_are_kept_cleaned_and_reported() -> None:
    events = Recorder()
    ch = HumanChannel(timeout_s=0, on_event=events.append)
    ask = await ch.ask("选一个", [" 甲 ", "", "乙", "甲", "丙\n方案"])
    assert ask.options == ["甲", "乙", "丙 方案"]
    assert events[-1].payload["options"] == ["甲", "乙", "丙 方案"]
    assert (await ch.ask("只有一个", "唯一")).options == ["唯一"]
    assert (await ch.ask("没有")).options == []
    assert set(events[0].payload) == {
        "id",
        "question",
        "options",
        "state",
        "answer",
        "remaining",
        "asked_at",
    }


async def test_the_tool_returns_the_answer_and_passes_options() -> None:
    ch = HumanChannel(timeout_s=10)
    seen: list[list[str]] = []

    def on_event(event: Event) -> None:
        if event.payload.get("state") == "asked":
            seen.append(event.payload["options"])
            threading.Timer(0.01, ch.answer, args=(event.payload["id"], "Postgres")).start()

    ch.on_event = on_event
    result = await ch._ask_tool({"question": "数据库?", "options": ["SQLite", "Postgres"]})
    assert await tool_text(result) == "Postgres" and "is_error" not in result
    assert seen == [["SQLite", "Postgres"]]


async def test_a_cancelled_ask_settles_as_cancelled_and_cannot_be_answered() -> None:
    events = Recorder()
    ch = HumanChannel(timeout_s=None, on_event=events.append)
    task = asyncio.create_task(ch.ask("等很久"))
    await asyncio.sleep(0.05)
    assert [a.id for a in ch.pending()] == ["q1"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ch.asks[0].state == "cancelled" and ch.pending() == []
    assert ch.answer("q1", "晚了") is False
    assert events.states() == [("q1", "asked"), ("q1", "cancelled")]


async def test_a_failing_ui_callback_is_collected_and_never_breaks_the_channel(
    tmp_path: Path,
) -> None:
    calls: list[str] = []

    def broken(event: Event) -> None:
        calls.append(event.kind)
        raise RuntimeError("renderer crashed")

    ch = HumanChannel(timeout_s=0, on_event=broken, amend_path=tmp_path / "需求.md")
    assert (await ch.ask("还在吗?")).state == "timeout"
    assert ch.send("加一个导出") is not None
    await ch._inbox_tool({})
    assert calls == ["ask", "mail", "mail"]
    assert len(ch.ui_errors) == 3
    assert all("renderer crashed" in e and "RuntimeError" in e for e in ch.ui_errors)


# --- pull-style UIs --------------------------------------------------------------------------


async def test_next_ask_hands_each_waiting_question_to_one_puller() -> None:
    ch = HumanChannel(timeout_s=10)
    assert await ch.next_ask(timeout=0.05) is None

    async def ui() -> list[str]:
        got = []
        for _ in range(2):
            ask = await ch.next_ask(timeout=5)
            assert ask is not None
            got.append(ask.id)
            ch.answer(ask.id, f"答{ask.id}")
        return got

    pulled, first, second = await asyncio.gather(ui(), ch.ask("一"), ch.ask("二"))
    assert sorted(pulled) == ["q1", "q2"]
    assert (first.answer, second.answer) == ("答q1", "答q2")
    assert await ch.next_ask(timeout=0.05) is None  # nothing handed out twice


async def test_next_ask_skips_questions_that_settled_before_anyone_pulled() -> None:
    ch = HumanChannel(timeout_s=0.05)
    await ch.ask("没人看")
    assert await ch.next_ask(timeout=0.05) is None


async def test_next_ask_works_from_another_event_loop_in_another_thread() -> None:
    ch = HumanChannel(timeout_s=10)
    pulled: list[str] = []

    def ui_thread() -> None:
        async def pull() -> None:
            ask = await ch.next_ask(timeout=5)
            assert ask is not None
            pulled.append(ask.id)
            ch.answer(ask.id, "来自另一个循环")

        asyncio.run(pull())

    t = threading.Thread(target=ui_thread)
    t.start()
    await asyncio.sleep(0.05)  # the puller waits before the question exists
    ask = await ch.ask("跨循环?")
    t.join()
    assert pulled == ["q1"] and ask.answer == "来自另一个循环"


# --- the inbox -------------------------------------------------------------------------------


async def test_the_inbox_delivers_every_queued_remark_once_in_order(tmp_path: Path) -> None:
    events = Recorder()
    ch = HumanChannel(timeout_s=0, on_event=events.append, amend_path=tmp_path / "需求.md")
    assert ch.send("  ") is None
    await ch.ask("先问一个")
    sent = [ch.send(t) for t in ("加导出", "别动 API", "用中文界面")]
    assert [m.id for m in sent if m] == ["m2", "m3", "m4"]  # one counter with asks
    assert [m.id for m in ch.pending_mail()] == ["m2", "m3", "m4"]

    text = await tool_text(await ch._inbox_tool({}))
    assert text.index("加导出") < text.index("别动 API") < text.index("用中文界面")
    assert "已经追加到需求文件" in text
    assert ch.pending_mail() == [] and {m.state for m in ch.mail} == {"delivered"}
    assert all(m.delivered_at for m in ch.mail)
    assert await tool_text(await ch._inbox_tool({})) == EMPTY_INBOX_TEXT
    mail_events = [(e.payload["id"], e.payload["state"]) for e in events if e.kind == "mail"]
    assert mail_events == [(f"m{i}", "queued") for i in (2, 3, 4)] + [
        (f"m{i}", "delivered") for i in (2, 3, 4)
    ]
    assert {e.payload["amended"] for e in events if e.kind == "mail"} == {str(tmp_path / "需求.md")}


async def test_without_a_brief_the_inbox_warns_the_remark_is_not_saved() -> None:
    ch = HumanChannel()
    mail = ch.send("改用 Go")
    assert mail is not None and mail.amended == ""
    text = await tool_text(await ch._inbox_tool({}))
    assert "改用 Go" in text and "没有写进需求文件" in text


def test_sends_from_many_threads_keep_one_order_in_the_inbox_and_the_brief(
    tmp_path: Path,
) -> None:
    brief = tmp_path / "需求.md"
    ch = HumanChannel(amend_path=brief)

    def sender(k: int) -> None:
        for i in range(25):
            ch.send(f"线程{k}-第{i}句")

    threads = [threading.Thread(target=sender, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ch.mail) == 100 and len({m.id for m in ch.mail}) == 100
    quoted = [
        line[2:] for line in brief.read_text(encoding="utf-8").splitlines() if line[:2] == "> "
    ]
    assert quoted == [m.text for m in ch.mail]
    delivered = asyncio.run(ch._inbox_tool({}))["content"][0]["text"]
    positions = [delivered.index(f"{m.text}\n") for m in ch.mail]
    assert positions == sorted(positions)


# --- files -----------------------------------------------------------------------------------


def test_amend_appends_a_marked_block_and_keeps_what_was_there(tmp_path: Path) -> None:
    brief = tmp_path / "deep" / "notes" / "需求.md"
    ch = HumanChannel(amend_path=brief)
    assert ch.amend("   ") is None and not brief.exists()
    assert ch.amend("第一条\n目标:改成网页版\n```", label="醒来时补充") == brief
    assert ch.amend("第二条") == brief
    text = brief.read_text(encoding="utf-8")
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("### ")]
    assert len(heads) == 2
    assert BLOCK_HEAD.match(lines[heads[0]])["label"] == "醒来时补充"  # type: ignore[index]
    assert BLOCK_HEAD.match(lines[heads[1]])["label"] == "运行中补充"  # type: ignore[index]
    assert lines[heads[0] + 1 : heads[0] + 4] == ["> 第一条", "> 目标:改成网页版", "> ```"]
    assert lines[heads[1] + 1] == "> 第二条"

    brief.write_text("# 需求\n## 目标\n做个计算器", encoding="utf-8")  # no final newline
    ch.amend("第三条")
    assert brief.read_text(encoding="utf-8").startswith("# 需求\n## 目标\n做个计算器\n\n### 补充")


def test_amendment_block_is_one_line_header_then_quoted_text() -> None:
    at = time.mktime((2025, 3, 4, 5, 6, 0, 0, 0, -1))
    block = amendment_block("a\n\nb", label="人\n修改", at=at)
    assert block == f"\n### 补充 · 人 修改 · 2025-03-04 05:06{AMEND_NOTE}\n> a\n>\n> b\n"


async def test_an_unwritable_brief_is_recorded_not_raised(tmp_path: Path) -> None:
    brief = tmp_path / "需求.md"
    brief.mkdir()  # a folder where the file should be
    ch = HumanChannel(amend_path=brief, log_path=tmp_path / "log" / "x", timeout_s=0)
    (tmp_path / "log").write_text("not a folder")
    assert ch.amend("补充") is None
    mail = ch.send("补充")
    assert mail is not None and mail.amended == ""
    assert (await ch.ask("还能问吗?")).state == "timeout"
    assert len(ch.ui_errors) == 3 and all("could not append" in e for e in ch.ui_errors)


async def test_the_log_has_one_header_and_one_entry_per_settled_ask_and_delivered_mail(
    tmp_path: Path,
) -> None:
    log = tmp_path / "notes" / "问答记录.md"
    ch = HumanChannel(log_path=log, max_asks=2, timeout_s=10)
    answer_when_asked(ch, "用 SQLite")
    await ch.ask("用什么数据库?", ["SQLite", "Postgres"])
    ch.timeout_s = 0
    await ch.ask("要缓存吗?")
    await ch.ask("超额的问题")
    await ch.ask("")
    ch.send("顺便加导出")
    ch.send("还没送达的话")
    assert log.read_text(encoding="utf-8").count("\n## ") == 4  # queued mail is not logged yet
    ch.mail[1].state = "delivered"  # pretend the second one went out already
    await ch._inbox_tool({})

    text = log.read_text(encoding="utf-8")
    assert text.startswith(LOG_HEADER) and text.count("# 问答记录") == 1
    entries = text.split("\n## ")[1:]
    assert [e.split(" · ")[0] for e in entries] == ["q1", "q2", "q3", "q4", "m5"]
    assert [e.splitlines()[0].rsplit(" · ", 1)[1] for e in entries[:4]] == [
        "answered",
        "timeout",
        "over_budget",
        "invalid",
    ]
    assert "问:用什么数据库?\n选项:SQLite / Postgres\n答:用 SQLite" in entries[0]
    assert "顺便加导出" in entries[4] and "还没送达的话" not in text

    again = HumanChannel(log_path=log, timeout_s=0)  # the next run appends under the header
    await again.ask("第二次运行的问题")
    text = log.read_text(encoding="utf-8")
    assert text.count("# 问答记录") == 1 and text.endswith("答:" + TIMEOUT_TEXT + "\n")


async def test_transcript_lists_questions_and_remarks_in_order() -> None:
    ch = HumanChannel(timeout_s=0)
    await ch.ask("要测试吗?", ["要", "不要"])
    ch.send("记得写文档")
    await ch.ask("")
    lines = ch.transcript().splitlines()
    assert lines[0] == "- q1 问:要测试吗?" and lines[1] == "  选项:要 / 不要"
    assert lines[2] == f"  答[timeout]:{TIMEOUT_TEXT}"
    assert lines[3] == "- m2 人主动补充[queued]:记得写文档"
    assert lines[4] == "- q3 问:" and lines[5] == f"  答[invalid]:{INVALID_TEXT}"


def test_ask_is_a_plain_record() -> None:
    ask = Ask(id="q1", question="x")
    assert (ask.state, ask.answer, ask.remaining, ask.settled) == ("asked", "", -1, False)
    assert ask.payload()["asked_at"] == ask.asked_at


async def test_a_callback_may_answer_on_the_spot_without_deadlocking() -> None:
    events = Recorder()
    ch = HumanChannel(timeout_s=5)

    def on_event(event: Event) -> None:
        events.append(event)
        if event.payload["state"] == "asked":
            assert ch.pending()[0].id == event.payload["id"]  # no lock held while emitting
            ch.answer(event.payload["id"], "马上答")

    ch.on_event = on_event
    ask = await asyncio.wait_for(ch.ask("同一线程?"), 2)
    assert ask.answer == "马上答"
    assert events.states() == [("q1", "asked"), ("q1", "answered")]


async def test_plugins_observe_questions_and_remarks_through_the_event_hook() -> None:
    from flower import hookimpl
    from flower.plugins import get_plugin_manager

    seen: list[tuple[str, str]] = []

    class Observer:
        @hookimpl
        def flower_event(self, event: Event) -> None:
            seen.append((event.kind, event.payload.get("state", "")))

    pm = get_plugin_manager()
    observer = Observer()
    pm.register(observer, name="test-observer")
    try:
        ch = HumanChannel(timeout_s=0)
        await ch.ask("anyone?")
        ch.send("also this")
    finally:
        pm.unregister(observer)
    assert seen == [("ask", "timeout"), ("mail", "queued")]


def test_a_remark_delivered_while_send_is_returning_is_still_reported_as_queued(
    tmp_path: Path,
) -> None:
    # The agent's inbox check (the loop's thread) can land between send() making the
    # remark visible and send() reporting it: the "queued" event must still say queued.
    events = Recorder()
    ch = HumanChannel(on_event=events.append, amend_path=tmp_path / "需求.md")
    inner = ch._lock

    class InboxReadOnRelease:
        """The channel's lock; the first release after the remark is queued lets the
        agent read its inbox right then, as another thread could."""

        fired = False

        def __enter__(self) -> None:
            inner.acquire()

        def __exit__(self, *exc: object) -> None:
            inner.release()
            if ch.mail and not self.fired:
                self.fired = True
                asyncio.run(ch._inbox_tool({}))

    ch._lock = InboxReadOnRelease()  # type: ignore[assignment]
    mail = ch.send("加一个导出")
    assert mail is not None and mail.state == "delivered"
    assert sorted(events.states("mail")) == [("m1", "delivered"), ("m1", "queued")]
