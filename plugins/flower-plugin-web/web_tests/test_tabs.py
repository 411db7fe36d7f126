"""Tabs in one real browser (headless Chromium) against real ``flower web`` processes.

- Two runs on one host, different ports, open side by side: both pages work (each
  tab keeps its own token; a cookie, which ignores ports, once made the second page
  lock the first out and its answers fail silently).
- A tab left open across two runs on one address and port (``--host``/``--port`` given;
  by default every run has a fresh one): run A's tab clicks "LF" on A's
  ``q1`` after run B has started and asks its own ``q1`` ("Force-push over
  origin/main?"). The click is refused and said so on the page; B's question stays
  waiting. With B's token, A's question id is still refused (another run's segment),
  A's ``Last-Event-ID`` gets B's stream from the start, flagged; the new URL pasted
  into the old tab starts the page over on run B.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from flower.testing import ScriptedModel, conversation, need, text, tool

from . import scripts as W
from .conftest import NOT_INSTALLED, PLUGIN
from .runs import WebRun, start_web

pytestmark = pytest.mark.e2e
need(PLUGIN, NOT_INSTALLED)

FORCE = "Force-push over origin/main?"


def force_clarifier() -> Any:
    asked = tool("mcp__human__ask", {"question": FORCE, "options": ["yes", "no"]})
    return conversation("clarify-b", asked, text(W.BRIEF), system=W.CLARIFIER)


def first_stream_lines(run: WebRun, last_event_id: str) -> list[dict[str, Any]]:
    headers = {"X-Flower-Token": run.token, "Last-Event-ID": last_event_id}
    request = urllib.request.Request(run.url + "/events", headers=headers)
    with urllib.request.urlopen(request, timeout=20) as response:
        found: list[dict[str, Any]] = []
        while len(found) < 2:
            line = response.readline().decode()
            if line.startswith("data: "):
                found.append(json.loads(line[6:]))
        return found


def test_tabs_across_ports_and_across_runs(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    tmp_path: Path,
    browser: Any,
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    need(Path(W.FLOWER).exists(), "the flower command is not installed next to this Python")
    # The tabs go from one run's page to another's: an element found just before a
    # navigation is gone by the time its text is read; the next poll finds the new one.
    wait = WebDriverWait(
        browser, 60, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,)
    )
    scripted_model.play([W.clarifier()])
    spaces = [tmp_path / name for name in ("a", "c", "b")]
    for ws in spaces:
        ws.mkdir()
    a = start_web(spaces[0], tmp_path, "--no-goal")
    c = start_web(spaces[1], tmp_path, "--no-goal")
    runs = [a, c]

    def asks() -> str:
        return str(browser.find_element(By.ID, "asks").text)

    def notice() -> str:
        shown = browser.find_element(By.ID, "notice")
        return str(shown.text) if shown.is_displayed() else ""

    try:
        assert a.port != c.port
        for run in (a, c):
            run.wait_for(lambda run=run: bool(run.pending()), what="the question")
        browser.get(f"{a.url}/#token={a.token}")
        wait.until(lambda _: W.QUESTION in asks())
        tab_a = browser.current_window_handle
        browser.switch_to.new_window("tab")
        browser.get(f"{c.url}/#token={c.token}")
        wait.until(lambda _: W.QUESTION in asks())
        browser.find_element(By.CSS_SELECTOR, "#asks button[data-answer='LF']").click()
        c.wait_for(lambda: not c.pending(), what="C's question answered from its tab")
        c.stop()

        # tab A still works after tab C was opened on the same host
        browser.switch_to.window(tab_a)
        box = browser.find_element(By.CSS_SELECTOR, "#inbox input[name=text]")
        box.send_keys("先别动 README")
        browser.find_element(By.CSS_SELECTOR, "#inbox button").click()
        wait.until(lambda d: "先别动 README" in d.find_element(By.ID, "stream").text)
        assert notice() == "" and box.get_attribute("value") == ""
        stale_ask = a.pending()[0]["id"]
        assert W.QUESTION in asks()

        # run A dies with its question open (the tab never hears it end); run B starts
        # on the same address and port (given: by default each run has an origin of its own)
        a.proc.kill()
        a.proc.wait(10)
        scripted_model.play([force_clarifier()])
        b = start_web(spaces[2], tmp_path, "--no-goal", port=a.port, host=a.host)
        runs.append(b)
        b.wait_for(lambda: bool(b.pending()), what="B's question")
        (b_ask,) = b.pending()
        assert b_ask["question"] == FORCE and b_ask["id"] != stale_ask
        assert b_ask["id"].endswith("-q1") and stale_ask.endswith("-q1")  # both q1 inside

        # the stale tab's click on A's "LF" does not answer B's q1, and says so
        assert W.QUESTION in asks()
        browser.find_element(By.CSS_SELECTOR, "#asks button[data-answer='LF']").click()
        wait.until(lambda _: "token does not open the run on this port" in notice())
        assert [p["id"] for p in b.pending()] == [b_ask["id"]]

        # B's token with A's id: refused as another run's, never applied to B's q1
        status, said = b.post("/answer", {"id": stale_ask, "answer": "yes"})
        assert status == 409 and "another run" in said["error"]
        assert [p["id"] for p in b.pending()] == [b_ask["id"]]
        # A's Last-Event-ID on B: B's stream from the start, flagged as a fresh copy
        hello, first = first_stream_lines(b, stale_ask.split("-")[0] + "-40")
        assert hello["reset"] is True and first["id"] == f"{b_ask['id'].split('-')[0]}-1"

        # B's URL pasted into the old tab: the page starts over on run B
        browser.get(f"{b.url}/#token={b.token}")
        wait.until(lambda _: FORCE in asks())
        assert W.QUESTION not in asks()
        browser.find_element(By.CSS_SELECTOR, "#asks button[data-answer='no']").click()
        b.wait_for(lambda: not b.pending(), what="B's question answered from the tab")
        # the answer reaches the model before B is stopped (SIGTERM stops the CLI at once)
        b.wait_for(
            lambda: any(r.turn == 1 for r in scripted_model.requests_for("clarify-b")),
            what="the answer's request to the model",
        )
    finally:
        for run in runs:
            run.stop()
    answered = [r for r in scripted_model.requests_for("clarify-b") if r.turn == 1]
    assert answered and all("no" in " ".join(r.tool_results().values()) for r in answered)
