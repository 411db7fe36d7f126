"""The server over a hub with a real HumanChannel, through Starlette's test client: the
token, the same-origin rule, answers and inbox lines, the stream's replay, escaping."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from flower import HumanChannel
from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.hub import Hub, Where  # noqa: E402
from flower_plugin_web.page import render_markdown  # noqa: E402
from flower_plugin_web.server import create_app  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

ORIGIN = {"Origin": "http://testserver"}


def hub_with_question(tmp_path: Path) -> tuple[Hub, HumanChannel, threading.Thread]:
    import asyncio

    hub = Hub(enabled=True)
    wb = tmp_path / ".flower"
    (wb / "notes").mkdir(parents=True)
    hub.where = Where(workspace=tmp_path, run_dir=tmp_path / "runs", workbench=wb)
    channel = HumanChannel(amend_path=wb / "notes" / "需求.md", timeout_s=10)
    channel.on_event = lambda e: hub.publish(e.kind, e.payload, e.step, e.at)
    hub.channel = channel
    asked = threading.Thread(
        target=lambda: asyncio.run(channel.ask("LF or CRLF?", ["LF", "CRLF"])), daemon=True
    )
    asked.start()
    while not channel.pending():
        asked.join(0.01)
    return hub, channel, asked


def test_loopback_needs_no_token_but_every_change_needs_the_pages_origin(tmp_path: Path) -> None:
    hub, channel, asked = hub_with_question(tmp_path)
    client = TestClient(create_app(hub, token=None))
    assert client.get("/").status_code == 200
    (pending,) = client.get("/state").json()["pending"]
    refused = client.post("/answer", json={"id": pending["id"], "answer": "LF"})
    assert refused.status_code == 403 and channel.pending()  # no Origin: refused
    elsewhere = client.post(
        "/answer",
        json={"id": pending["id"], "answer": "LF"},
        headers={"Origin": "http://evil.example"},
    )
    assert elsewhere.status_code == 403 and channel.pending()
    done = client.post("/answer", json={"id": pending["id"], "answer": "LF"}, headers=ORIGIN)
    assert done.json() == {"ok": True, "settled": False}
    again = client.post("/answer", json={"id": pending["id"], "answer": "CRLF"}, headers=ORIGIN)
    assert again.json() == {"ok": False, "settled": True}  # the first answer won
    asked.join(5)
    assert channel.asks[0].answer == "LF"


def test_a_token_guards_every_request_and_becomes_a_strict_cookie(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    client = TestClient(create_app(hub, token="s3cret"))
    for path in ("/", "/state", "/page.js", "/doc/brief", "/runs"):
        assert client.get(path).status_code == 401, path
    assert client.post("/inbox", json={"text": "hi"}, headers=ORIGIN).status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    page = client.get("/?token=s3cret")
    assert page.status_code == 200
    cookie = page.headers["set-cookie"]
    assert "flower_token=s3cret" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert client.get("/state").status_code == 200  # the cookie carries it now
    sent = client.post("/inbox", json={"text": "also add a README"}, headers=ORIGIN)
    assert sent.json() == {"ok": True}
    brief = (tmp_path / ".flower" / "notes" / "需求.md").read_text(encoding="utf-8")
    assert "also add a README" in brief  # as typed in the terminal: appended to the brief
    stale = TestClient(create_app(hub, token="s3cret"), cookies={"flower_token": "old-run"})
    assert stale.get("/state").status_code == 401
    fresh = stale.get("/?token=s3cret")  # an earlier run's cookie must not shadow the URL
    assert fresh.status_code == 200 and "flower_token=s3cret" in fresh.headers["set-cookie"]
    header_only = TestClient(create_app(hub, token="s3cret"))
    assert header_only.get("/state", headers={"X-Flower-Token": "s3cret"}).status_code == 200


def test_the_stream_replays_what_a_page_missed(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    for n in range(5):
        hub.publish("text", {"text": f"line {n}"}, "干活")
    client = TestClient(create_app(hub, token=None))

    def first(after: int) -> dict[str, object]:
        with client.stream("GET", "/events", headers={"Last-Event-ID": str(after)}) as r:
            for raw in r.iter_lines():
                if raw.startswith("data: "):
                    return json.loads(raw[len("data: ") :])
        raise AssertionError("no event")

    assert first(0)["payload"] == {"text": "line 0"}
    assert first(3) == {**first(3), "id": 4, "kind": "text", "step": "干活"}


def test_documents_render_markdown_with_raw_html_as_text(tmp_path: Path) -> None:
    rendered = render_markdown("# 目标\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))")
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered
    assert 'href="javascript:' not in rendered  # shown as text, never a link
    hub, _, _ = hub_with_question(tmp_path)
    goal = tmp_path / ".flower" / "notes" / "目标.md"
    goal.write_text("## 判定清单\n- <b>x</b>", encoding="utf-8")
    shown = TestClient(create_app(hub, token=None)).get("/doc/goal").text
    assert "&lt;b&gt;x&lt;/b&gt;" in shown and "<h2>" in shown
    assert TestClient(create_app(hub, token=None)).get("/doc/../../etc/passwd").status_code == 404


def test_the_page_allows_no_inline_script(tmp_path: Path) -> None:
    page = TestClient(create_app(Hub(enabled=True), token=None)).get("/")
    policy = page.headers["content-security-policy"]
    scripts = policy.split("script-src")[1].split(";")[0]
    assert scripts.strip() == "'self'"  # no inline script, no eval
    assert '<script src="/page.js"></script>' in page.text
    script = TestClient(create_app(Hub(enabled=True), token=None)).get("/page.js").text
    # only the server-rendered documents go in as HTML; everything else is textContent
    assert "innerHTML" not in script.replace('$("doc").innerHTML', "")


def test_plain_flower_is_untouched_with_the_plugin_installed() -> None:
    from flower_plugin_web import plugin
    from flower_plugin_web.hub import HUB

    assert not HUB.enabled
    built = plugin.flower_human_channel(log_path=None, amend_path=None, max_asks=None, timeout_s=1)
    assert built is None
    before = HUB.next_id
    plugin.flower_event(type("E", (), {"kind": "text", "payload": {}, "step": None, "at": 0.0})())
    assert HUB.next_id == before  # nothing kept, nothing served


def test_stopping_ends_open_streams_at_once_and_quietly(
    capfd: pytest.CaptureFixture[str],
) -> None:
    import http.client
    import time

    from flower_plugin_web.server import serve

    hub = Hub(enabled=True)
    running = serve("127.0.0.1", 0, token=None, hub=hub)
    host, port = running.url.split("//")[1].split(":")
    ended = threading.Event()

    def page() -> None:
        conn = http.client.HTTPConnection(host, int(port))
        conn.request("GET", "/events")
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
    client = TestClient(create_app(hub, token=None))
    assert client.get("/runs").json() == []  # nothing has finished yet
    (tmp_path / "runs").mkdir()
    rows = [
        {"step": "确认需求", "ok": True, "cost_usd": 0.05, "run": "r1", "text": "long"},
        {"step": "干活", "ok": False, "cost_usd": 0.5, "run": "r2", "error": "stopped"},
    ]
    (tmp_path / "runs" / "manifest.json").write_text(json.dumps(rows), encoding="utf-8")
    shown = client.get("/runs").json()
    assert [(r["step"], r["ok"], r["run"]) for r in shown] == [
        ("确认需求", True, "r1"),
        ("干活", False, "r2"),
    ]
    assert "text" not in shown[0] and shown[1]["error"] == "stopped"
    (tmp_path / "runs" / "manifest.json").write_text("{not json", encoding="utf-8")
    assert client.get("/runs").json() == []


def test_flower_lists_the_plugin_with_its_hooks_and_its_command() -> None:
    from click.testing import CliRunner

    from flower.cli import main

    listed = CliRunner().invoke(main, ["plugins", "list", "--json"])
    (row,) = [r for r in json.loads(listed.output) if r["name"] == "flower-plugin-web"]
    assert row["status"] == "ok" and row["default"] is False
    assert row["hooks"] == ["flower_cli_commands", "flower_event", "flower_human_channel"]
    shown = CliRunner().invoke(main, ["web", "--help"])
    assert shown.exit_code == 0 and "--host" in shown.output and "--rounds" in shown.output


def test_a_port_in_use_is_one_line_and_exit_2(workspace: Path) -> None:
    import socket

    from click.testing import CliRunner

    from flower.cli import main

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        result = CliRunner().invoke(main, ["web", "-w", str(workspace), "--port", str(port), "x"])
    finally:
        taken.close()
    assert result.exit_code == 2
    assert f"the page cannot listen on 127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output and not (workspace / "runs").exists()
    from flower_plugin_web.hub import HUB

    assert not HUB.enabled  # the hooks stay off: plain flower in this process is untouched


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/answer", {"id": "q1", "answer": "LF"}),
        ("/inbox", {"text": "hi"}),
        ("/aside", {"question": "?"}),
    ],
)
def test_every_change_needs_the_pages_origin(
    tmp_path: Path, path: str, body: dict[str, str]
) -> None:
    hub, channel, _ = hub_with_question(tmp_path)
    client = TestClient(create_app(hub, token=None))
    refused = client.post(path, json=body, headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403 and refused.json() == {
        "error": "cross-origin request refused"
    }
    assert channel.pending() and not channel.mail  # nothing happened
    if path == "/aside":
        hub.where = None  # past the origin check it would start an oracle: refuse it after
    via_referer = client.post(path, json=body, headers={"Referer": "http://testserver/"})
    assert via_referer.status_code == (400 if path == "/aside" else 200)  # the Referer decides


def test_bad_requests_get_a_clear_refusal_and_change_nothing(tmp_path: Path) -> None:
    hub, channel, asked = hub_with_question(tmp_path)
    client = TestClient(create_app(hub, token=None))

    def post(path: str, body: object) -> tuple[int, dict[str, object]]:
        r = client.post(path, json=body, headers=ORIGIN)
        return r.status_code, r.json()

    assert post("/answer", {"answer": "LF"}) == (404, {"ok": False, "error": "no such question"})
    assert post("/answer", {"id": "q1", "answer": "  "}) == (
        400, {"ok": False, "error": "an empty answer: use decline"}
    )  # fmt: skip
    assert post("/inbox", {"text": " "}) == (400, {"ok": False, "error": "nothing to send"})
    assert post("/aside", {"question": ""}) == (400, {"ok": False, "error": "ask something"})
    assert post("/inbox", ["not", "an", "object"])[0] == 400
    assert channel.pending() and not channel.mail
    assert post("/answer", {"id": "q1", "decline": True}) == (200, {"ok": True, "settled": False})
    asked.join(5)
    assert channel.asks[0].state == "declined"  # skip: the agent decides
    hub.channel = None
    assert post("/answer", {"id": "q1", "answer": "LF"})[0] == 404
    assert post("/inbox", {"text": "hi"})[0] == 400


def test_state_says_what_is_waiting_and_where_the_stream_is(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    state = TestClient(create_app(hub, token=None)).get("/state").json()
    assert [a["question"] for a in state["pending"]] == ["LF or CRLF?"]
    assert state["workspace"] == str(tmp_path) and state["last_id"] == hub.next_id - 1 >= 1
    empty = TestClient(create_app(Hub(enabled=True), token=None)).get("/state").json()
    assert empty == {"pending": [], "workspace": "", "last_id": 0}


def test_a_garbled_last_event_id_replays_everything(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    hub.publish("text", {"text": "first"})
    client = TestClient(create_app(hub, token=None))
    for given in ("garbage", "-5"):
        with client.stream("GET", "/events", headers={"Last-Event-ID": given}) as r:
            line = next(raw for raw in r.iter_lines() if raw.startswith("data: "))
        assert json.loads(line[len("data: ") :])["id"] == 1, given


def test_documents_the_newest_handoff_and_an_unreadable_file(tmp_path: Path) -> None:
    import os

    hub, _, _ = hub_with_question(tmp_path)
    notes = tmp_path / ".flower" / "notes"
    client = TestClient(create_app(hub, token=None))
    assert "no such document yet" in client.get("/doc/handoff").text
    (notes / "交接-干活.md").write_text("# old", encoding="utf-8")
    (notes / "交接-复核.md").write_text("# newest", encoding="utf-8")
    os.utime(notes / "交接-干活.md", (1, 1))
    assert "newest" in client.get("/doc/handoff").text
    (notes / "判定记录.md").write_bytes(b"\xff\xfe")
    assert "not readable yet" in client.get("/doc/ledger").text
    assert "no such document" in client.get("/doc/secrets").text
