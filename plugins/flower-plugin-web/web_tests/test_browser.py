"""The page in a real browser (headless Chromium, Selenium) against a scripted run of
``flower web`` through the real Claude Code CLI.

One run, bound to every interface (the page answers to 127.0.0.1 too), the token read
from the URL's fragment and taken out of the address bar: the page shows the clarify
step's question and a click answers it (the agent's next request carries the answer);
while the coordinator waits on its own question, an inbox line typed on the page lands
in the brief, a side question gets the oracle's answer, the brief shows rendered, and a
typed answer settles the question; a ``<script>`` a tool printed shows as text and never
runs; the stream survives a reload; a request without the token is refused.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from flower.testing import ScriptedModel, bash, conversation, need, text, tool

from . import scripts as W
from .conftest import NOT_INSTALLED, PLUGIN

pytestmark = pytest.mark.e2e
need(PLUGIN, NOT_INSTALLED)

SCREENSHOT = os.environ.get("FLOWER_WEB_SCREENSHOT")  # where to keep a picture of the page
PAYLOAD = "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>"
FIRST_Q = W.QUESTION
SECOND_Q = "要不要顺便写测试?"
INBOX = "另外把 README 也写上"
ASIDE = "现在到哪了?"
ORACLE_SAYS = "在干活这一步,协调者在等你回答要不要写测试。"


def script() -> list[Any]:
    return [
        conversation("oracle", text(ORACLE_SAYS), system="你是旁路问答"),
        conversation(
            "coder",
            bash(f"printf '%s' '{PAYLOAD}' > page.html; cat page.html; printf hi > hello.txt"),
            text("done"),
            subagent=True,
        ),
        conversation(
            "verdict",
            text("## 结论\n已达成\n## 理由\n核对过"),
            system=W.JUDGE,
            first_user="ROUND-1",
        ),
        W.goal_setter(),
        W.clarifier(),
        W.coordinator(
            tool("mcp__human__ask", {"question": SECOND_Q, "options": ["要", "不要"]}),
            tool("Agent", W.DISPATCH),
            text("ROUND-1-REPORT 写好了"),
        ),
    ]


def start(workspace: Path, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    args = [W.FLOWER, "web", "-w", str(workspace), "--host", "0.0.0.0", "--port", "0",
            "--timeout", "90", "--no-bequest", "写个 hello.txt"]  # fmt: skip
    proc = subprocess.Popen(
        args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        found = re.search(r"open (http://\S+)", line)
        if found:
            return proc, found.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("flower web printed no URL")


def refused_without_token(url: str) -> int:
    bare = url.split("#")[0].rstrip("/")
    request = urllib.request.Request(
        bare + "/answer",
        data=json.dumps({"id": "q1", "answer": "CRLF"}).encode(),
        headers={"Content-Type": "application/json", "Origin": bare},
        method="POST",
    )
    try:
        urllib.request.urlopen(request, timeout=10)
    except urllib.error.HTTPError as exc:
        return exc.code
    return 200


def test_follow_and_answer_a_run_from_the_page(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    browser: Any,
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    need(Path(W.FLOWER).exists(), "the flower command is not installed next to this Python")
    scripted_model.play(script())
    proc, url = start(workspace, tmp_path)
    wait = WebDriverWait(browser, 60, poll_frequency=0.1)

    def stream() -> str:
        return str(browser.find_element(By.ID, "stream").text)

    try:
        assert "/#token=" in url  # a token, printed once, in the URL's fragment
        url = url.replace(url.split("//")[1].split(":")[0], "127.0.0.1", 1)
        browser.get(url)
        # the page took the token out of the address bar (and so out of the history)
        wait.until(lambda d: "token" not in d.current_url)
        # the clarify step's question, with its options as buttons
        wait.until(lambda d: FIRST_Q in d.find_element(By.ID, "asks").text)
        assert refused_without_token(url) == 401  # no token, no answer
        browser.find_element(By.CSS_SELECTOR, "#asks button[data-answer='LF']").click()
        wait.until(lambda d: FIRST_Q not in d.find_element(By.ID, "asks").text)

        # the coordinator's own question: meanwhile, a line for the inbox
        wait.until(lambda d: SECOND_Q in d.find_element(By.ID, "asks").text)
        box = browser.find_element(By.CSS_SELECTOR, "#inbox input[name=text]")
        box.send_keys(INBOX)
        browser.find_element(By.CSS_SELECTOR, "#inbox button").click()
        brief = workspace / ".flower" / "notes" / "需求.md"
        wait.until(lambda _: INBOX in brief.read_text(encoding="utf-8"))
        # a refused change is said on the page, never swallowed, and what was typed stays
        browser.execute_script("arguments[0].value = 'x'.repeat(4001)", box)
        browser.find_element(By.CSS_SELECTOR, "#inbox button").click()
        wait.until(lambda d: "the line is too long" in d.find_element(By.ID, "notice").text)
        assert len(box.get_attribute("value")) == 4001
        assert "x" * 4001 not in brief.read_text(encoding="utf-8")
        box.clear()
        if SCREENSHOT:
            browser.save_screenshot(SCREENSHOT)
        # a side question, answered by the read-only oracle while the run waits
        side = browser.find_element(By.CSS_SELECTOR, "#aside input[name=question]")
        side.send_keys(ASIDE)
        browser.find_element(By.CSS_SELECTOR, "#aside button").click()
        wait.until(lambda d: ORACLE_SAYS in d.find_element(By.ID, "asides").text)
        # the brief, rendered, with the line from the inbox in it
        browser.find_element(By.CSS_SELECTOR, "button[data-doc=brief]").click()
        wait.until(lambda d: INBOX in d.find_element(By.ID, "doc").text)
        assert browser.find_element(By.CSS_SELECTOR, "#doc h2").text  # Markdown, rendered
        answer = browser.find_element(By.CSS_SELECTOR, "#asks .ask input[name=answer]")
        answer.send_keys("不要,先把文件写好")
        answer.submit()

        # what a tool printed is text on the page, never code
        wait.until(lambda _: PAYLOAD in stream())
        assert browser.execute_script("return window.pwned") is None
        wait.until(lambda _: "[result]" in stream())
        seen = len(browser.find_elements(By.CSS_SELECTOR, "#stream > div"))
        first_line = browser.find_element(By.CSS_SELECTOR, "#stream > div").text

        steps = browser.find_element(By.ID, "steps").text  # every step and round, with its state
        assert "确认需求 (clarify) ok $" in steps and "设定目标 (set the goal) ok $" in steps
        assert "干活 (work) " in steps  # each step name (a key) with its English gloss
        glossed = browser.execute_script(
            "return ['干活·判定#2', '干活#round3', '收尾', 'my step'].map(label)"
        )
        assert glossed == [
            "干活·判定#2 (work · judge #2)",
            "干活#round3 (work, round 3)",
            "收尾 (bequest)",
            "my step",
        ]
        browser.refresh()  # the stream comes back whole
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#stream > div")) >= seen)
        assert browser.find_element(By.CSS_SELECTOR, "#stream > div").text == first_line
        assert PAYLOAD in stream() and browser.execute_script("return window.pwned") is None
        assert proc.wait(120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        output = proc.stdout.read() if proc.stdout else ""

    # the agents heard the page: the clarifier got the clicked option, the coordinator
    # the typed answer
    (after_click,) = [r for r in scripted_model.requests_for("clarify") if r.turn == 1]
    assert "LF" in " ".join(after_click.tool_results().values()), output[-2000:]
    (after_typed,) = [r for r in scripted_model.requests_for("work") if r.turn == 1]
    assert "不要,先把文件写好" in " ".join(after_typed.tool_results().values())
    assert (workspace / "hello.txt").read_text() == "hi"
