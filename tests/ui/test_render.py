"""Renderer: every event kind of docs/workflow.md becomes lines, through the one path."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flower.kernel.events import Event
from flower.kernel.terminal import Terminal
from flower.ui.render import Renderer, plural, renderer_for

from .ptyio import Pty, rows

DOCS = Path(__file__).resolve().parents[2] / "docs" / "workflow.md"

#: A plausible value for every payload key the docs name.
SAMPLE: dict[str, Any] = {
    "woke": 3, "steps": {"干活": "sid-1"}, "notice": "lineage.json names another workspace",
    "index": 2, "total": 3, "resumed": True, "unverifiable": ["能在浏览器里点开"],
    "path": "/ws/.flower/notes/目标.md", "round": 1, "rounds": 3, "state": "not_yet",
    "reason": "没给验证证据", "failed": ["测试通过"], "session_id": "sid-1", "id": "q1",
    "question": "换行用 LF 还是 CRLF?", "options": ["LF", "CRLF"], "answer": "LF",
    "remaining": -1, "asked_at": 0.0, "text": "我先看看目录\n然后写文件", "amended": "/ws/需求.md",
    "resume": "sid-0", "fork": False, "generation": 1, "subtype": "init", "subagent": False,
    "name": "Bash", "input": {"command": "ls -la"}, "error": "API Error: 529 overloaded",
    "used": 180_000, "window": 200_000, "at": 190_000, "phase": "near", "overflow": False,
    "degraded": False, "sections": 5, "attempt": 2, "max_attempts": 6, "class": "transient",
    "delay": 0.0, "host": "127.0.0.1", "port": 443, "waited": 30.0, "next_probe_in": 0.0,
    "max_wait": 3600.0, "said": "先别动测试", "ok": True, "cost_usd": 0.1234, "num_turns": 1,
    "context": 45_200, "attempts": 1, "duration_s": 12.3, "type": "StreamEvent",
    "max_retries": 3, "retry_delay_ms": 0, "error_status": 529, "choice": "accept",
    "files": [{"path": "/ws/CLAUDE.md", "action": "appended", "warning": "2 start markers"}],
    "mechanical": False, "why": "", "audited": 2, "open_items": {"mail": 1, "failed_check": 1},
    "stopped": False, "summed_up": False, "tool": "Bash", "thread": "main",
    "spent": 0.0412, "cap": 0.05, "left": 0.0088, "run": "4111abcd", "suggested": 0.11,
    "via": "page", "code": 0, "cost": 0.5, "side_usd": 0.02, "side_count": 1,
    "failed_at": None, "aborted": None, "manifest": "/ws/runs/manifest.json",
}  # fmt: skip
#: Every value an enumerated payload field takes.
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "ask": [{"state": s} for s in
            ("asked", "answered", "timeout", "declined", "over_budget", "invalid", "cancelled")],
    "verdict": [{"state": s} for s in ("achieved", "not_yet", "unreachable", "")],
    "mail": [{"state": "queued"}, {"state": "delivered"}, {"state": "queued", "amended": ""}],
    "handoff": [{"phase": p} for p in ("near", "writing", "done")]
    + [{"phase": "done", "degraded": True}],
    "system": [{"subtype": "init"}, {"subtype": "api_retry"}],
    "result": [{"ok": True}, {"ok": False},
               {"ok": False, "stopped": True, "error": "stopped: the process was exiting"}],
    "tool": [{}, {"subagent": True}, {"name": "Agent",
             "input": {"subagent_type": "coder", "description": "写 hello.txt"}},
             {"name": "mcp__human__ask"}],
    "tool_result": [{"error": True}, {"error": False}, {"error": True, "subagent": True}],
    "text": [{}, {"subagent": True}, {"summed_up": True}],
    "step": [{"resumed": True}, {"resumed": False}],
    "override": [{"choice": c} for c in ("accept", "change_goal", "misjudged")],
    "bequest": [{"mechanical": True, "why": "HTTP 400"}, {"files": []}],
    "budget": [{"phase": p} for p in ("spent", "near", "reached")] + [{"cap": None}],
    "error": [{"class": c} for c in ("transient", "fatal", "unknown")],
    "reset": [{"degraded": False}, {"degraded": True, "path": None}],
    "refused": [{"thread": "main"}, {"thread": "subagent"}],
    "aside": [{"answer": None}, {"answer": "在干活", "via": ""}, {"ok": False}],
}  # fmt: skip


def documented_kinds() -> dict[str, list[str]]:
    """kind -> payload keys, read from the Events table of docs/workflow.md."""
    table = DOCS.read_text(encoding="utf-8").split("## Events", 1)[1]
    kinds: dict[str, list[str]] = {}
    for line in table.splitlines():
        cols = [c.strip() for c in line.split("|")]
        if len(cols) >= 5 and (m := re.fullmatch(r"`(\w+)`", cols[1])):
            kinds[m.group(1)] = re.findall(r"`(\w+)`", cols[3])
    return kinds


def events() -> Iterator[Event]:
    for kind, keys in documented_kinds().items():
        base = {k: SAMPLE[k] for k in keys if k in SAMPLE}
        for extra in VARIANTS.get(kind, [{}]):
            yield Event(kind, {**base, **extra}, step="干活")


def test_the_docs_table_is_read() -> None:
    kinds = documented_kinds()
    assert {"wake", "step", "ask", "mail", "retry", "offline", "result", "unknown"} <= set(kinds)
    missing = {k for keys in kinds.values() for k in keys} - set(SAMPLE)
    values = {"init", "api_retry", "near", "writing", "done", "queued", "delivered", "accept"}
    values |= {"change_goal", "misjudged", "created", "replaced", "appended", "unchanged"}
    values |= {"reached"}  # the budget's phases
    assert not missing - values - {"failed", "action", "warning"}


@pytest.mark.parametrize("event", list(events()), ids=lambda e: f"{e.kind}")
def test_every_kind_renders_through_the_terminal(event: Event) -> None:
    out = io.StringIO()
    Renderer(Terminal(out), verbose=True)(event)
    assert out.getvalue().strip(), f"{event.kind} {event.payload} showed nothing when verbose"
    quiet = io.StringIO()
    Renderer(Terminal(quiet))(event)  # the default view may hide it, never raise


@pytest.mark.parametrize("kind", sorted(documented_kinds()))
def test_a_payload_of_another_shape_never_raises(kind: str) -> None:
    odd = {k: object() for k in ("index", "used", "cost_usd", "num_turns", "delay", "woke")}
    out = io.StringIO()
    view = Renderer(Terminal(out), verbose=True)
    view(Event(kind, {**odd, "state": 3, "phase": [], "options": 5, "input": "x"}))
    view(Event(kind, {}))
    view(Event(kind, None))  # type: ignore[arg-type]


def test_an_undocumented_kind_is_shown_only_when_verbose() -> None:
    out = io.StringIO()
    Renderer(Terminal(out))(Event("brand_new", {"x": 1}))
    assert out.getvalue() == ""
    Renderer(Terminal(out), verbose=True)(Event("brand_new", {"x": 1}))
    assert out.getvalue() == "brand_new: x=1\n"


def show(*evs: Event, verbose: bool = False, **attrs: Any) -> str:
    out = io.StringIO()
    view = Renderer(Terminal(out), verbose=verbose)
    for k, v in attrs.items():
        setattr(view, k, v)
    for e in evs:
        view(e)
    return out.getvalue()


def test_step_header_and_skip() -> None:
    text = show(
        Event("skip", {"index": 1, "total": 3, "woke": 3}, step="确认需求"),
        Event("step", {"index": 3, "total": 3, "resumed": True, "woke": 3}, step="干活"),
        Event("step", {"index": 1, "total": 1, "resumed": False, "woke": 1}, step="once"),
    )
    lines = text.splitlines()
    assert lines[0] == "~ 确认需求 skipped (1/3): already done"
    assert re.fullmatch(r"== 干活 =+  3/3  <- continuing - wake #2", lines[2])  # 3rd process
    assert re.fullmatch(r"== once =+  1/1", lines[4])
    assert len(lines[2].split("  ")[0]) == len(lines[4].split("  ")[0]) - 2  # 干活 is 4 cells


def test_questions_numbered_and_how_they_settled() -> None:
    asked = {"id": "q1", "question": "LF or CRLF?", "options": ["LF", "CRLF"], "state": "asked"}
    text = show(
        Event("ask", asked),
        Event("ask", {**asked, "state": "answered", "answer": "CRLF"}),
        Event("ask", {**asked, "id": "q2", "question": "tabs?", "options": [], "state": "timeout",
                      "answer": "你自己决定"}),
        answerable=True,
    )  # fmt: skip
    assert text.splitlines() == [
        "? LF or CRLF?",
        "    1) LF",
        "    2) CRLF",
        "  type 1-2 or your answer; Enter skips",
        "  -> CRLF",
        "? tabs?",  # settled at once (--timeout 0): the question is still shown
        "  -> no answer, the agent decides",
    ]


def test_unanswerable_questions_get_no_typing_hint() -> None:
    q = {"question": "which?", "options": ["a"], "state": "asked"}
    text = show(Event("ask", {**q, "id": "q1"}), answerable=False)
    assert text.splitlines() == ["? which?", "    1) a"]  # the driver says what happens


def test_mail_receipts() -> None:
    mail = {"id": "m3", "text": "用 LF", "amended": "/ws/需求.md"}
    text = show(
        Event("mail", {**mail, "state": "queued"}), Event("mail", {**mail, "state": "delivered"})
    )
    assert text.splitlines() == ["  * noted; appended to the brief", "  * the agent read your note"]


def test_tools_dispatches_and_errors() -> None:
    text = show(
        Event("tool", {"name": "Bash", "input": {"command": "ls\n-la"}, "subagent": False}),
        Event("tool", {"name": "Agent", "subagent": False,
                       "input": {"subagent_type": "coder", "description": "写 hello.txt"}}),
        Event("tool", {"name": "Read", "input": {"file_path": "/x.py"}, "subagent": True}),
        Event("tool_result", {"text": "ok", "error": False, "subagent": False}),
        Event("tool_result", {"text": "\x1b[31mboom\x1b[0m", "error": True, "subagent": True}),
        Event("tool", {"name": "mcp__human__inbox", "input": {}, "subagent": False}),
    )  # fmt: skip
    assert text.splitlines() == [
        "> Bash(ls -la)",
        ">> coder: 写 hello.txt",
        "    > Read(/x.py)",
        "      x boom",
    ]


def test_text_thinking_and_turns() -> None:
    text = show(
        Event("thinking", {"text": "hmm", "subagent": False}),
        Event("text", {"text": "第一行\n第二行\n", "subagent": False}),
        Event("text", {"text": "sub says", "subagent": True}),
        Event("result", {"ok": True, "num_turns": 1, "cost_usd": 0.01, "duration_s": 1.0,
                         "attempts": 1, "context": 0}, step="a"),
        Event("result", {"ok": False, "num_turns": 2, "cost_usd": 0.02, "duration_s": 75,
                         "attempts": 3, "context": 1500, "error": "budget"}, step="b"),
        Event("result", {"ok": False, "num_turns": 0, "cost_usd": 0, "duration_s": 9,
                         "error": "stopped: interrupted before it finished", "stopped": True},
              step="c"),
    )  # fmt: skip
    assert text.splitlines() == [
        "第一行",
        "第二行",
        "* a done - 1 turn - $0.0100 - 1s",
        "x b failed - 2 turns - $0.0200 - context 1.5K - 1m 15s - 3 attempts",
        "  budget",
        "~ c stopped - 0 turns - $0.0000 - 9s",
        "  interrupted before it finished",
    ]
    assert plural(1, "turn") == "1 turn" and plural(0, "turn") == "0 turns"
    verbose = show(Event("thinking", {"text": "hmm", "subagent": False}), verbose=True)
    assert "hmm" in verbose
    ruling = Event("text", {"text": "## 结论\n已达成", "subagent": False, "summed_up": True})
    assert show(ruling) == "" and "已达成" in show(ruling, verbose=True)


def test_the_clis_own_retries_are_shown() -> None:
    text = show(
        Event("system", {"subtype": "init", "session_id": "s"}),
        Event("system", {"subtype": "api_retry", "attempt": 1, "max_retries": 3,
                         "retry_delay_ms": 599, "error_status": 529, "error": "overloaded"}),
        Event("system", {"subtype": "api_retry", "attempt": 2, "max_retries": 3,
                         "retry_delay_ms": 1200, "error_status": None, "error": "unknown"}),
    )  # fmt: skip
    assert text.splitlines() == [
        "~ API overloaded (529): the CLI retries (1/3) in 0.6s",
        "~ API unknown: the CLI retries (2/3) in 1.2s",
    ]


def test_banner() -> None:
    home = Path.home()
    state = {"waking": True, "checks": 15, "woke": 2, "steps": {"干活": "s"}}
    text = show()
    out = io.StringIO()
    view = Renderer(Terminal(out))
    view.banner(state, context=80_200, workspace=home / "explore" / "ide")
    view.banner({**state, "checks": 0}, context=0, workspace=Path("/srv/x"))
    view.banner({"waking": False, "checks": 0, "woke": 0, "steps": {}}, context=0,
                workspace=Path("/srv/x"))  # fmt: skip
    assert text == ""
    assert out.getvalue().splitlines() == [
        "<- continuing in ~/explore/ide  brief confirmed - 15 goal checks - work context 80.2K"
        " - wake #2",  # two processes before this one: the first run, then wake #1
        "<- continuing in /srv/x  brief confirmed - wake #2",
        "* new run in /srv/x",
    ]


def test_closing_counts_from_the_start_of_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The original's ``once`` made a renderer per event and closed with $0.00 and 0:00."""
    out = io.StringIO()
    view = Renderer(Terminal(out))
    view(Event("result", {"ok": True, "num_turns": 1, "cost_usd": 0.25}, step="a"))
    view(Event("result", {"ok": True, "num_turns": 1, "cost_usd": 0.25}, step="b"))
    assert view.cost == pytest.approx(0.5)
    real = time.monotonic
    monkeypatch.setattr(time, "monotonic", lambda: real() + 125)
    view.closing(ok=True, cost=view.cost, manifest=Path("runs/manifest.json"), failed_at=None,
                 aborted=None)  # fmt: skip
    view.closing(ok=False, cost=0.5, manifest=Path("/r/manifest.json"), failed_at="干活",
                 aborted="the goal is unreachable")  # fmt: skip
    lines = out.getvalue().splitlines()
    assert lines[-3] == "* done - total $0.5000 - 2m 05s - manifest: runs/manifest.json"
    assert lines[-2:] == [
        "x stopped at 干活: the goal is unreachable",
        "  total $0.5000 - 2m 05s - manifest: /r/manifest.json",
    ]


