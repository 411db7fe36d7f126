"""Another local user squatting the page's address, against real ``flower web`` runs in
one real browser (headless Chromium). The squatter (``squatter.py``) runs as ``nobody``
(``runuser``): a service worker for the whole origin, a page and a script cached for a
year, a tab watching the origin's storage, and a collector of its own hearing it all.

- Between two runs: run A's page is open; A ends; the squatter takes A's address (and
  the old default, 127.0.0.1:8765) and the owner's browser loads it (the old tab
  reloads, a bookmark). Run B starts; the owner opens the URL B printed, writes to the
  inbox and answers in that same browser. The squatter hears nothing of B: no token, no
  URL, no request; no line of its own reaches B's brief and B's question gets the
  owner's answer. (Once, both runs came up on 127.0.0.1:8765: the service worker saw
  B's token in the navigation's URL, the cached page answered B's question "CRLF" and
  wrote into B's brief.)
- The other loopback: ``--host localhost`` printed ``http://localhost:PORT/#token=…``,
  which Chromium tried on ``[::1]`` first, where the squatter got the token. It is
  refused now, in one line; the default URL names the address bound, and a squatter on
  ``[::1]`` and 127.0.0.1 at the same port hears nothing when it is opened.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from flower.testing import ScriptedModel, need

from . import scripts as W
from .conftest import NOT_INSTALLED, PLUGIN
from .runs import WebRun, start_web

pytestmark = pytest.mark.e2e
need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.server import serve  # noqa: E402

from .pages import TOKEN, hub_with_question  # noqa: E402

PYTHON = "/usr/bin/python3"
SOURCE = (Path(__file__).parent / "squatter.py").read_text(encoding="utf-8")
#: Where ``flower web`` listened by default before every run had an origin of its own.
OLD_DEFAULT = "127.0.0.1:8765"
OWNER = "OWNER-LINE 先别动 README"


class Squatter:
    """``squatter.py`` as the user nobody, listening on ``where``; what it heard, in order."""

    def __init__(self, *where: str) -> None:
        need(os.geteuid() == 0, "runs as root only: runuser switches to the user nobody")
        runuser = shutil.which("runuser")
        need(runuser is not None and os.path.exists(PYTHON), "no runuser or system python3")
        self.lines: list[dict[str, Any]] = []
        self.proc = subprocess.Popen(
            [str(runuser), "-u", "nobody", "--", PYTHON, "-c", SOURCE, *where],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/",
            env={"PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        threading.Thread(target=self._drain, daemon=True).start()
        self.wait_for(lambda: any(s["what"] == "listening" for s in self.lines), "its start")
        (started,) = [s for s in self.lines if s["what"] == "listening"]
        self.taken: list[str] = started["squats"]

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def wait_for(self, check: Any, what: str, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while not check():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"the squatter: no {what}: {self.lines[-20:]}")
            time.sleep(0.05)

    def said(self, since: int = 0) -> str:
        return json.dumps(self.lines[since:], ensure_ascii=False)

    def reports(self) -> list[dict[str, Any]]:
        """What its pages and worker sent the collector (``what``, ``data``, ``at``)."""
        bodies = [s.get("body") for s in self.lines if s["what"] == "report"]
        return [json.loads(b) for b in bodies if b and b.startswith("{")]

    def release(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("release\n")
        self.proc.stdin.flush()
        self.wait_for(lambda: any(s["what"] == "released" for s in self.lines), "release")

    def stop(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def asks(browser: Any) -> str:
    from selenium.webdriver.common.by import By

    return " ".join(str(n.text) for n in browser.find_elements(By.ID, "asks"))


def notice(browser: Any) -> str:
    from selenium.webdriver.common.by import By

    shown = browser.find_elements(By.ID, "notice")
    return str(shown[0].text) if shown and shown[0].is_displayed() else ""


def everything_in(folder: Path) -> str:
    texts = [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()]
    return "\n".join(texts)


def where(run: WebRun) -> str:
    return run.url.removeprefix("http://")


def test_a_squatter_between_two_runs_gets_nothing_of_the_second(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    tmp_path: Path,
    browser: Any,
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    need(Path(W.FLOWER).exists(), "the flower command is not installed next to this Python")
    wait = WebDriverWait(browser, 60, poll_frequency=0.1)
    spaces = [tmp_path / "a", tmp_path / "b"]
    for ws in spaces:
        ws.mkdir()
    scripted_model.play([W.clarifier()])
    a = start_web(spaces[0], tmp_path, "--no-goal", port=None)  # the defaults, twice
    runs, squatter = [a], None
    try:
        a.wait_for(lambda: bool(a.pending()), what="A's question")
        browser.get(f"{a.url}/#token={a.token}")
        wait.until(lambda _: W.QUESTION in asks(browser))
        a.stop()

        # between the runs: the squatter takes A's address and the old default, and the
        # owner's browser loads something from each (the old tab reloading, a bookmark)
        places = list(dict.fromkeys([where(a), OLD_DEFAULT]))
        squatter = Squatter(*places)
        assert where(a) in squatter.taken
        for place in squatter.taken:
            browser.get(f"http://{place}/")
            squatter.wait_for(
                lambda place=place: any(
                    r["what"] == "sw-ready" and r["at"].startswith(f"http://{place}/")
                    for r in squatter.reports()
                ),
                f"service worker on {place}",
            )
        browser.get(f"http://{where(a)}/")  # the old tab stays on the squatter's page
        squatter.release()
        time.sleep(1)  # a request it was serving as it let go is not the next run's
        since = len(squatter.lines)

        scripted_model.play([W.clarifier()])
        b = start_web(spaces[1], tmp_path, "--no-goal", port=None)
        runs.append(b)
        b.wait_for(lambda: bool(b.pending()), what="B's question")
        browser.switch_to.new_window("tab")
        browser.get(f"{b.url}/#token={b.token}")
        wait.until(lambda _: W.QUESTION in asks(browser) or b.token in squatter.said(since))
        assert b.token not in squatter.said(since), squatter.said(since)
        box = browser.find_element(By.CSS_SELECTOR, "#inbox input[name=text]")
        box.send_keys(OWNER)
        browser.find_element(By.CSS_SELECTOR, "#inbox button").click()
        wait.until(lambda d: OWNER in d.find_element(By.ID, "stream").text)
        browser.find_element(By.CSS_SELECTOR, "#asks button[data-answer='LF']").click()
        b.wait_for(lambda: not b.pending(), what="B's question answered")
        b.wait_for(
            lambda: any(r.turn == 1 for r in scripted_model.requests_for("clarify")),
            what="the answer's request to the model",
        )
        time.sleep(2)  # what the squatter's tab, worker or scripts would do next
        assert notice(browser) == ""
    finally:
        for run in runs:
            run.stop()
        if squatter is not None:
            squatter.stop()
    heard = squatter.said(since)
    assert b.token not in heard and where(b) not in heard, heard
    # only a connection the browser had opened to the squatter's own address before it let
    # go may still bring it a request (the worker's update check), never one of B's
    leftovers = [s for s in squatter.lines[since:] if s["what"] == "squat-request"]
    assert all(s["host"] == where(a) and not s["token"] for s in leftovers), leftovers
    written = everything_in(spaces[1])
    assert OWNER in written and "SQUATTED" not in written  # the owner's line, and only it
    answered = [r for r in scripted_model.requests_for("clarify") if r.turn == 1]
    results = [" ".join(r.tool_results().values()) for r in answered]
    assert results and all("LF" in t and "CRLF" not in t for t in results), results


def free_port() -> int:
    """A port free on both loopbacks."""
    for _ in range(50):
        with socket.socket() as v4:
            v4.bind(("127.0.0.1", 0))
            port = int(v4.getsockname()[1])
            with socket.socket(socket.AF_INET6) as v6:
                try:
                    v6.bind(("::1", port))
                except OSError:
                    continue
        return port
    raise AssertionError("no port free on both loopbacks")


def test_localhost_is_refused_the_other_loopback_hears_nothing(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    browser: Any,
) -> None:
    need(Path(W.FLOWER).exists(), "the flower command is not installed next to this Python")
    port = free_port()
    squatter = Squatter(f"[::1]:{port}")
    scripted_model.play([W.clarifier()])
    command = [W.FLOWER, "web", "-w", str(workspace), "--host", "localhost", "--port", str(port),
               "--no-bequest", "--no-goal", "写个 hello.txt"]  # fmt: skip
    proc = subprocess.Popen(
        command, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "#token=" in line:  # printed: open it, as the owner would
                browser.get(line.split("open ", 1)[1].split()[0])
                time.sleep(3)  # what the squatter would hear
                break
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(20)
        squatter.stop()
    assert squatter.taken == [f"[::1]:{port}"]
    assert "#token=" not in squatter.said() and "squat-request" not in squatter.said()
    said = "".join(lines)
    assert proc.returncode == 2, said
    assert "--host localhost names two addresses" in said and "Traceback" not in said
    assert said.count("\n") == 1 and not (workspace / "runs").exists()  # one line


def test_the_url_names_the_address_bound_and_the_other_loopbacks_hear_nothing(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    browser: Any,
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    need(Path(W.FLOWER).exists(), "the flower command is not installed next to this Python")
    scripted_model.play([W.clarifier()])
    run = start_web(workspace, tmp_path, "--no-goal", port=None)
    squatter = None
    try:
        address = ipaddress.ip_address(run.host)  # a literal address, never a name
        assert address.is_loopback and str(address) != "127.0.0.1"  # a fresh one
        run.wait_for(lambda: bool(run.pending()), what="the question")  # answered there
        squatter = Squatter(f"[::1]:{run.port}", f"127.0.0.1:{run.port}")
        assert squatter.taken == [f"[::1]:{run.port}", f"127.0.0.1:{run.port}"]
        browser.get(f"{run.url}/#token={run.token}")
        WebDriverWait(browser, 60, poll_frequency=0.1).until(lambda _: W.QUESTION in asks(browser))
        time.sleep(1)
    finally:
        run.stop()
        if squatter is not None:
            squatter.stop()
    assert "squat-request" not in squatter.said() and run.token not in squatter.said()


def test_on_a_fixed_address_the_page_refuses_a_foreign_service_worker(
    tmp_path: Path, browser: Any
) -> None:
    """``--host``/``--port`` given: the origin is the same every run, and a squatter's
    service worker sees the first load (that is why the default is a fresh origin). The
    page then sends nothing through it, removes it and says so; opened again, it works."""
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 30, poll_frequency=0.1)
    port = free_port()
    squatter = Squatter("--worker-only", f"127.0.0.1:{port}")
    try:
        browser.get(f"http://127.0.0.1:{port}/elsewhere")
        squatter.wait_for(
            lambda: any(r["what"] == "sw-ready" for r in squatter.reports()), "its worker"
        )
        squatter.release()
        hub, channel, _ = hub_with_question(tmp_path)
        running = serve("127.0.0.1", port, token=TOKEN, hub=hub)
        try:
            browser.get(f"{running.url}/#token={TOKEN}")
            wait.until(lambda _: "service worker that is not flower's" in notice(browser))
            time.sleep(1)
            seen = [r["data"] for r in squatter.reports() if r["what"] == "sw-fetch"]
            assert any(TOKEN in d["url"] for d in seen)  # the first load: why it is not enough
            assert not [d for d in seen if d["token"]], seen  # nothing carried the header
            count = len(seen)
            browser.get(f"{running.url}/#token={TOKEN}")  # the URL opened again: no worker now
            wait.until(lambda _: "LF or CRLF?" in asks(browser))
            assert notice(browser) == ""
            later = [r["data"] for r in squatter.reports() if r["what"] == "sw-fetch"][count:]
            assert not [d for d in later if TOKEN in json.dumps(d)], later  # not its URL now
        finally:
            running.stop()
    finally:
        squatter.stop()
    assert channel.pending() and not channel.mail
