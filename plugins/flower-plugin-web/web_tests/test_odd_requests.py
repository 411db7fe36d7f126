"""Requests no browser sends, each with a clean answer: odd ``Last-Event-ID`` values (once
500s), request heads over 16 KiB (once accepted up to about 64 KB when they came in one
read), an answer to a dead run's question after the end (once accepted). Over real
sockets to the real server (uvicorn), as the head's size is a matter of the wire."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from .pages import OWN, TOKEN, client, hub_with_question, port_of, served  # noqa: E402


def exchange(port: int, head: bytes, pieces: int = 1, want: bytes = b"\r\n\r\n") -> bytes:
    """Send ``head`` (in ``pieces``) and read until ``want`` follows the response's head."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        step = len(head) // pieces + 1
        try:
            for at in range(0, len(head), step):
                sock.sendall(head[at : at + step])
        except (BrokenPipeError, ConnectionResetError):  # refused before the end of it
            pass
        data = b""
        while want not in data.partition(b"\r\n\r\n")[2] and len(data) < 100_000:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:  # closed with our head unread: said already
                break
            if not chunk:
                break
            data += chunk
        return data


def request(port: int, path: str, extra: bytes = b"") -> bytes:
    return b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Flower-Token: %s\r\n%s\r\n" % (
        path.encode(),
        port,
        TOKEN.encode(),
        extra,
    )


def test_any_last_event_id_gets_the_stream(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    hub.publish("text", {"text": "hi"})
    seg = hub.segment
    odd = [
        "", " ", "x" * 10_000, f"{seg}-{'9' * 5000}", f"{seg}-²", f"{seg}-٣", f"{seg}--1",
        "-1", f"{seg}-1e5", "ffffffff-1", "garbage", "éè\u202e", f"{seg}-{'9' * 30}",
        f"{seg}-1 {'x' * 100}", f"{seg}-",
    ]  # fmt: skip
    with served(hub) as running:
        port = port_of(running)
        for value in odd:
            header = b"Last-Event-ID: " + value.encode("utf-8") + b"\r\n"
            for sent in (
                request(port, "/events", header),
                request(port, "/events?after=" + quote(value)),
            ):
                said = exchange(port, sent, want=b"event: run")
                assert said.startswith(b"HTTP/1.1 200 "), (value, said[:200])
                hello = said.partition(b"event: run\ndata: ")[2].partition(b"\n")[0]
                assert json.loads(hello)["segment"] == seg, value
        assert b'"reset":false' in exchange(
            port, request(port, "/events", f"Last-Event-ID: {seg}-1\r\n".encode()),
            want=b"event: run",
        )  # fmt: skip


@pytest.mark.parametrize("pieces", [1, 4])
def test_a_request_head_over_16_kib_is_refused(tmp_path: Path, pieces: int) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    with served(hub) as running:
        port = port_of(running)

        def head_of(size: int) -> bytes:
            close = b"Connection: close\r\n"  # the answer's end is the connection's
            pad = b"X-Pad: " + b"a" * (size - len(request(port, "/state", close)) - 9)
            sent = request(port, "/state", close + pad + b"\r\n")
            assert len(sent) == size
            return sent

        assert exchange(port, head_of(16 * 1024), pieces).startswith(b"HTTP/1.1 200 ")
        for size in (16 * 1024 + 1, 30_000, 64_000):
            said = exchange(port, head_of(size), pieces)
            assert said.startswith(b"HTTP/1.1 431 "), (size, said[:200])
            body = json.loads(said.partition(b"\r\n\r\n")[2])
            assert body["error"].startswith("the request's head is too large"), body
        said = exchange(port, head_of(200_000), pieces)  # h11's own limit, still arriving
        assert said == b"" or said.startswith((b"HTTP/1.1 400 ", b"HTTP/1.1 431 ")), said[:200]


def test_a_dead_runs_question_is_not_answered_after_the_end(tmp_path: Path) -> None:
    from flower.records.pending import PENDING_NAME, stale_asks

    hub, channel, asked = hub_with_question(tmp_path)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left = {"pid": gone.pid, "asks": [{"id": "q1", "question": "Which port?",
            "options": ["80", "8080"], "step": "干活"}]}  # fmt: skip
    (tmp_path / "runs").mkdir(exist_ok=True)
    (tmp_path / "runs" / PENDING_NAME).write_text(json.dumps(left))
    page = client(hub, headers={"X-Flower-Token": TOKEN})
    _, stale = page.get("/state").json()["pending"]
    channel.answer("q1", "LF")
    asked.join(5)
    hub.end({"state": "done", "said": "the run finished"})
    late = page.post("/answer", json={"id": stale["id"], "answer": "8080"}, headers=OWN)
    assert late.status_code == 409, late.text
    assert late.json()["error"].startswith("the run is over")
    assert stale_asks(tmp_path / "runs")[0].get("answer") is None  # nothing recorded
