"""The README's offline recipe, traced: ``flower scripted-model serve --env-file``, its
lines sourced in a shell that names a collector, then ``flower once``. The spans must
reach the collector (the printed lines used to export ``OTEL_SDK_DISABLED=true``, the
tests' own switch, so the run was never traced: issue 33).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN
from .scenario import flower_command

pytestmark = pytest.mark.e2e

DEMO = Path(__file__).resolve().parents[3] / "examples" / "offline-demo.json"


class Collector:
    """An OTLP/HTTP receiver on loopback that keeps what it is sent, by path."""

    def __init__(self) -> None:
        received: list[tuple[str, bytes]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                received.append((self.path, self.rfile.read(size)))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def traces(self) -> bytes:
        return b"".join(body for path, body in self.received if path == "/v1/traces")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    got = Collector()
    try:
        yield got
    finally:
        got.close()


def test_the_offline_recipe_sends_the_run_to_the_collector_the_shell_names(
    tmp_path: Path, collector: Collector
) -> None:
    need(PLUGIN, NOT_INSTALLED)
    envfile = tmp_path / "flower-env.sh"
    ws = tmp_path / "proj"
    ws.mkdir()
    # A user's shell: none of the tests' own switches (the offline fixture's
    # OTEL_SDK_DISABLED=true among them), this plugin alone among the installed ones.
    drop = ("OTEL_", "FLOWER_", "CLAUDE_", "ANTHROPIC_")
    shell = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    shell.update(
        {
            "HOME": str(tmp_path / "home"),
            "FLOWER_LOAD_PLUGINS": "otel",
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
            "OTEL_METRICS_EXPORTER": "none",
        }
    )
    serve = [sys.executable, "-m", "flower.testing", "serve", str(DEMO), "--quiet"]
    server = subprocess.Popen(
        [*serve, "--env-file", str(envfile)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=shell,
    )
    try:
        deadline = time.monotonic() + 30
        while not envfile.exists():
            assert server.poll() is None and time.monotonic() < deadline, "serve did not listen"
            time.sleep(0.05)
        run = (
            f". {shlex.quote(str(envfile))} && CLAUDE_CODE_MAX_RETRIES=2"
            f" {shlex.quote(flower_command())} once -w {shlex.quote(str(ws))}"
            f" -r {shlex.quote(str(ws / 'runs'))} 'say hello in a file'"
        )
        done = subprocess.run(
            ["bash", "-c", run],
            capture_output=True,
            text=True,
            timeout=240,
            env=shell,
            stdin=subprocess.DEVNULL,
        )
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (ws / "hello.txt").read_text().strip() == "hello"
    assert "flower-otel" not in done.stderr  # the collector took everything
    traces = collector.traces()
    # span names travel as plain strings in the protobuf: flower's session span and the
    # CLI's own request span, both sent to the collector the shell named
    assert b"invoke_agent" in traces, "no flower span reached the collector"
    assert b"claude_code.llm_request" in traces, "no CLI span reached the collector"
