"""``runs/pending.json`` is in the workspace, which the agents (or a cloned repository)
write: the page reads it off its loop, never through a link, never from a FIFO or a
device, at most 1 MB, and keeps only entries of the expected types. Once a FIFO there
froze every route of the page, and a link to ``/dev/zero`` grew the process by 2.2 GB
in 2 s. Against the real server (uvicorn), as the loop is what must not stall."""

from __future__ import annotations

import http.client
import json
import os
import resource
import time
from pathlib import Path

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402

LEFT = {"id": "q7", "question": "Which port?", "options": ["80", "8080"], "step": "干活"}


def get(port: int, path: str, body: dict[str, object] | None = None) -> tuple[int, object]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    headers = {"X-Flower-Token": TOKEN, "Origin": f"http://127.0.0.1:{port}"}
    if body is None:
        conn.request("GET", path, headers=headers)
    else:
        headers["Content-Type"] = "application/json"
        conn.request("POST", path, body=json.dumps(body), headers=headers)
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    return response.status, data


def questions(port: int) -> list[str]:
    status, state = get(port, "/state")
    assert status == 200, state
    assert isinstance(state, dict)
    return [a["question"] for a in state["pending"]]


def release(fifo: Path) -> None:
    """Let go of a reader blocked opening ``fifo`` (the old code's), if any."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_a_fifo_there_stalls_nothing(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    fifo = runs / "pending.json"
    os.mkfifo(fifo)
    with served(hub) as running:
        port = port_of(running)
        try:
            started = time.monotonic()
            assert questions(port) == ["LF or CRLF?"]  # the live one; the FIFO is no file
            assert get(port, "/runs")[0] == 200  # and the other routes answer
            status, said = get(port, "/answer", {"id": f"{hub.segment}-stale:q7", "answer": "80"})
            assert (status, said) == (404, {"ok": False, "error": "no such question"})
            assert time.monotonic() - started < 4
        finally:
            release(fifo)


def test_a_link_there_is_not_followed(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"pid": 0, "asks": [], "stale": [LEFT]}))
    (runs / "pending.json").symlink_to(elsewhere)
    with served(hub) as running:
        port = port_of(running)
        assert questions(port) == ["LF or CRLF?"]
        status, _ = get(port, "/answer", {"id": f"{hub.segment}-stale:q7", "answer": "80"})
        assert status == 404
        assert "answer" not in json.loads(elsewhere.read_text())["stale"][0]  # not written
        (runs / "pending.json").unlink()
        (runs / "pending.json").symlink_to("/dev/zero")
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert questions(port) == ["LF or CRLF?"]
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grew < 100_000  # KiB


def test_what_it_says_is_kept_only_when_it_has_the_expected_types(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    pending = runs / "pending.json"
    odd = [
        {"pid": 0, "asks": [], "stale": "abc"},
        {"pid": 10**30, "asks": [LEFT]},
        {"pid": "0", "asks": [LEFT]},
        {"pid": 0, "asks": {"q": 1}, "stale": None},
        [LEFT],
        "just text",
        {"pid": 0, "asks": [], "stale": [1, "x", None, {"id": {"a": 1}, "question": "?"},
                                         {"id": "q8", "question": ["not", "text"]}]},
    ]  # fmt: skip
    with served(hub) as running:
        port = port_of(running)
        for data in odd:
            pending.write_text(json.dumps(data))
            assert questions(port) == ["LF or CRLF?"], data
        pending.write_bytes(b"{" * 100_000)  # deep, and not JSON
        assert questions(port) == ["LF or CRLF?"]
        pending.write_text(json.dumps({"pid": 0, "asks": [], "stale": [1, LEFT]}))
        assert questions(port) == ["LF or CRLF?", "Which port?"]  # the good one is kept
        pending.write_text(json.dumps({"pid": 0, "stale": [LEFT], "pad": "x" * 2_000_000}))
        assert questions(port) == ["LF or CRLF?"]  # over 1 MB: not read
