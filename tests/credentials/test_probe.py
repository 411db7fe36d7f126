"""The setup probe against flower's scripted model: every verdict from a real HTTP exchange."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from flower.runtime.probe import DEFAULT_PROBE_MODEL, probe, probe_model
from flower.testing import ScriptedModel, Turn, conversation, text


def _env(model: ScriptedModel | str, **extra: str) -> dict[str, str]:
    base = model if isinstance(model, str) else model.base_url
    return {"ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": "sk-ant-probe-key", **extra}


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed on exit: nothing listens there


def test_a_reply_is_ok_and_sends_one_tiny_request(bare: Path) -> None:
    with ScriptedModel([conversation("probe", text("pong"))]) as model:
        result = probe(_env(model))
        (request,) = model.requests
    assert result.verdict == "ok" and result.ok, result
    assert result.line().startswith(f"ok: {model.base_url} answered with model ")
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-probe-key"
    assert request.body["max_tokens"] <= 16 and not request.body.get("stream")
    assert request.body["model"] == DEFAULT_PROBE_MODEL


def test_a_401_is_auth(bare: Path) -> None:
    with ScriptedModel([conversation("probe", Turn(text="x", fail_always=401))]) as model:
        result = probe(_env(model))
    assert result.verdict == "auth", result
    assert "HTTP 401: invalid x-api-key" in result.line() and "flower setup" in result.line()


def test_a_refused_port_is_network(bare: Path) -> None:
    result = probe(_env(f"http://127.0.0.1:{_dead_port()}"))
    assert result.verdict == "network", result
    assert "connection refused" in result.line() and "not judged" in result.line()


@pytest.mark.parametrize(("fault", "verdict"), [(529, "network"), (500, "network"), (429, "ok")])
def test_service_faults_do_not_blame_the_key(bare: Path, fault: int, verdict: str) -> None:
    with ScriptedModel([conversation("probe", Turn(text="x", fail_always=fault))]) as model:
        assert probe(_env(model)).verdict == verdict


def test_a_wrong_path_is_config(bare: Path) -> None:
    with ScriptedModel([conversation("probe", text("pong"))]) as model:
        result = probe(_env(model.base_url + "/not-the-api"))
    assert result.verdict == "config" and "HTTP 404" in result.detail, result


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:9", "file:///etc/passwd", "gateway.example"])
def test_a_url_that_is_not_http_is_config_and_never_opened(bare: Path, url: str) -> None:
    result = probe(_env(url))
    assert result.verdict == "config" and "http(s)" in result.detail, result


class _Html(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = b"<html>\x1b[2Jwelcome</html>"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def html_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Html)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_that_is_not_the_messages_api_is_config(bare: Path, html_server: str) -> None:
    result = probe(_env(html_server))
    assert result.verdict == "config" and "not JSON" in result.detail, result
    assert "\x1b" not in result.line()


def test_tokens_travel_the_way_the_cli_sends_them(bare: Path) -> None:
    with ScriptedModel([conversation("probe", text("pong"))]) as model:
        probe({"ANTHROPIC_BASE_URL": model.base_url, "ANTHROPIC_AUTH_TOKEN": "gw-token"})
        probe({"ANTHROPIC_BASE_URL": model.base_url, "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat-x"})
        gateway, oauth = model.requests
    assert gateway.headers["authorization"] == "Bearer gw-token"
    assert "x-api-key" not in gateway.headers
    assert oauth.headers["authorization"] == "Bearer sk-ant-oat-x"
    assert "oauth" in oauth.headers["anthropic-beta"]


def test_no_key_at_all_is_auth_without_a_request(bare: Path) -> None:
    assert probe({"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}).verdict == "auth"


def test_the_model_asked(bare: Path) -> None:
    assert probe_model({}, "claude-x-1") == "claude-x-1"
    assert probe_model({"ANTHROPIC_MODEL": "gw-model"}) == "gw-model"
    assert probe_model({"ANTHROPIC_MODEL": "sonnet"}) == DEFAULT_PROBE_MODEL, "a CLI alias"
    assert probe_model({"ANTHROPIC_DEFAULT_HAIKU_MODEL": "small-1"}) == "small-1"
