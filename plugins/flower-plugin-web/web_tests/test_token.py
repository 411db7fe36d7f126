"""Where the page keeps its token, in real headless Chromium against the real server.

- No other page replaces it: another tab (any site can open the page's address with a
  fragment of its own) and a new fragment in the same tab leave the tab's token as it
  was, until the server takes the new one. (Once, the token lived in the origin's
  ``localStorage``: opening ``/#token=…`` anywhere replaced it for every tab, which
  then locked itself out at the next reload.)
- It does not outlive the run: once the run's server has stopped, or says the token is
  not this run's (another run on the address), the page keeps it nowhere (once, it
  stayed in ``localStorage`` for good); nor does the tab's history keep the fragment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

pytestmark = pytest.mark.e2e
need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.server import serve  # noqa: E402

from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402

QUESTION = "LF or CRLF?"
STORED = "return [localStorage.getItem('flower-token'), sessionStorage.getItem('flower-token')]"


def shown(browser: Any, what: str) -> str:
    from selenium.webdriver.common.by import By

    found = browser.find_elements(By.ID, what)
    return str(found[0].text) if found and found[0].is_displayed() else ""


def waiting(browser: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, 30, poll_frequency=0.1)


def test_no_other_page_replaces_the_tabs_token(tmp_path: Path, browser: Any) -> None:
    hub, channel, _ = hub_with_question(tmp_path)
    wait = waiting(browser)
    with served(hub) as running:
        browser.get(f"{running.url}/#token={TOKEN}")
        wait.until(lambda _: QUESTION in shown(browser, "asks"))
        first = browser.current_window_handle
        # another page opens the page's address with a token of its own
        browser.switch_to.new_window("tab")
        browser.get(f"{running.url}/#token=not-this-runs")
        wait.until(lambda _: "does not open the run" in shown(browser, "notice"))
        assert browser.execute_script(STORED) == [None, None]  # kept nowhere
        browser.close()
        browser.switch_to.window(first)
        browser.refresh()
        wait.until(lambda _: QUESTION in shown(browser, "asks"))
        assert shown(browser, "notice") == ""
        # a new fragment in this very tab: kept only once the server takes it
        browser.execute_script("location.hash = '#token=not-this-runs-either'")
        wait.until(lambda _: "does not open the run" in shown(browser, "notice"))
        assert "token" not in browser.current_url
        browser.refresh()
        wait.until(lambda _: QUESTION in shown(browser, "asks"))
        assert shown(browser, "notice") == "" and shown(browser, "link") == "live"
        assert browser.execute_script(STORED) == [None, TOKEN]  # this tab's, no one else's
    assert channel.pending()  # nothing was answered on the way


def test_the_token_is_forgotten_once_the_run_is_over(tmp_path: Path, browser: Any) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    wait = waiting(browser)
    with served(hub) as running:
        browser.get(f"{running.url}/#token={TOKEN}")
        wait.until(lambda _: QUESTION in shown(browser, "asks"))
        # the fragment is out of the address bar and out of the tab's history
        assert "token" not in browser.current_url
        browser.back()
        browser.forward()
        wait.until(lambda _: QUESTION in shown(browser, "asks"))
        assert "token" not in browser.current_url
        ended = {"state": "done", "said": "the run finished", "code": 0, "lines": [],
                 "total": "$0.0000", "stays": 0}  # fmt: skip
        hub.end(ended)
        wait.until(lambda _: "The run finished" in shown(browser, "ended"))
    wait.until(lambda _: shown(browser, "link") == "server stopped")
    assert browser.execute_script(STORED) == [None, None]
    assert "The run finished" in shown(browser, "ended")  # what it showed stays


def test_a_token_that_is_not_this_runs_is_forgotten(tmp_path: Path, browser: Any) -> None:
    hub, _, _ = hub_with_question(tmp_path / "a")
    wait = waiting(browser)
    first = serve("127.0.0.1", 0, token=TOKEN, hub=hub)
    port = port_of(first)
    try:
        browser.get(f"{first.url}/#token={TOKEN}")
        wait.until(lambda _: QUESTION in shown(browser, "asks"))
    finally:
        first.stop()  # the run dies without a word to the page
    other, _, _ = hub_with_question(tmp_path / "b", question="Force-push?")
    second = serve("127.0.0.1", port, token="another-runs-token", hub=other)
    try:  # the next run on the same address: the page's reconnection is refused (401)
        wait.until(lambda _: "does not open the run on this port" in shown(browser, "notice"))
        assert browser.execute_script(STORED) == [None, None]
        assert shown(browser, "link") == "locked"
    finally:
        second.stop()