def test_the_countdown_ticks_on_a_terminal_and_clears() -> None:
    pty = Pty(cols=80, rows=10)
    try:
        with pty.stream() as stream:
            term = Terminal(stream, color=False)
            view = Renderer(term)
            view(Event("retry", {"attempt": 1, "max_attempts": 6, "error": "529", "class":
                                 "transient", "delay": 2.4, "resume": True}))  # fmt: skip
            first = rows(pty.screen())
            time.sleep(1.3)
            second = rows(pty.screen())
            time.sleep(1.6)
            after = rows(pty.screen())
            view(Event("offline", {"host": "h", "port": 443, "waited": 0, "next_probe_in": 15,
                                   "max_wait": 3600}))  # fmt: skip
            view(Event("offline", {"host": "h", "port": 443, "waited": 15, "next_probe_in": 15,
                                   "max_wait": 3600}))  # fmt: skip
            offline = rows(pty.screen())
            view(Event("prompt", {"text": "继续", "resume": "s", "fork": False}))
            cleared = rows(pty.screen())
    finally:
        pty.close()
    assert "~ retrying in 3s" in first  # 2.4 s left: whole seconds, rounded up
    assert "~ retrying in 2s" in second
    assert not any(r.startswith("~ retrying in") for r in after)
    assert sum("! offline: h:443" in r for r in offline) == 1  # one line per outage on a TTY
    assert any(r.startswith("~ offline: waiting for h:443 for 15s - next probe in 15s")
               for r in offline)  # fmt: skip
    assert not any(r.startswith("~ offline") for r in cleared)


