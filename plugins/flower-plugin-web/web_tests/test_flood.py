"""A run under a flood: ``flower web`` with its descriptor limit lowered to 256, and more
idle sockets than that kept open to its page (reconnecting as the page closes them)
while the run works. The owner's requests are still served, the run answers, takes an
inbox line into its brief, finishes with exit 0 and writes its documents; the page
never holds more than its budget of descriptors. (Once, 1,100 idle sockets took the
1,024 descriptors of a run, which died writing its brief.)"""

from __future__ import annotations

import os
import resource
import statistics
import threading
import time
from pathlib import Path

import pytest

from flower.testing import ScriptedModel, bash, conversation, need, text, tool

from . import scripts as W
from .conftest import NOT_INSTALLED, PLUGIN
from .flood import Flood, owner_latencies, summary
from .runs import start_web

pytestmark = pytest.mark.e2e
need(PLUGIN, NOT_INSTALLED)

LIMIT = 256  # the run's descriptors, page included
FLOOD = 600  # sockets kept open to the page: more than the whole limit
INBOX = "另外把 README 也写上"


def low_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def test_a_flood_past_the_file_limit_leaves_the_run_and_its_owner_alone(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    need(Path(W.FLOWER).exists(), "the flower command is not installed next to this Python")
    scripted_model.play(
        [
            conversation("coder", bash("printf hi > hello.txt"), text("done"), subagent=True),
            W.clarifier(),
            W.coordinator(tool("Agent", W.DISPATCH), text("ROUND-1-REPORT 写好了", delay=3)),
        ]
    )
    run = start_web(workspace, tmp_path, "--no-goal", "--timeout", "120", preexec_fn=low_limit)
    most_fds, sampling = 0, threading.Event()

    def sample() -> None:
        nonlocal most_fds
        while not sampling.is_set():
            try:
                most_fds = max(most_fds, len(os.listdir(f"/proc/{run.proc.pid}/fd")))
            except OSError:
                return
            time.sleep(0.05)

    try:
        run.wait_for(lambda: bool(run.pending()), what="the clarifier's question")
        threading.Thread(target=sample, daemon=True).start()
        with Flood(run.host, run.port, FLOOD, reconnect=True) as flood:
            time.sleep(1.0)  # the flood is at its height
            latencies = owner_latencies(run.host, run.port, run.token, count=10)
            (asked,) = run.pending()
            started = time.monotonic()
            status, said = run.post("/answer", {"id": asked["id"], "answer": "LF"})
            answer_took = time.monotonic() - started
            assert (status, said) == (200, {"ok": True})
            run.wait_for(lambda: bool(scripted_model.requests_for("work")), what="the work")
            status, said = run.post("/inbox", {"text": INBOX})  # written into 需求.md
            assert (status, said) == (200, {"ok": True})
            code = run.proc.wait(90)
            opened = flood.opened
        sampling.set()
    finally:
        sampling.set()
        run.stop()
    times = [t for t in latencies if isinstance(t, float)]
    figures = (
        f"flood: {opened} connections opened ({FLOOD} at a time) against a limit of {LIMIT};"
        f" most descriptors held by flower web: {most_fds}; owner: {summary(latencies)},"
        f" answer {answer_took * 1e3:.0f} ms; run exit {code}"
    )
    print(figures)
    assert code == 0, figures + "\n" + run.output[-3000:]
    assert len(times) == len(latencies), figures  # every owner request served
    assert statistics.median(times) < 1.0, figures
    assert most_fds < LIMIT - 32, figures  # the page kept to its budget, the run had room
    brief = (workspace / ".flower" / "notes" / "需求.md").read_text(encoding="utf-8")
    assert "hello.txt 的内容是 hi" in brief and INBOX in brief
    assert (workspace / "hello.txt").read_text() == "hi"
    assert "Too many open files" not in run.output and "Traceback" not in run.output
    assert len(run.output) < 20_000, run.output[-3000:]  # the terminal was not flooded
