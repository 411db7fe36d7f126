"""The scripted model's own contract, checked over real HTTP (no CLI needed)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from flower.testing import (
    AGENT_HEADER,
    OVERFLOW_MESSAGE,
    Conversation,
    Match,
    ScriptedModel,
    ScriptError,
    Turn,
    bash,
    conversation,
    load_script,
    text,
)


def post(
    model: ScriptedModel, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=5)
    conn.request(
        "POST",
        "/v1/messages?beta=true",
        json.dumps(body),
        {"content-type": "application/json", **(headers or {})},
    )
    response = conn.getresponse()
    data = response.read().decode()
    conn.close()
    return response.status, data


def request(
    *, user: str = "hi", assistants: int = 0, stream: bool = True, system: str = ""
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": user}]}]
    for n in range(assistants):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"a{n}"}]})
        messages.append({"role": "user", "content": "next"})
    return {
        "model": "m",
        "stream": stream,
        "system": [{"type": "text", "text": system}],
        "messages": messages,
    }


def sse_events(data: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in data.splitlines() if line.startswith("data: ")]


@pytest.fixture
def model() -> Any:
    with ScriptedModel() as m:
        yield m


def test_reply_is_chosen_by_the_number_of_assistant_messages(model: ScriptedModel) -> None:
    model.play([conversation("main", text("zero"), text("one"), text("two"))])
    answers = []
    for n in (2, 0, 1, 2):  # out of order: no state between requests
        status, data = post(model, request(assistants=n, stream=False))
        assert status == 200
        answers.append(json.loads(data)["content"][0]["text"])
    assert answers == ["two", "zero", "one", "two"]
    assert [r.turn for r in model.requests] == [2, 0, 1, 2]


def test_tool_use_streams_like_the_real_api(model: ScriptedModel) -> None:
    model.play([conversation("main", bash("ls -la", say="looking"))])
    status, data = post(model, request())
    events = sse_events(data)
    kinds = [e["type"] for e in events]
    assert status == 200
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use"]
    assert starts[1]["id"] == "toolu_main_0_0" and starts[1]["name"] == "Bash"
    partial = "".join(
        e["delta"]["partial_json"]
        for e in events
        if e.get("delta", {}).get("type") == "input_json_delta"
    )
    assert json.loads(partial)["command"] == "ls -la"
    delta = next(e for e in events if e["type"] == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use"


def test_routing_by_first_user_system_and_subagent_header(model: ScriptedModel) -> None:
    model.play(
        [
            conversation("sub", text("from sub"), subagent=True),
            conversation("judge", text("from judge"), system="You are the judge"),
            conversation("task", text("from task"), first_user="build it"),
            conversation("fallback", text("from fallback")),
        ]
    )
    post(model, request(user="x"), {AGENT_HEADER: "agent-1"})
    post(model, request(user="x", system="You are the judge."))
    post(model, request(user="please build it now"))
    post(model, request(user="something else"))
    assert [r.conversation for r in model.requests] == ["sub", "judge", "task", "fallback"]


def test_faults_recover_after_n_attempts_and_usage_is_reported(model: ScriptedModel) -> None:
    model.play(
        [conversation("main", text("ok", faults=(429, 500, 529), usage={"input_tokens": 150_000}))]
    )
    statuses = [post(model, request(stream=False))[0] for _ in range(4)]
    assert statuses == [429, 500, 529, 200]
    assert model.requests[-1].attempt == 4
    assert json.loads(post(model, request(stream=False))[1])["usage"]["input_tokens"] == 150_000


def test_error_bodies_match_the_api(model: ScriptedModel) -> None:
    model.play([conversation("main", text("x", faults=(401, 400, "overflow")))])
    bodies = [post(model, request())[1] for _ in range(3)]
    kinds = [json.loads(b)["error"]["type"] for b in bodies]
    assert kinds == ["authentication_error", "invalid_request_error", "invalid_request_error"]
    assert json.loads(bodies[2])["error"]["message"] == OVERFLOW_MESSAGE


def test_drop_and_cut_break_the_connection(model: ScriptedModel) -> None:
    model.play([conversation("main", text("full answer", faults=("drop", "cut")))])
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        post(model, request())
    try:  # a cut stream delivers a start, then the connection dies before message_stop
        status, data = post(model, request())
        assert "message_stop" not in data
    except (http.client.HTTPException, ConnectionError):
        pass
    status, data = post(model, request())
    assert status == 200 and "message_stop" in data
    assert [r.outcome for r in model.requests] == ["drop", "cut", "reply"]


def test_unscripted_and_unmatched_requests_are_recorded(model: ScriptedModel) -> None:
    model.play([conversation("main", text("only"), first_user="hello")])
    post(model, request(user="hello", assistants=1))
    post(model, request(user="bye"))
    assert [r.outcome for r in model.requests] == ["unscripted", "unmatched"]


def test_stop_and_restart_on_the_same_port(model: ScriptedModel) -> None:
    model.play([conversation("main", text("back"))])
    port = model.port
    model.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    model.restart(after=0.3)
    time.sleep(0.8)
    assert model.port == port and model.running
    assert post(model, request())[0] == 200


def test_delay(model: ScriptedModel) -> None:
    model.play([conversation("main", text("slow", delay=0.4))])
    started = time.monotonic()
    post(model, request())
    assert time.monotonic() - started >= 0.4


def test_script_validation_names_the_bad_part(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="unknown fault"):
        Turn(text="x", faults=(700,))
    with pytest.raises(ScriptError, match="needs text"):
        Turn()
    with pytest.raises(ScriptError, match="repeated: a"):
        load_script([Conversation("a", (text("x"),)), Conversation("a", (text("y"),))])
    with pytest.raises(ScriptError, match=r"conversations\[0\].turns\[1\]: unknown keys \['txt'\]"):
        load_script({"conversations": [{"name": "m", "turns": [{"text": "x"}, {"txt": "y"}]}]})
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ScriptError, match="not valid JSON"):
        load_script(bad)
    with pytest.raises(ScriptError, match="not found"):
        load_script(tmp_path / "missing.json")


def test_json_script_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "conversations": [
                    {
                        "name": "main",
                        "match": {"first_user": "go", "subagent": False},
                        "turns": [
                            {
                                "tool_use": {"name": "Bash", "input": {"command": "ls"}},
                                "faults": [529],
                            },
                            {"text": "done", "usage": {"input_tokens": 5}},
                        ],
                    }
                ]
            }
        )
    )
    script = load_script(path)
    conv = script.conversations[0]
    assert conv.match == Match(first_user="go", subagent=False)
    assert conv.turns[0].tools[0].input == {"command": "ls"} and conv.turns[0].faults == (529,)
    assert conv.turns[1].usage == {"input_tokens": 5}


def test_standalone_server_serves_a_json_script(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps({"conversations": [{"name": "main", "turns": [{"text": "standalone ok"}]}]})
    )
    record = tmp_path / "requests.jsonl"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flower.testing",
            "serve",
            str(script),
            "--port",
            str(port),
            "--record",
            str(record),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, (
                    proc.stderr.read() if proc.poll() is not None else "no server"
                )
                time.sleep(0.1)
        fake = ScriptedModel(port=port)  # only used for its port in post()
        status, data = post(fake, request(stream=False))
        assert status == 200 and json.loads(data)["content"][0]["text"] == "standalone ok"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
    assert f"export ANTHROPIC_BASE_URL=http://127.0.0.1:{port}" in out
    assert "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1" in out
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["reply"]


def test_standalone_server_rejects_a_bad_script_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"conversations": [{"turns": [{"text": "x", "faults": ["boom"]}]}]}))
    proc = subprocess.run(
        [sys.executable, "-m", "flower.testing", "serve", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ},
    )
    assert proc.returncode == 2  # bad input, like every flower command
    assert proc.stderr.strip().count("\n") == 0
    assert "unknown fault 'boom'" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_placeholders_are_not_model_turns(model: ScriptedModel) -> None:
    model.play([conversation("main", text("zero"), text("one"), text("two"))])
    body = request(assistants=1, stream=False)
    body["messages"] += [
        {"role": "assistant", "content": [{"type": "text", "text": "No response requested."}]},
        {"role": "user", "content": "resumed"},
    ]
    assert json.loads(post(model, body)[1])["content"][0]["text"] == "one"
    assert model.requests[-1].turn == 1


def test_after_user_counts_turns_from_the_marker(model: ScriptedModel) -> None:
    model.play(
        [
            conversation("continuation", text("c0"), text("c1"), after_user="carry on"),
            conversation("main", text("m0"), text("m1"), text("m2"), text("m3")),
        ]
    )
    body = request(assistants=2, stream=False)
    assert json.loads(post(model, body)[1])["content"][0]["text"] == "m2"
    body["messages"].append(
        {"role": "user", "content": [{"type": "text", "text": "please carry on"}]}
    )
    assert json.loads(post(model, body)[1])["content"][0]["text"] == "c0"
    body["messages"] += [
        {"role": "assistant", "content": [{"type": "text", "text": "c0"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
    ]
    assert json.loads(post(model, body)[1])["content"][0]["text"] == "c1"
    assert [(r.conversation, r.turn) for r in model.requests] == [
        ("main", 2),
        ("continuation", 0),
        ("continuation", 1),
    ]


def test_a_stop_cancels_a_pending_restart(model: ScriptedModel) -> None:
    port = model.port
    model.restart(after=0.3)
    model.stop()
    time.sleep(0.6)
    assert not model.running
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_requests_it_does_not_serve_are_recorded_without_touching_fault_counters(
    model: ScriptedModel,
) -> None:
    model.play([conversation("main", text("ok", faults=(529,)))])
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=5)
    conn.request(
        "POST",
        "/v1/messages/count_tokens",
        json.dumps(request()),
        {"content-type": "application/json"},
    )
    assert conn.getresponse().status == 404
    conn.close()
    assert post(model, request())[0] == 529  # the first attempt at turn 0 is still the fault
    assert [r.outcome for r in model.requests] == ["not-served", "529"]


def test_the_shipped_example_script_is_valid() -> None:
    script = load_script(Path(__file__).parents[2] / "examples" / "offline-demo.json")
    (main,) = script.conversations
    assert main.turns[0].tools[0].name == "Bash" and main.turns[1].faults == (529,)


def test_need_skips_with_the_reason_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    from flower.testing import pytest_plugin

    pytest_plugin.need(True, "never said")  # met: nothing happens
    monkeypatch.setattr(pytest_plugin, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match="no server here"):
        pytest_plugin.need(False, "no server here")
    monkeypatch.setattr(pytest_plugin, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match=r"no server here \(CI=true: this must run\)"):
        pytest_plugin.need(False, "no server here")


def test_the_model_prints_no_access_log(capfd: pytest.CaptureFixture[str]) -> None:
    """BaseHTTPRequestHandler prints a line per request to stderr unless ``log_message``
    is overridden: over a demo's run view that was about a hundred lines a run."""
    import urllib.error
    import urllib.request

    from flower.testing import ScriptedModel, conversation, text

    for quiet in (True, False):
        with ScriptedModel([conversation("main", text("hi"))], quiet=quiet) as model:
            body = json.dumps({"messages": [{"role": "user", "content": "x"}]}).encode()
            for path in ("/v1/messages/count_tokens?beta=true", "/v1/messages?beta=true"):
                request = urllib.request.Request(model.base_url + path, data=body, method="POST")
                request.add_header("content-type", "application/json")
                try:
                    urllib.request.urlopen(request, timeout=10).read()
                except urllib.error.HTTPError:
                    pass  # count_tokens: 404, as the API would without the endpoint
        captured = capfd.readouterr()
        assert captured.err == "" and captured.out == "", (quiet, captured)


