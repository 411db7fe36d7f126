"""What looks like something else on the page, in Chromium: a link's "external" marker
names the host the browser would go to (``https://github.com@evil.example/`` was
marked ``github.com@evil.example``: what precedes the ``@`` is a user name), and a
question's options that differ only by a bidi control, a zero-width character or an
unusual space show differently (``⟨U+202E⟩``), the click still sending the option as it
was."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.render import link_host, render_markdown  # noqa: E402

from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402

LINKS = [
    "https://github.com@evil.example/",
    "https://github.com%2F@evil.example/x",
    "https://user:pass@evil.example:8443/",
    "https://GitHub.COM:443/a",
    "https://%65vil.example/",
    "https://0x7f.1/",
    "https://2130706433/",
    "https://münchen.example/",
    "https://[::1]:99/",
    "http://evil.example./",
    "https://github.com\\@evil.example/",
]
LOOKALIKES = ["yes", "\u202eyes", "ye\u200bs", "yes\u2060"]
#: A dead run's question (``pending.json``, which the agents can write) keeps its
#: options' spaces, which the live channel normalises.
SPACED = ["y es", "y\u00a0es", "y es ", "y\u3000es"]


def test_the_marker_names_the_host_not_the_user() -> None:
    assert link_host("https://github.com@evil.example/") == "evil.example"
    shown = render_markdown("[github](https://github.com@evil.example/)")
    assert "external: evil.example</span>" in shown and "external: github.com" not in shown
    assert link_host("https://x:99999/") is None and link_host("http://[::1") is None
    assert link_host("javascript:alert(1)") is None and link_host("file:///etc") is None


def open_page(driver: Any, port: int) -> None:
    driver.get(f"http://127.0.0.1:{port}/#token={TOKEN}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if driver.find_elements("css selector", ".ask button"):
            return
        time.sleep(0.1)
    raise AssertionError(driver.page_source[:2000])


@pytest.mark.e2e
def test_each_marker_names_the_host_the_browser_goes_to(tmp_path: Path, browser: Any) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    brief = "\n\n".join(f"[link {n}]({url})" for n, url in enumerate(LINKS))
    (tmp_path / ".flower" / "notes" / "需求.md").write_text(brief, encoding="utf-8")
    with served(hub) as running:
        open_page(browser, port_of(running))
        browser.find_element("css selector", "[data-doc=brief]").click()
        deadline = time.monotonic() + 20
        while len(browser.find_elements("css selector", "#doc a.external")) < len(LINKS):
            assert time.monotonic() < deadline, browser.page_source[:3000]
            time.sleep(0.1)
        pairs = browser.execute_script(
            "return Array.from(document.querySelectorAll('#doc a.external'), (a) =>"
            " [a.getAttribute('href'), a.host, a.nextElementSibling.textContent]);"
        )
    for href, host, marker in pairs:
        said = re.fullmatch(r" ↗ external: (.+)", marker)
        assert said is not None, marker
        assert said.group(1) == host, (href, host, marker)  # as Chromium parsed the href


@pytest.mark.e2e
def test_options_that_look_alike_show_differently(tmp_path: Path, browser: Any) -> None:
    hub, channel, asked = hub_with_question(tmp_path, "Go ahead?\u202e", tuple(LOOKALIKES))
    left = {"pid": 0, "asks": [], "stale": [{"id": "q9", "question": "Which?", "options": SPACED}]}
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "pending.json").write_text(json.dumps(left), encoding="utf-8")
    with served(hub) as running:
        open_page(browser, port_of(running))
        buttons = browser.find_elements("css selector", ".ask button")[: len(LOOKALIKES)]
        shown = [b.text for b in buttons]
        question = browser.find_element("css selector", ".ask div").text
        assert len(set(shown)) == len(LOOKALIKES), shown
        assert shown == ["1) yes", "2) ⟨U+202E⟩yes", "3) ye⟨U+200B⟩s", "4) yes⟨U+2060⟩"]
        assert question == "Go ahead?⟨U+202E⟩"
        stale = browser.find_elements("css selector", ".ask")[1]
        spaced = [b.text for b in stale.find_elements("css selector", "button")][:4]
        assert spaced == ["1) y es", "2) y⟨U+00A0⟩es", "3) y es␣", "4) y⟨U+3000⟩es"]
        buttons[1].click()
        asked.join(10)
    assert [a.answer for a in channel.asks] == ["\u202eyes"]  # the option as it was
