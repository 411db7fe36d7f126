"""``flower web`` as a real process for the end-to-end tests: started against the
scripted model, its URL and token read from what it prints, its output kept (a thread
drains it, so a chatty run never blocks on a full pipe), and its page spoken to with
the token, as a browser would."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import scripts as W


@dataclass
class WebRun:
    proc: subprocess.Popen[str]
    url: str  # http://ADDRESS:PORT (the address bound, as printed)
    token: str
    lines: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def host(self) -> str:
        """The address printed, as ``--host`` takes it (``[::1]`` unbracketed)."""
        return self.url.removeprefix("http://").rsplit(":", 1)[0].strip("[]")

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def get(self, path: str, timeout: float = 20) -> Any:
        request = urllib.request.Request(self.url + path, headers={"X-Flower-Token": self.token})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def post(self, path: str, body: dict[str, Any], timeout: float = 20) -> tuple[int, Any]:
        headers = {
            "X-Flower-Token": self.token,
            "Origin": self.url,
            "Content-Type": "application/json",
        }
        data = json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def pending(self) -> list[dict[str, Any]]:
        return list(self.get("/state")["pending"])

    def wait_for(self, check: Callable[[], bool], seconds: float = 60, what: str = "") -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if check():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"flower web ended early: {self.output[-3000:]}")
            time.sleep(0.1)
        raise AssertionError(f"waited {seconds}s for {what}: {self.output[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: flower rescues the step and exits
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def start_web(
    workspace: Path,
    cwd: Path,
    *args: str,
    port: int | None = 0,
    host: str | None = None,
    preexec_fn: Callable[[], None] | None = None,
    extra: Sequence[str] = (),
) -> WebRun:
    """``flower web -w workspace --port port ... "写个 hello.txt"``, its URL printed;
    ``port=None``/``host=None``: the default (a fresh loopback address and port)."""
    command = [W.FLOWER, "web", "-w", str(workspace), "--no-bequest"]
    command += ["--port", str(port)] if port is not None else []
    command += ["--host", host] if host is not None else []
    command += [*args, *extra, "写个 hello.txt"]
    proc = subprocess.Popen(
        command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, preexec_fn=preexec_fn,
    )  # fmt: skip
    assert proc.stdout is not None
    lines: list[str] = []
    found = threading.Event()

    def drain() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "#token=" in line:
                found.set()

    threading.Thread(target=drain, daemon=True).start()
    deadline = time.monotonic() + 60
    while not found.wait(0.1):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("flower web printed no URL: " + "".join(lines)[-2000:])
    (match,) = [m for m in map(URL.search, lines) if m]
    return WebRun(proc=proc, url=match.group(1), token=match.group(2), lines=lines)


URL = re.compile(r"open (http://[^/\s]+)/#token=([\w-]+)")