def test_marks_the_api_would_refuse_are_refused_and_nothing_is_billed() -> None:
    """The API's two rules for cache marks (``usage.cache_rules_broken``): at most four
    marked blocks, and no hour's mark after a five minutes' one. flower marks blocks of
    its own in a resumed history (``stores/anchor.py``); a request breaking a rule is a
    400 here as there, never a reply, and the turn stays for the next request."""

    def marked(ttls: list[str | None]) -> dict[str, Any]:
        blocks = [
            {"type": "text", "text": f"part {n}",
             **({"cache_control": {"type": "ephemeral", **({"ttl": t} if t else {})}}
                if t != "-" else {})}
            for n, t in enumerate(ttls)
        ]  # fmt: skip
        return {"model": "m", "stream": False, "messages": [{"role": "user", "content": blocks}]}

    with ScriptedModel([conversation("c", text("fine"))]) as model:
        status, data = post(model, marked(["5m", None, "5m", "5m", "5m"]))
        assert status == 400 and "A maximum of 4 blocks with cache_control" in data
        status, data = post(model, marked(["1h", "5m", "-", "1h"]))
        assert status == 400 and "ttl='1h' must not come after" in data
        status, data = post(model, marked([None, "1h"]))  # no ttl is five minutes
        assert status == 400
        assert [r.outcome for r in model.requests] == ["refused"] * 3
        assert all(r.usage == {} for r in model.requests)
        status, data = post(model, marked(["1h", "1h", "5m", "5m"]))  # longer first: fine
        assert status == 200 and "fine" in data
