"""``flower demo``: the README's first offline step, as a newcomer with a real key types it.

The user here has credentials everywhere flower or the CLI could look (the shell's
variables, ``$FLOWER_ENV``, ``./.env``, ``~/.config/flower/.env``, Claude Code's
``settings.json``, later the demo folder's own ``.env``), all naming a loopback listener
this test opens, with a decoy key; proxies point at it too. The demo must play the whole
run against its own scripted model and never connect there: the listener counts ZERO
connections. Costs are labelled simulated, the folder is printed and kept, ``flower
status`` reads it, a second ``flower demo`` continues the same run (with its page, when
flower-plugin-web is installed). And when the scripted model cannot start, the demo
stops in one line, before anything could go anywhere.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from flower.commands import demo as demo_module
from flower.commands.demo import (
    DEMO_MARK,
    PORT_ENV,
    default_folder,
    sealed_environment,
    unusable,
    web_command,
)
from flower.kernel.env import DOTENV_SWITCH, resolve
from flower.testing import ScriptedModel

from .terminal import FLOWER, Flower

DECOY_KEY = "sk-ant-decoy-user-key-0123456789abcdef"
#: A request log line of ``flower scripted-model serve`` (it must never reach the view).
SERVER_LOG = re.compile(r"turn \d+\s+attempt \d+")
#: A dollar figure, and whatever follows it on the line.
MONEY = re.compile(r"\$\d+\.\d+(.{0,11})")


class Listener:
    """A loopback port that counts every connection made to it (and answers none)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    try:
        yield found
    finally:
        found.close()


def hostile(tmp_path: Path, listener: Listener) -> tuple[dict[str, str], Path, Path]:
    """A user with a real-looking key and gateway everywhere: ``(environment, HOME,
    the folder the user runs flower demo from)``."""
    home = tmp_path / "home"
    here = tmp_path / "here"
    here.mkdir()
    gateway = f"ANTHROPIC_BASE_URL={listener.url}\nANTHROPIC_API_KEY={DECOY_KEY}\n"
    user_env = home / ".config" / "flower" / ".env"
    user_env.parent.mkdir(parents=True)
    user_env.write_text(gateway + f"ANTHROPIC_AUTH_TOKEN={DECOY_KEY}\nANTHROPIC_MODEL=decoy\n")
    bedrock = "CLAUDE_CODE_USE_BEDROCK=1\nCLAUDE_CODE_SKIP_BEDROCK_AUTH=1\n"
    (here / ".env").write_text(gateway + bedrock + f"ANTHROPIC_BEDROCK_BASE_URL={listener.url}\n")
    named = tmp_path / "named.env"
    named.write_text(gateway + f"FLOWER_STORE_URL=sqlite:///{tmp_path / 'leaked.db'}\n")
    claude = home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(
        json.dumps(
            {
                "env": {"ANTHROPIC_BASE_URL": listener.url, "ANTHROPIC_AUTH_TOKEN": DECOY_KEY},
                "apiKeyHelper": "echo " + DECOY_KEY,
            }
        )
    )
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": "",  # ~/.config: where flower setup saves the key
        "XDG_CACHE_HOME": "",  # the demo's folder: ~/.cache/flower/demo
        "CLAUDE_CONFIG_DIR": "",
        "FLOWER_ENV": str(named),
        "ANTHROPIC_BASE_URL": listener.url,
        "ANTHROPIC_API_KEY": DECOY_KEY,
        "ANTHROPIC_AUTH_TOKEN": DECOY_KEY,
        "HTTP_PROXY": listener.url,
        "HTTPS_PROXY": listener.url,
        "ALL_PROXY": listener.url,
        "http_proxy": listener.url,
        "https_proxy": listener.url,
        "FLOWER_STORE_URL": f"sqlite:///{tmp_path / 'leaked.db'}",
    }
    return env, home, here