def test_a_plain_output_gets_every_offline_probe_and_no_countdown() -> None:
    probe = {"host": "h", "port": 1, "waited": 0, "next_probe_in": 1, "max_wait": 9}
    text = show(Event("offline", probe), Event("offline", {**probe, "waited": 1}))
    assert text.count("! offline") == 2 and "~ offline" not in text


def test_the_default_view_comes_from_the_hook() -> None:
    from flower import hookimpl
    from flower.plugins import get_plugin_manager

    term = Terminal(io.StringIO())
    assert type(renderer_for(term)) is Renderer

    class Mine:
        @hookimpl
        def flower_renderer(self, terminal: Terminal, verbose: bool) -> Any:
            return ("mine", verbose)

    class Abstains:
        @hookimpl
        def flower_renderer(self, terminal: Terminal) -> Any:
            return None

    pm = get_plugin_manager()
    for plugin, expected in ((Abstains(), Renderer), (Mine(), tuple)):
        pm.register(plugin)
        try:
            assert type(renderer_for(term, verbose=True)) is expected
        finally:
            pm.unregister(plugin)


def test_an_override_and_a_bequest_say_what_happened() -> None:
    text = show(
        Event("override", {"round": 2, "choice": "change_goal", "said": "只要 Linux"}, step="干活"),
        Event("override", {"round": 3, "choice": "misjudged", "said": ""}, step="干活"),
        Event(
            "bequest",
            {
                "files": [
                    {"path": "/ws/CLAUDE.md", "action": "replaced", "warning": ""},
                    {"path": "/ws/AGENTS.md", "action": "appended", "warning": "broken markers"},
                ],
                "mechanical": True,
                "why": "HTTP 400",
            },
        ),
    )
    flat = " ".join(text.split())
    assert "! you overruled the judge (round 2): changed the goal - 只要 Linux" in flat
    assert "! you overruled the judge (round 3): said the judge was wrong left" in flat
    assert (
        "left a note for the next tool in CLAUDE.md (replaced), AGENTS.md (appended)"
        " (assembled mechanically: HTTP 400) ! broken markers"
    ) in flat


