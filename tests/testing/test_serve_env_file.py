"""``flower scripted-model serve --env-file``: the environment appears only once it is true.

The old recipe (``serve … > env.sh &`` then ``. env.sh && flower``) emptied the file
before the server even tried its port; on a taken port sourcing the empty file succeeded
and flower ran with the user's own key. The file must now be complete and name a live
server, or not be there (and an older file is left exactly as it was).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from flower.testing.env import LEAKY_VARIABLES

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "starter-demo.json"


def serve(*args: str) -> list[str]:
    return [sys.executable, "-m", "flower.testing", "serve", str(SCRIPT), *args]


def test_a_taken_port_leaves_the_env_file_alone_and_says_why_in_one_line(
    tmp_path: Path,
) -> None:
    fresh, older = tmp_path / "fresh.sh", tmp_path / "older.sh"
    older.write_text("export ANTHROPIC_BASE_URL=http://127.0.0.1:1\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        for target in (fresh, older):
            done = subprocess.run(
                serve("--port", port, "--env-file", str(target)),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 2 and done.stdout == ""
            assert done.stderr.count("\n") == 1 and "cannot listen" in done.stderr
            assert "Traceback" not in done.stderr
    assert not fresh.exists()
    assert older.read_text() == "export ANTHROPIC_BASE_URL=http://127.0.0.1:1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["older.sh"]  # no .tmp left


def test_the_env_file_holds_the_variables_once_listening_and_goes_with_the_server(
    tmp_path: Path,
) -> None:
    target = tmp_path / "env.sh"
    proc = subprocess.Popen(
        serve("--port", "0", "--env-file", str(target), "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not target.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "no env file"
            time.sleep(0.05)
        text = target.read_text()
        shell = subprocess.run(
            [
                "bash",
                "-c",
                f'. {target} && echo "$ANTHROPIC_BASE_URL|$FLOWER_DOTENV|${{FLOWER_ENV-unset}}"',
            ],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "FLOWER_ENV": "/home/me/.env"},
        )
        url, sealed, flower_env = shell.stdout.strip().split("|")
        host, port = url.removeprefix("http://").split(":")
        socket.create_connection((host, int(port)), timeout=5).close()  # it listens
        assert sealed == "0" and flower_env == "unset"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert out == text  # stdout says the same, after the bind
    for name in LEAKY_VARIABLES:
        assert f"unset {name}\n" in text
    assert "export ANTHROPIC_API_KEY=sk-ant-scripted-offline" in text
    assert not target.exists()  # a file naming a stopped server would mislead


def test_the_printed_environment_leaves_telemetry_to_the_shell(tmp_path: Path) -> None:
    """The tests' offline environment turns OpenTelemetry off (``OTEL_SDK_DISABLED=true``);
    a shell that sources ``serve``'s lines to try flower offline must keep its own say, or
    flower-plugin-otel traces nothing of the run (issue 33)."""
    target = tmp_path / "env.sh"
    proc = subprocess.Popen(
        serve("--port", "0", "--env-file", str(target), "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not target.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "no env file"
            time.sleep(0.05)
        shell = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        seen = []
        for extra in ({}, {"OTEL_SDK_DISABLED": "false"}, {"OTEL_SDK_DISABLED": "true"}):
            done = subprocess.run(
                ["bash", "-c", f'. {target} && echo "${{OTEL_SDK_DISABLED-unset}}"'],
                capture_output=True,
                text=True,
                timeout=30,
                env={**shell, **extra},
            )
            assert done.returncode == 0, done.stderr
            seen.append(done.stdout.strip())
        assert seen == ["unset", "false", "true"]
        assert "OTEL_SDK_DISABLED" not in target.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0