def expect(run: Flower, pattern: str, listener: Listener, timeout: float = 90) -> None:
    """``run.expect(pattern)``, failing at once when the listener sees a connection (a
    leaked endpoint would otherwise show only as a run retrying until the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        assert listener.connections == 0, "reached the user's endpoint: " + run.text[-800:]
        try:
            run.expect(pattern, timeout=0.5)
            return
        except pexpect.TIMEOUT:
            assert time.monotonic() < deadline, run.text[-3000:]


def costs_unlabelled(text: str) -> list[str]:
    """Every dollar figure on screen that is not followed by "simulated"."""
    return [m.group(0) for m in MONEY.finditer(text) if not m.group(1).startswith(" simulated")]


@pytest.mark.e2e
def test_the_demo_plays_a_whole_run_and_never_reaches_the_users_endpoint(
    tmp_path: Path, listener: Listener
) -> None:
    env, home, here = hostile(tmp_path, listener)
    folder = home / ".cache" / "flower" / "demo"

    started = time.monotonic()
    first = Flower("demo", cwd=here, env=env)
    expect(first, "answer 1-2", listener)
    first.type("1")
    assert first.finish() == 0, first.text[-3000:]
    wall = time.monotonic() - started
    text = first.text
    assert listener.connections == 0, text[-3000:]
    assert (folder / "hello.txt").read_text() == "hi"
    for seen in ("确认需求", "not yet", "achieved", "done - total $"):
        assert seen in text, seen
    assert re.search(r"done - total \$\d+\.\d{4} simulated", text), text[-2000:]
    assert not costs_unlabelled(text), costs_unlabelled(text)
    assert f"flower demo: kept in {folder}" in text
    assert f"flower status -w {folder}" in text
    assert not SERVER_LOG.search(text), "the model's request log reached the run view"
    assert not (tmp_path / "leaked.db").exists()  # FLOWER_STORE_URL stayed out
    assert (folder / "runs" / DEMO_MARK).is_file()
    print(f"demo wall time: {wall:.1f}s")

    status = subprocess.run(
        [FLOWER, "status", "-w", str(folder)],
        capture_output=True,
        text=True,
        cwd=here,
        env={**os.environ, **env},
        timeout=60,
    )
    assert status.returncode == 0, status.stderr
    assert "simulated so far" in status.stdout and not costs_unlabelled(status.stdout)
    assert "achieved" in status.stdout
    assert "judge: 2 round(s)" in status.stdout  # from the demo's own store, not the user's

    # The demo folder gains a .env of its own: the workspace's .env is not read either.
    (folder / ".env").write_text(f"ANTHROPIC_BASE_URL={listener.url}\nANTHROPIC_API_KEY=x\n")
    web = web_command() is not None
    again = Flower("demo", *(["--web"] if web else []), cwd=here, env=env)
    expect(again, "continuing in", listener)
    expect(again, "Enter = leave it as it is", listener)
    if web:
        (url,) = re.findall(r"flower web: open (http://127\.\d+\.\d+\.\d+:\d+)/", again.text)
        with urllib.request.urlopen(url + "/", timeout=10) as page:
            assert page.status == 200
    again.type("/again")
    if web:  # the finished run's page stays up on a terminal until a key ends it
        expect(again, "press any key", listener)
        again.type("")
    assert again.finish() == 0, again.text[-3000:]
    # its third round, the first of this process's three: never "round 3/3"
    assert "ROUND-3" in again.text and "round 3, 1/3 this time): achieved" in again.text
    assert not costs_unlabelled(again.text), costs_unlabelled(again.text)
    assert f"flower demo: kept in {folder}" in again.text
    assert listener.connections == 0

    # Enter on the finished demo: the hint names the demo's commands, not the main job's
    # (which would run in this folder with the user's own credentials)
    left = Flower("demo", cwd=here, env=env)
    expect(left, "Enter = leave it as it is", listener)
    left.type("")
    assert left.finish() == 0, left.text[-3000:]
    assert "the demo finished last time. flower demo --new" in left.text, left.text[-2000:]
    assert "flower --new" not in left.text and 'flower "' not in left.text


def test_a_scripted_model_that_cannot_start_stops_the_demo_in_one_line(
    tmp_path: Path, listener: Listener
) -> None:
    env, home, here = hostile(tmp_path, listener)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [FLOWER, "demo"],
            capture_output=True,
            text=True,
            cwd=here,
            env={**os.environ, **env, PORT_ENV: str(port)},
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "cannot listen" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert listener.connections == 0
    assert not (home / ".cache" / "flower" / "demo").exists()  # nothing ran, nothing made


def test_a_folder_the_demo_did_not_make_is_refused_in_one_line(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.py").write_text("print('mine')\n")
    done = subprocess.run(
        [FLOWER, "demo", "-w", str(project)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "not empty" in done.stderr
    assert sorted(p.name for p in project.iterdir()) == ["main.py"]


def test_web_without_the_plugin_says_so_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [FLOWER, "demo", "--web", "-w", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "FLOWER_DISABLED_PLUGINS": "web"},
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "flower-plugin-web" in done.stderr
    assert not (tmp_path / "d").exists()


def test_the_sealed_environment_keeps_nothing_of_the_users_credentials(tmp_path: Path) -> None:
    user = {
        "PATH": "/usr/bin",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "ANTHROPIC_API_KEY": DECOY_KEY,
        "ANTHROPIC_AUTH_TOKEN": DECOY_KEY,
        "ANTHROPIC_BASE_URL": "https://gateway.example",
        "CLAUDE_CODE_USE_VERTEX": "1",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "FLOWER_ENV": "/somewhere/.env",
        "FLOWER_STORE_URL": "postgresql://db.example/flower",
        "AWS_SECRET_ACCESS_KEY": "decoy",
    }
    env = sealed_environment("http://127.0.0.1:1234", tmp_path / "h", user)
    assert env["PATH"] == "/usr/bin" and env["LC_ALL"] == "C.UTF-8"
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1234"
    assert env["ANTHROPIC_API_KEY"] != DECOY_KEY and not env["ANTHROPIC_AUTH_TOKEN"]
    assert not env["CLAUDE_CODE_USE_VERTEX"] and not env["FLOWER_ENV"]
    for gone in ("HTTPS_PROXY", "FLOWER_STORE_URL", "AWS_SECRET_ACCESS_KEY"):
        assert gone not in env
    assert env["HOME"] == str(tmp_path / "h") and env[DOTENV_SWITCH] == "0"
    assert env["XDG_CONFIG_HOME"].startswith(str(tmp_path / "h"))


def test_flowers_env_loading_is_off_in_a_sealed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """./.env, the workspace's .env, $FLOWER_ENV and the user config would each fill a
    blank key or add a cloud switch; with FLOWER_DOTENV=0 none is read."""
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    bad = "ANTHROPIC_AUTH_TOKEN=decoy\nCLAUDE_CODE_USE_BEDROCK=1\nANTHROPIC_BASE_URL=http://x\n"
    (ws / ".env").write_text(bad)
    (tmp_path / "named.env").write_text(bad)
    env = sealed_environment("http://127.0.0.1:1234", tmp_path / "h", {"PATH": "/usr/bin"})
    config = Path(env["XDG_CONFIG_HOME"]) / "flower" / ".env"
    config.parent.mkdir(parents=True)
    config.write_text(bad)
    env["FLOWER_ENV"] = str(tmp_path / "named.env")
    assert resolve(ws, {**env, DOTENV_SWITCH: "1"})[0]  # the files are there to be read
    assert resolve(ws, env) == ({}, [])


def test_the_watchdog_ends_the_demo_when_the_model_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    killed: list[tuple[int, int]] = []
    monkeypatch.setattr(demo_module.os, "kill", lambda pid, sig: killed.append((pid, sig)))
    model = ScriptedModel(quiet=True)
    model.start()
    watch = demo_module._Watch(model)
    watch.start()
    time.sleep(0.5)
    assert not watch.died and not killed
    model.stop()
    deadline = time.monotonic() + 5
    while not killed and time.monotonic() < deadline:
        time.sleep(0.05)
    watch.stop()
    assert watch.died and killed == [(os.getpid(), signal.SIGTERM)]


def test_the_default_folder_is_under_the_users_cache() -> None:
    assert default_folder({"HOME": "/h"}) == Path("/h/.cache/flower/demo")
    assert default_folder({"HOME": "/h", "XDG_CACHE_HOME": "/c"}) == Path("/c/flower/demo")
    assert unusable(Path("/nonexistent/flower-demo")) is None


@pytest.mark.timeout(240)
def test_the_demo_script_ships_inside_the_wheel(flower_wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(flower_wheel) as zf:
        zf.extractall(site)
    code = "from flower.commands.demo import demo_script; print(demo_script())"
    probe = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert probe.returncode == 0, probe.stderr
    assert Path(probe.stdout.strip()) == site / "flower" / "_examples" / "starter-demo.json"