def test_a_verdict_names_its_round_its_reason_and_each_failed_check() -> None:
    text = show(
        Event("verdict", {"round": 1, "rounds": 3, "state": "not_yet", "reason": "缺测试\n证据",
                          "failed": ["测试通过", "没动别的文件"]}),
        Event("verdict", {"round": 2, "rounds": 3, "state": "achieved", "reason": "",
                          "failed": []}),
        Event("verdict", {"round": 3, "rounds": 3, "state": "unreachable", "reason": "要 macOS"}),
        Event("verdict", {"state": "odd"}),
    )  # fmt: skip
    assert text.splitlines() == [
        "~ verdict (round 1/3): not yet - 缺测试 证据",
        "    - 测试通过",
        "    - 没动别的文件",
        "* verdict (round 2/3): achieved",
        "! verdict (round 3/3): unreachable - 要 macOS",
        "~ verdict (round ?/?): unclear",
    ]


def test_a_woken_run_counts_its_rounds_on_and_says_how_many_are_this_process() -> None:
    text = show(
        Event("verdict", {"round": 4, "rounds": 3, "earlier": 3, "state": "achieved"}),
        Event("verdict", {"round": 2, "rounds": 3, "earlier": 0, "state": "achieved"}),
    )
    assert text.splitlines() == [
        "* verdict (round 4, 1/3 this time): achieved",
        "* verdict (round 2/3): achieved",
    ]


