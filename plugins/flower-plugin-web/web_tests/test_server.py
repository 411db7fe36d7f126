"""The server over a hub with a real HumanChannel, through Starlette's test client: the
token, the same-origin rule, answers and inbox lines, the stream's replay, escaping."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.hub import TEXT, Hub  # noqa: E402
from flower_plugin_web.render import render_markdown  # noqa: E402
from flower_plugin_web.words import LINE  # noqa: E402

from .pages import OWN, TOKEN, client, hub_with_question, served  # noqa: E402

WITH_TOKEN = {"X-Flower-Token": TOKEN}
NO_TOKEN = "this page needs its token: open the URL flower web printed"


def test_every_request_needs_the_token_loopback_included(tmp_path: Path) -> None:
    hub, channel, _ = hub_with_question(tmp_path)
    page = client(hub)
    for path in ("/state", "/doc/brief", "/runs", "/events"):
        refused = page.get(path)
        assert refused.status_code == 401, path
        assert refused.json() == {"ok": False, "error": NO_TOKEN}
    for path in ("/answer", "/inbox", "/aside"):
        assert page.post(path, json={}, headers={"Origin": "http://testserver"}).status_code == 401
    assert page.get("/state", headers={"X-Flower-Token": "wrong"}).status_code == 401
    assert page.get("/state", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    # the shell and its script hold nothing of the run: served without the token
    shell = page.get("/")
    assert shell.status_code == 200 and str(tmp_path) not in shell.text
    assert "set-cookie" not in shell.headers  # never a cookie: it would ignore the port
    assert page.get("/page.js").status_code == 200
    assert channel.pending() and not channel.mail


def test_answers_need_the_pages_origin_and_the_first_answer_wins(tmp_path: Path) -> None:
    hub, channel, asked = hub_with_question(tmp_path)
    page = client(hub, headers=WITH_TOKEN)
    (pending,) = page.get("/state").json()["pending"]
    assert pending["id"] == f"{hub.segment}-q1"  # the page's id carries the run's segment
    body = {"id": pending["id"], "answer": "LF"}
    assert page.post("/answer", json=body).status_code == 403  # no Origin
    elsewhere = page.post("/answer", json=body, headers={"Origin": "http://evil.example"})
    assert elsewhere.status_code == 403 and channel.pending()
    done = page.post("/answer", json=body, headers=OWN)
    assert done.status_code == 200 and done.json() == {"ok": True}
    again = page.post("/answer", json={**body, "answer": "CRLF"}, headers=OWN)
    assert again.status_code == 409 and again.json()["settled"] is True  # the first answer won
    assert "settled already (answered)" in again.json()["error"]
    asked.join(5)
    assert channel.asks[0].answer == "LF"


def test_an_id_from_another_run_or_no_run_is_never_applied(tmp_path: Path) -> None:
    hub, channel, _ = hub_with_question(tmp_path)
    page = client(hub, headers=OWN)
    stale = page.post("/answer", json={"id": "0badc0de-q1", "answer": "yes"})  # run A's q1
    assert stale.status_code == 409
    assert stale.json() == {
        "ok": False,
        "error": "this question is from another run (the page is stale): reload the page",
    }
    for unknown in (f"{hub.segment}-q7", "q1", f"{hub.segment}-", 17):
        refused = page.post("/answer", json={"id": unknown, "answer": "yes"})
        assert refused.status_code == 404, unknown
        assert refused.json() == {"ok": False, "error": "no such question"}  # not "settled"
    assert [a.id for a in channel.pending()] == ["q1"] and channel.asks[0].answer == ""


def test_the_stream_replays_what_a_page_missed(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    for n in range(5):
        hub.publish("text", {"text": f"line {n}"}, "干活")
    page = client(hub, headers=WITH_TOKEN)

    def opening(last: str | None) -> tuple[dict[str, object], dict[str, object]]:
        headers = {"Last-Event-ID": last} if last else {}
        with page.stream("GET", "/events", headers=headers) as r:
            data = (json.loads(x[6:]) for x in r.iter_lines() if x.startswith("data: "))
            return next(data), next(data)

    hello, first = opening(None)
    assert hello == {"segment": hub.segment, "reset": False}
    assert first["payload"] == {"text": "line 0"} and first["id"] == f"{hub.segment}-1"
    hello, fourth = opening(f"{hub.segment}-3")
    assert hello["reset"] is False
    assert fourth == {**fourth, "id": f"{hub.segment}-4", "kind": "text", "step": "干活"}
    # another process's id: a fresh copy from the start, flagged, never a mix
    for foreign in ("0badc0de-3", "garbage", "-5", f"{hub.segment}-99"):
        hello, first = opening(foreign)
        assert hello["reset"] is True and first["id"] == f"{hub.segment}-1", foreign


def test_a_huge_event_reaches_the_page_cut_and_the_run_keeps_it_whole() -> None:
    hub = Hub(enabled=True)
    hub.publish("text", {"text": "x" * 1_000_000, "step": "干活"})
    page = client(hub, headers=WITH_TOKEN)
    with page.stream("GET", "/events") as r:
        lines = (x for x in r.iter_lines() if x.startswith("data: "))
        next(lines)
        raw = next(lines)
    # the raw payload cut, and the terminal's words for it (made from the cut copy) bounded
    assert len(raw) < TEXT + LINE + 2_000 and "cut: 1000000 characters in all" in raw
    sent = json.loads(raw[6:])
    assert sent["payload"]["step"] == "干活"
    ((said, _, _),) = sent["lines"]
    assert said.startswith("xxx") and said.endswith("… (cut: the raw payload has more)")
    assert len(hub.recent()[0].payload["text"]) == 1_000_000  # the side questions see it all


def test_a_page_a_ring_behind_starts_over(tmp_path: Path) -> None:
    hub = Hub(enabled=True, keep=10)
    for n in range(25):
        hub.publish("text", {"n": n})
    page = client(hub, headers=WITH_TOKEN)
    with page.stream("GET", "/events", headers={"Last-Event-ID": f"{hub.segment}-3"}) as r:
        data = (json.loads(x[6:]) for x in r.iter_lines() if x.startswith("data: "))
        hello, first = next(data), next(data)
    assert hello["reset"] is True and first["id"] == f"{hub.segment}-16"  # the oldest kept


def test_documents_render_markdown_with_raw_html_as_text(tmp_path: Path) -> None:
    rendered = render_markdown("# 目标\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))")
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered
    assert 'href="javascript:' not in rendered  # shown as text, never a link
    hub, _, _ = hub_with_question(tmp_path)
    goal = tmp_path / ".flower" / "notes" / "目标.md"
    goal.write_text("## 判定清单\n- <b>x</b>", encoding="utf-8")
    page = client(hub, headers=WITH_TOKEN)
    shown = page.get("/doc/goal").text
    assert "&lt;b&gt;x&lt;/b&gt;" in shown and "<h2>" in shown
    assert page.get("/doc/../../etc/passwd").status_code == 404


def test_documents_load_nothing_and_mark_what_leads_away() -> None:
    shown = render_markdown(
        "![chart](http://tracker.example/pixel.png?who=me) ![local](diagram.png)\n\n"
        "[the docs](https://docs.example/page) [a file](../secrets.md) <http://auto.example/x>"
    )
    assert "<img" not in shown  # nothing loads by itself
    assert "[image: chart — http://tracker.example/pixel.png?who=me, not loaded]" in shown
    assert "[image: local — diagram.png, not loaded]" in shown
    assert shown.count('rel="noopener noreferrer nofollow"') == 2
    assert shown.count('target="_blank"') == 2
    assert "↗ external: docs.example" in shown and "↗ external: auto.example" in shown
    assert 'href="../secrets.md"' not in shown and "(../secrets.md)" in shown  # text, not a link


def test_the_page_allows_no_inline_script(tmp_path: Path) -> None:
    page = client(Hub(enabled=True)).get("/")
    policy = page.headers["content-security-policy"]
    scripts = policy.split("script-src")[1].split(";")[0]
    assert scripts.strip() == "'self'"  # no inline script, no eval
    assert '<script src="/page.js"></script>' in page.text
    script = client(Hub(enabled=True)).get("/page.js").text
    # only the server-rendered documents go in as HTML; everything else is textContent
    assert "innerHTML" not in script.replace('$("doc").innerHTML', "")
    assert "cookie" not in script.lower()


def test_plain_flower_is_untouched_with_the_plugin_installed() -> None:
    from flower_plugin_web import plugin
    from flower_plugin_web.hub import HUB

    assert not HUB.enabled
    built = plugin.flower_human_channel(log_path=None, amend_path=None, max_asks=None, timeout_s=1)
    assert built is None
    before = HUB.last
    plugin.flower_event(type("E", (), {"kind": "text", "payload": {}, "step": None, "at": 0.0})())
    assert HUB.last == before  # nothing kept, nothing served


def test_stopping_ends_open_streams_at_once_and_quietly(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import http.client
    import time

    hub = Hub(enabled=True)
    ended = threading.Event()
    with served(hub) as running:
        host, port = running.url.split("//")[1].split(":")

        def page() -> None:
            conn = http.client.HTTPConnection(host, int(port))
            conn.request("GET", "/events", headers=WITH_TOKEN)
            for _ in conn.getresponse():
                pass
            ended.set()

        threading.Thread(target=page, daemon=True).start()
        hub.publish("text", {"text": "hi"})
        time.sleep(0.3)
        started = time.monotonic()
        running.stop()
        assert time.monotonic() - started < 3 and not running.thread.is_alive()
        assert ended.wait(3)  # the page saw its stream end, not a reset
    assert "Exception" not in capfd.readouterr().err


def test_past_steps_come_from_the_manifest(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    page = client(hub, headers=WITH_TOKEN)
    assert page.get("/runs").json() == []  # nothing has finished yet
    (tmp_path / "runs").mkdir()
    rows = [
        {"step": "确认需求", "ok": True, "cost_usd": 0.05, "run": "r1", "text": "long"},
        {"step": "干活", "ok": False, "cost_usd": 0.5, "run": "r2", "error": "stopped"},
    ]
    (tmp_path / "runs" / "manifest.json").write_text(json.dumps(rows), encoding="utf-8")
    shown = page.get("/runs").json()
    assert [(r["step"], r["ok"], r["run"]) for r in shown] == [
        ("确认需求", True, "r1"),
        ("干活", False, "r2"),
    ]
    assert "text" not in shown[0] and shown[1]["error"] == "stopped"
    (tmp_path / "runs" / "manifest.json").write_text("{not json", encoding="utf-8")
    assert page.get("/runs").json() == []


def test_flower_lists_the_plugin_with_its_hooks_and_its_command() -> None:
    from click.testing import CliRunner

    from flower.cli import main

    listed = CliRunner().invoke(main, ["plugins", "list", "--json"])
    (row,) = [r for r in json.loads(listed.output) if r["name"] == "flower-plugin-web"]
    assert row["status"] == "ok" and row["default"] is False
    assert row["hooks"] == ["flower_cli_commands", "flower_event", "flower_human_channel"]
    shown = CliRunner().invoke(main, ["web", "--help"])
    assert shown.exit_code == 0 and "--host" in shown.output and "--rounds" in shown.output
    assert "--allow-host" in shown.output


def test_a_port_in_use_is_one_line_and_exit_2(workspace: Path) -> None:
    import socket

    from click.testing import CliRunner

    from flower.cli import main

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        args = ["web", "-w", str(workspace), "--host", "127.0.0.1", "--port", str(port), "x"]
        result = CliRunner().invoke(main, args)
    finally:
        taken.close()
    assert result.exit_code == 2
    assert f"the page cannot listen on 127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output and not (workspace / "runs").exists()
    from flower_plugin_web.hub import HUB

    assert not HUB.enabled  # the hooks stay off: plain flower in this process is untouched


@pytest.mark.parametrize(
    ("path", "body"),
    [("/answer", {"answer": "LF"}), ("/inbox", {"text": "hi"}), ("/aside", {"question": "?"})],
)
def test_every_change_needs_the_pages_origin(
    tmp_path: Path, path: str, body: dict[str, str]
) -> None:
    hub, channel, _ = hub_with_question(tmp_path)
    body = {**body, "id": f"{hub.segment}-q1"}
    page = client(hub, headers=WITH_TOKEN)
    for origin in ("http://evil.example", "null", "http://testserver:8080", "https://testserver"):
        refused = page.post(path, json=body, headers={"Origin": origin})
        assert refused.status_code == 403, origin
        assert refused.json() == {"ok": False, "error": "cross-origin request refused"}
    assert page.post(path, json=body).status_code == 403  # no Origin nor Referer
    assert channel.pending() and not channel.mail  # nothing happened
    if path == "/aside":
        hub.where = None  # past the origin check it would start an oracle: refuse it after
    via_referer = page.post(path, json=body, headers={"Referer": "http://testserver/"})
    assert via_referer.status_code == (409 if path == "/aside" else 200)  # the Referer decides


def test_bad_requests_get_a_clear_refusal_and_change_nothing(tmp_path: Path) -> None:
    hub, channel, asked = hub_with_question(tmp_path)
    page = client(hub, headers=OWN)
    q1 = f"{hub.segment}-q1"

    def post(path: str, body: object) -> tuple[int, dict[str, object]]:
        r = page.post(path, json=body)
        return r.status_code, r.json()

    assert post("/answer", {"answer": "LF"}) == (404, {"ok": False, "error": "no such question"})
    assert post("/answer", {"id": q1, "answer": "  "}) == (
        400, {"ok": False, "error": "an empty answer: use decline"}
    )  # fmt: skip
    assert post("/inbox", {"text": " "}) == (400, {"ok": False, "error": "nothing to send"})
    assert post("/aside", {"question": ""}) == (400, {"ok": False, "error": "ask something"})
    assert post("/inbox", ["not", "an", "object"]) == (
        400, {"ok": False, "error": "send one JSON object of plain values"}
    )  # fmt: skip
    assert channel.pending() and not channel.mail
    assert post("/answer", {"id": q1, "decline": True}) == (200, {"ok": True})
    asked.join(5)
    assert channel.asks[0].state == "declined"  # skip: the agent decides
    hub.channel = None
    assert post("/answer", {"id": q1, "answer": "LF"})[0] == 404
    assert post("/inbox", {"text": "hi"}) == (
        409,
        {"ok": False, "error": "no run is listening yet"},
    )


def test_state_says_what_is_waiting_and_where_the_stream_is(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    state = client(hub, headers=WITH_TOKEN).get("/state").json()
    assert [a["question"] for a in state["pending"]] == ["LF or CRLF?"]
    assert state["workspace"] == str(tmp_path) and state["segment"] == hub.segment
    assert state["last_id"] == f"{hub.segment}-{hub.last}" and hub.last >= 1
    empty = Hub(enabled=True)
    shown = client(empty, headers=WITH_TOKEN).get("/state").json()
    assert shown == {
        "segment": empty.segment, "pending": [], "workspace": "", "last_id": "", "over": None,
        "simulated": False, "checkpoints": None,
    }  # fmt: skip


def test_documents_the_newest_handoff_and_an_unreadable_file(tmp_path: Path) -> None:
    import os

    hub, _, _ = hub_with_question(tmp_path)
    notes = tmp_path / ".flower" / "notes"
    page = client(hub, headers=WITH_TOKEN)
    assert "no such document yet" in page.get("/doc/handoff").text
    (notes / "交接-干活.md").write_text("# old", encoding="utf-8")
    (notes / "交接-复核.md").write_text("# newest", encoding="utf-8")
    os.utime(notes / "交接-干活.md", (1, 1))
    assert "newest" in page.get("/doc/handoff").text
    (notes / "判定记录.md").write_bytes(b"\xff\xfe")
    assert "not readable yet" in page.get("/doc/ledger").text
    missing = page.get("/doc/secrets")
    assert missing.status_code == 404 and "no such document" in missing.text


def test_a_question_a_dead_run_left_is_shown_and_answered_for_the_step_that_asked(
    tmp_path: Path,
) -> None:
    """flower.records.pending keeps what a killed run was waiting on; the page lists it beside
    the live question, marked, and its answer is kept for the step that asked."""
    import subprocess
    import sys

    from flower.records.pending import PENDING_NAME, stale_asks, take_answers

    hub, channel, asked = hub_with_question(tmp_path)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left = {"pid": gone.pid, "asks": [{"id": "q1", "question": "Which port?",
            "options": ["80", "8080"], "step": "干活"}]}  # fmt: skip
    (tmp_path / "runs").mkdir(exist_ok=True)
    (tmp_path / "runs" / PENDING_NAME).write_text(json.dumps(left))
    page = client(hub, headers=WITH_TOKEN)
    live, stale = page.get("/state").json()["pending"]
    assert live["id"] == f"{hub.segment}-q1" and live["question"] == "LF or CRLF?"
    assert stale == {"id": f"{hub.segment}-stale:q1", "question": "Which port?",
                     "options": ["80", "8080"], "state": "asked", "step": "干活",
                     "stale": True}  # fmt: skip
    other_run = page.post("/answer", json={"id": "0badc0de-stale:q1", "answer": "80"}, headers=OWN)
    assert other_run.status_code == 409
    done = page.post("/answer", json={"id": stale["id"], "answer": "8080"}, headers=OWN)
    assert done.status_code == 200 and done.json() == {"ok": True}
    assert channel.pending()  # the live question is another one: still waiting
    again = page.post("/answer", json={"id": stale["id"], "answer": "80"}, headers=OWN)
    assert again.status_code == 404  # answered once (here or in the terminal)
    assert [a["id"] for a in page.get("/state").json()["pending"]] == [live["id"]]
    assert stale_asks(tmp_path / "runs")[0]["answer"] == "8080"
    assert "人现在的回答:8080" in take_answers(tmp_path / "runs", "干活")
    channel.answer("q1", "LF")
    asked.join(5)
