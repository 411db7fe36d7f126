"""The page in a real browser (headless Chromium, Selenium) against a scripted run of
``flower web`` through the real Claude Code CLI.

One run, bound to every interface (the page answers to 127.0.0.1 too), the token read
from the URL's fragment and taken out of the address bar: the page shows the clarify
step's question and a click answers it (the agent's next request carries the answer);
while the coordinator waits on its own question, an inbox line typed on the page lands
in the brief, a side question gets the oracle's answer (the header keeps the real step
meanwhile), a ``?`` line typed as the answer is a side question too, the brief shows
rendered, and a typed answer settles the question; the events panel says what the
terminal says (the raw payloads behind a toggle); a ``<script>`` a tool printed shows as
text and never runs; the stream survives a reload; a request without the token is
refused.

The end: the page says how the run ended, with the terminal's closing line, and one
total (the steps and the side questions, labelled) that the terminal, the page's header
and the manifests agree on; it stays readable, across a reload, while ``--linger`` keeps
the server up, and once the server stops it says so, never "reconnecting". The terminal
showed what the page sent: the inbox line and both side questions, marked ``(page)``.
"""

from __future__ import annotations

import json
import os
import re
import signal
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
ASIDE_TOO = "还要多久?"  # typed as "? ..." in the answer box: a side question, not the answer
ORACLE_SAYS = "在干活这一步,协调者在等你回答要不要写测试。"
#: The total as the terminal's closing line and the page say it.
TOTAL = r"total \$(\d+\.\d{4})(?: simulated)? \(side questions \$(\d+\.\d{4})\)"
#: Records what the header shows (step, sub-step, link) every time it changes.
WATCH_HEADER = """
window.heads = [];
const seen = () => window.heads.push([document.getElementById("step").textContent,
  document.getElementById("sub").textContent, document.getElementById("link").textContent]);
new MutationObserver(seen).observe(document.querySelector("header"),
  {subtree: true, childList: true, characterData: true});
seen();
"""


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
            "--timeout", "90", "--no-bequest", "--linger", "120", "写个 hello.txt"]  # fmt: skip
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
        browser.execute_script(WATCH_HEADER)
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
        # the page empties the box once the server's answer arrives (later than the brief's
        # write on a loaded machine): only then is the next line typed
        wait.until(lambda _: box.get_attribute("value") == "")
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
        heads = browser.execute_script("return window.heads")
        assert heads[-1][0].startswith("干活 (work) (step 3/3)"), heads[-1]
        assert not [h for h in heads if "旁路问答" in "".join(h) or "side question" in "".join(h)]
        # "? ..." typed as the answer is a side question: the question still waits
        answer = browser.find_element(By.CSS_SELECTOR, "#asks .ask input[name=answer]")
        answer.send_keys(f"？ {ASIDE_TOO}")
        answer.submit()
        wait.until(lambda d: d.find_element(By.ID, "asides").text.count(ORACLE_SAYS) == 2)
        assert f"? {ASIDE_TOO}" in browser.find_element(By.ID, "asides").text
        assert SECOND_Q in browser.find_element(By.ID, "asks").text
        assert not [r for r in scripted_model.requests_for("work") if r.turn == 1]
        # the brief, rendered, with the line from the inbox in it
        browser.find_element(By.CSS_SELECTOR, "button[data-doc=brief]").click()
        wait.until(lambda d: INBOX in d.find_element(By.ID, "doc").text)
        assert browser.find_element(By.CSS_SELECTOR, "#doc h2").text  # Markdown, rendered
        answer = browser.find_element(By.CSS_SELECTOR, "#asks .ask input[name=answer]")
        answer.send_keys("不要,先把文件写好")
        answer.submit()

        # the events panel says what the terminal says, never a raw payload
        done_line = r"\* 确认需求 done - \d+ turns? - \$\d+\.\d{4} - "
        wait.until(lambda _: re.search(done_line, stream()))
        assert "> (page) " + INBOX in stream() and "cost_usd" not in stream()
        assert not re.search(r"\d\.\d{7,}", stream()) and "[result]" not in stream()
        # the raw payloads, and the events the terminal leaves out, behind the toggle
        browser.find_element(By.ID, "raw").click()
        wait.until(lambda _: "[result]" in stream() and '"cost_usd":' in stream())
        # what a tool printed is text on the page, never code
        wait.until(lambda _: PAYLOAD in stream())
        assert browser.execute_script("return window.pwned") is None

        # the end: how it ended, the terminal's closing line, one total
        wait.until(lambda d: d.find_element(By.ID, "ended").is_displayed())
        ended = browser.find_element(By.ID, "ended").text
        assert ended.startswith("The run finished: "), ended
        (closing,) = [x for x in ended.splitlines() if x.startswith("* done - total $")]
        page_total = re.search(TOTAL, closing)
        assert page_total, closing
        assert browser.find_element(By.ID, "cost").text == page_total.group(0)
        assert "stays up until" in ended
        assert browser.find_element(By.ID, "link").text == "run over"  # the server lingers
        assert browser.find_element(By.CSS_SELECTOR, "#inbox input").get_attribute("disabled")
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
        browser.refresh()  # the stream comes back whole, and the end with it
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#stream > div")) >= seen)
        browser.find_element(By.ID, "raw").click()
        assert browser.find_element(By.CSS_SELECTOR, "#stream > div").text == first_line
        assert PAYLOAD in stream() and browser.execute_script("return window.pwned") is None
        wait.until(lambda d: d.find_element(By.ID, "ended").text == ended)
        browser.execute_script(WATCH_HEADER)
        # the server stops (Ctrl-C ends the linger): the page says so and keeps its words
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        wait.until(lambda d: "server stopped at" in d.find_element(By.ID, "ended").text)
        time.sleep(3)  # a page that reconnected would have tried by now
        links = {h[2] for h in browser.execute_script("return window.heads")}
        assert links <= {"live", "run over", "server stopped"}, links  # never "reconnecting"
        assert browser.find_element(By.ID, "link").text == "server stopped"
        assert browser.find_element(By.ID, "ended").text.startswith(ended.split("\n")[0])
        assert browser.find_element(By.ID, "cost").text == page_total.group(0)
        assert re.search(done_line, stream())
        if SCREENSHOT:  # and one of the end: <name>-ended.png beside it
            browser.save_screenshot(str(Path(SCREENSHOT).with_suffix("")) + "-ended.png")
    finally:
        if proc.poll() is None:
            proc.kill()
        output = proc.stdout.read() if proc.stdout else ""

    # the terminal showed what the page sent, and closed with the page's total
    assert f"> (page) {INBOX}" in output, output[-3000:]
    assert f"? (page) {ASIDE} (asking on the side" in output
    assert f"? (page) {ASIDE_TOO} (asking on the side" in output
    assert output.count(f"? {ORACLE_SAYS}") == 2
    terminal_total = re.search(r"\* done - (" + TOTAL + ")", output)
    assert terminal_total and terminal_total.group(1) == page_total.group(0), output[-2000:]
    # ... which is what the manifests say: the run's steps and its side questions
    run_dir = next(workspace.rglob("aside")).parent
    steps = json.loads((run_dir / "manifest.json").read_text())
    sides = json.loads((run_dir / "aside" / "manifest.json").read_text())
    assert len(sides) == 2
    side_usd = sum(float(r.get("cost_usd") or 0) for r in sides)
    all_usd = side_usd + sum(float(r.get("cost_usd") or 0) for r in steps)
    assert float(page_total.group(2)) == pytest.approx(side_usd, abs=6e-5) and side_usd > 0
    assert float(page_total.group(1)) == pytest.approx(all_usd, abs=6e-5)

    # the agents heard the page: the clarifier got the clicked option, the coordinator
    # the typed answer
    (after_click,) = [r for r in scripted_model.requests_for("clarify") if r.turn == 1]
    assert "LF" in " ".join(after_click.tool_results().values()), output[-2000:]
    (after_typed,) = [r for r in scripted_model.requests_for("work") if r.turn == 1]
    assert "不要,先把文件写好" in " ".join(after_typed.tool_results().values())
    assert (workspace / "hello.txt").read_text() == "hi"