def test_every_way_a_question_settles_has_its_own_line() -> None:
    def settled(state: str, **extra: Any) -> Event:
        return Event("ask", {"id": state, "state": state, "question": "LF?", **extra})

    text = show(
        Event("ask", {"id": "q", "state": "asked", "question": "换行?", "options": ["LF"]}),
        Event("ask", {"id": "q", "state": "answered", "question": "换行?", "answer": "LF"}),
        settled("timeout"), settled("declined"), settled("over_budget"),
        settled("cancelled"), settled("invalid"),
    )  # fmt: skip
    assert text.splitlines() == [
        "? 换行?",
        "    1) LF",
        "  -> LF",  # asked before: the question is not repeated
        "? LF?", "  -> no answer, the agent decides",  # settled at once: shown with it
        "? LF?", "  -> declined; the agent decides",
        "? LF?", "  -> no questions left; the agent decides",
        "? LF?", "  -> question withdrawn",
        "! the agent asked an empty question",
    ]  # fmt: skip


def test_a_pause_and_going_on_with_no_words_show_no_empty_words() -> None:
    """Ctrl-C while a session runs: the pause's own event (no words yet) adds nothing to
    the prompt asking for them, nor does Enter with no words (the input line echoes it)."""

    def shown(payload: dict[str, Any]) -> str:
        out = io.StringIO()
        Renderer(Terminal(out))(Event("interrupt", payload, step="干活"))
        return out.getvalue()

    assert shown({"said": None, "session_id": "s", "paused": True}) == ""
    assert shown({"said": "", "session_id": "s"}) == ""
    assert "told the agent: use tabs" in shown({"said": "use tabs", "session_id": "s"})
