"""``flower web`` in a real pseudo-terminal, with real keystrokes: the page and the
terminal answer the same question (the terminal sees the page's answer land), and
Ctrl-C twice (the byte ``\\x03``, as a keyboard sends it) quits with 130, without a
traceback from either the run or the page's server. A run that ends keeps its page up
to say how (``--linger``, 60 s on a terminal) until a key is pressed."""

from __future__ import annotations

import io
import json
import re
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from flower.testing import ScriptedModel, conversation, need, text

from . import scripts as W
from .conftest import NOT_INSTALLED, PLUGIN

pytestmark = pytest.mark.e2e
need(PLUGIN, NOT_INSTALLED)

pexpect = pytest.importorskip("pexpect", reason="pexpect drives the pseudo-terminal")

SLOW = 60  # a reply that waits this long is still running when Ctrl-C comes


def script() -> list[Any]:
    return [W.goal_setter(), W.clarifier(), W.coordinator(text("x", delay=SLOW))]


def default_signals() -> None:
    """What a terminal gives the program it starts: every signal at its default action."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)


def test_the_page_answers_in_the_terminals_run_and_ctrl_c_takes_both_down(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    import os

    scripted_model.play(script())
    env = {**os.environ, "TERM": "xterm-256color"}
    log = io.StringIO()
    child = pexpect.spawn(
        W.FLOWER, ["web", "-w", str(workspace), "--port", "0", "写个 hello.txt"],
        cwd=str(tmp_path), env=env, encoding="utf-8", codec_errors="replace", timeout=90,
        dimensions=(40, 120), preexec_fn=default_signals,
    )  # fmt: skip
    child.logfile_read = log
    try:
        child.expect(r"open (http://127(?:\.\d+){3}:\d+)/#token=([\w-]+)")  # fresh loopback
        url, token = child.match.group(1), child.match.group(2)
        child.expect(re.escape(W.QUESTION))  # the terminal shows the question
        state = urllib.request.Request(url + "/state", headers={"X-Flower-Token": token})
        (pending,) = json.loads(urllib.request.urlopen(state, timeout=10).read())["pending"]
        answer = urllib.request.Request(
            url + "/answer",
            data=json.dumps({"id": pending["id"], "answer": "LF"}).encode(),
            headers={"Content-Type": "application/json", "Origin": url, "X-Flower-Token": token},
            method="POST",
        )
        assert json.loads(urllib.request.urlopen(answer, timeout=10).read())["ok"] is True
        child.expect("-> LF")  # the page's answer, seen settled in the terminal
        wait = 60.0
        while not scripted_model.requests_for("work") and wait > 0:
            child.expect([pexpect.TIMEOUT], timeout=0.2)
            wait -= 0.2
        child.send("\x03")  # Ctrl-C, as typed
        child.expect("[Ww]hat should the agent hear")  # the pause prompt
        child.send("\x03")
        child.expect(pexpect.EOF, timeout=60)
    finally:
        child.close()
    assert child.exitstatus == 130, log.getvalue()[-3000:]
    assert "Traceback" not in log.getvalue(), log.getvalue()[-4000:]
    (after,) = [r for r in scripted_model.requests_for("clarify") if r.turn == 1]
    assert "LF" in " ".join(after.tool_results().values())


def test_a_finished_runs_page_stays_up_until_a_key(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    import os

    verdict = conversation("verdict", text("## 结论\n已达成\n## 理由\n核对过"), system=W.JUDGE,
                           first_user="ROUND-1")  # fmt: skip
    scripted_model.play(
        [verdict, W.goal_setter(), W.clarifier(), W.coordinator(text("ROUND-1-REPORT 好了"))]
    )
    env = {**os.environ, "TERM": "xterm-256color"}
    log = io.StringIO()
    child = pexpect.spawn(
        W.FLOWER, ["web", "-w", str(workspace), "--port", "0", "--no-bequest", "写个 hello.txt"],
        cwd=str(tmp_path), env=env, encoding="utf-8", codec_errors="replace", timeout=90,
        dimensions=(40, 200), preexec_fn=default_signals,
    )  # fmt: skip
    child.logfile_read = log
    try:
        child.expect(r"open (http://127(?:\.\d+){3}:\d+)/#token=([\w-]+)")  # fresh loopback
        url, token = child.match.group(1), child.match.group(2)
        child.expect(re.escape(W.QUESTION))
        child.send("1\r")  # LF, answered in the terminal
        child.expect(r"stays up 60s more so it can show how the run ended; press any key")
        state = urllib.request.Request(url + "/state", headers={"X-Flower-Token": token})
        over = json.loads(urllib.request.urlopen(state, timeout=10).read())["over"]
        assert over["state"] == "done" and over["stays"] == 60.0, over
        assert over["said"].startswith("the run finished")
        pressed = time.monotonic()
        child.send("q")  # any key ends it
        child.expect(pexpect.EOF, timeout=30)
        took = time.monotonic() - pressed
    finally:
        child.close()
    assert child.exitstatus == 0, log.getvalue()[-3000:]
    assert took < 15, f"the key took {took:.1f} s to end the page"
    assert "Traceback" not in log.getvalue(), log.getvalue()[-4000:]
