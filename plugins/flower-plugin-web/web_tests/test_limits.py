"""What the page accepts, against the real server: bodies too large or too deep, the wrong
content type, lines too long, too many changes, side questions one at a time per page
and a few in all. Each refusal is a JSON error with its status and one line to show;
nothing reaches the brief; nothing prints a traceback on the run's terminal."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

import httpx  # noqa: E402 - a test extra, like the plugin: after the check
from flower_plugin_web.hub import Hub  # noqa: E402
from flower_plugin_web.limits import Limits  # noqa: E402
from flower_plugin_web.server import Running  # noqa: E402

from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402


@pytest.fixture
def page(tmp_path: Path) -> Iterator[tuple[Running, Hub, Any, httpx.Client]]:
    hub, channel, _ = hub_with_question(tmp_path)
    with served(hub) as running:
        port = port_of(running)
        own = {"X-Flower-Token": TOKEN, "Origin": f"http://127.0.0.1:{port}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=own, timeout=20) as c:
            yield running, hub, channel, c


def brief(hub: Hub) -> str:
    assert hub.where is not None
    path = hub.where.workbench / "notes" / "需求.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_oversized_deep_or_mistyped_bodies_are_refused_quietly(
    page: tuple[Running, Hub, Any, httpx.Client], capfd: pytest.CaptureFixture[str]
) -> None:
    _, hub, channel, client = page
    json_type = {"Content-Type": "application/json"}
    text, form = (
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    huge = json.dumps({"text": "x" * 30_000_000}).encode()  # the 30 MB inbox line
    deep = b"[" * 7000 + b"]" * 7000  # within the size limit, far past any sane depth
    deep_object = b'{"id": ' * 1500 + b"1" + b"}" * 1500
    too_large = "the request is too large (at most 16384 bytes)"
    not_json, not_flat = "the request is not valid JSON", "send one JSON object of plain values"
    send_json = "send JSON (Content-Type: application/json)"
    cases: list[tuple[str, bytes, dict[str, str], int, str]] = [
        ("/inbox", huge, json_type, 413, too_large),
        ("/inbox", deep, json_type, 400, not_json),
        ("/answer", deep_object, json_type, 400, not_json),
        ("/inbox", b'{"text": {"nested": ["x"]}}', json_type, 400, not_flat),
        ("/inbox", b"{not json", json_type, 400, not_json),
        ("/inbox", b'{"text": "hi"}', text, 415, send_json),
        ("/inbox", b"text=hi", form, 415, send_json),
        ("/inbox", b'{"text": "hi"}', {}, 415, send_json),
    ]
    for path, body, headers, status, error in cases:
        refused = client.post(path, content=body, headers=headers)
        assert refused.status_code == status, (path, body[:40])
        assert refused.json() == {"ok": False, "error": error}
    # declared small, sent large (chunked): counted as it arrives
    chunks = iter([b'{"text": "', b"y" * 20_000, b'"}'])
    streamed = client.post("/inbox", content=chunks, headers=json_type)
    assert streamed.status_code == 413
    line = client.post("/inbox", json={"text": "z" * 4001})
    assert line.status_code == 413
    assert line.json()["error"] == "the line is too long (4001 characters; at most 4000)"
    answer = client.post("/answer", json={"id": f"{hub.segment}-q1", "answer": "a" * 5000})
    assert answer.status_code == 413 and "the answer is too long" in answer.json()["error"]
    assert channel.pending() and not channel.mail and "x" * 100 not in brief(hub)
    assert client.post("/inbox", json={"text": "y" * 4000}).status_code == 200  # the limit fits
    err = capfd.readouterr().err
    assert "Traceback" not in err and "RecursionError" not in err and len(err) < 2000


def test_changes_are_rate_limited(tmp_path: Path) -> None:
    hub, channel, _ = hub_with_question(tmp_path)
    with served(hub, Limits(posts_burst=5, posts_per_second=0.5)) as running:
        port = port_of(running)
        own = {"X-Flower-Token": TOKEN, "Origin": f"http://127.0.0.1:{port}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=own) as client:
            codes = [client.post("/inbox", json={"text": f"n{n}"}).status_code for n in range(8)]
            refused = client.post("/inbox", json={"text": "more"})
    assert codes == [200] * 5 + [429] * 3
    assert refused.json() == {
        "ok": False,
        "error": "too many changes at once: wait a moment and try again",
    }
    assert len(channel.mail) == 5


def test_side_questions_one_per_page_and_a_few_in_all(
    page: tuple[Running, Hub, Any, httpx.Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve side questions at once once started twelve model processes: now one per
    page is in flight and two in all; the rest are told why."""
    import flower.commands.aside as aside

    started: list[str] = []
    release = asyncio.Event()

    async def slow_oracle(question: str, **_: Any) -> aside.SideAnswer:  # a model process
        started.append(question)
        await release.wait()
        return aside.SideAnswer(f"answer to {question}")

    monkeypatch.setattr(aside, "consult", slow_oracle)
    running, hub, _, client = page
    first = client.post("/aside", json={"question": "q-a1"}, headers={"X-Flower-Page": "a"})
    assert first.json() == {"ok": True}
    again = client.post("/aside", json={"question": "q-a2"}, headers={"X-Flower-Page": "a"})
    assert again.status_code == 429 and again.json()["error"] == (
        "this page's side question is still being answered: wait for it"
    )
    other = client.post("/aside", json={"question": "q-b"}, headers={"X-Flower-Page": "b"})
    assert other.json() == {"ok": True}
    codes = [
        client.post("/aside", json={"question": f"q{n}"}, headers={"X-Flower-Page": f"p{n}"})
        for n in range(10)
    ]
    assert {r.status_code for r in codes} == {429}
    assert codes[0].json()["error"] == "2 side questions are being answered: ask when one is done"
    too_long = client.post("/aside", json={"question": "?" * 2001}, headers={"X-Flower-Page": "c"})
    assert too_long.status_code == 413
    loop = running.server.servers[0].get_loop() if running.server.servers else None
    assert loop is not None
    loop.call_soon_threadsafe(release.set)
    for _ in range(100):
        if len([e for e in hub.recent() if e.kind == "aside" and e.payload["answer"]]) == 2:
            break
        time.sleep(0.05)
    assert sorted(started) == ["q-a1", "q-b"]  # two oracles, never twelve
    after = client.post("/aside", json={"question": "q-a3"}, headers={"X-Flower-Page": "a"})
    assert after.json() == {"ok": True}  # the page's slot is free again
    loop.call_soon_threadsafe(release.set)
