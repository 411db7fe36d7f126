"""A flood of young connections from another local user (``runuser -u nobody``): 600 new
connections a second, each sending a request's first line and stalling. Such
connections are all too young to count as slow, so they once filled the page's budget
and most of the owner's requests were turned away (40 % served here; 21-43 % in the
security check), and a page opened then never went live. Now a newcomer whose request
came whole evicts the oldest of them, and one showing the token is trusted at once:
the owner's requests are served and a fresh page in Chromium goes live.
"""

from __future__ import annotations

import http.client
import time
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402
from .young import YoungFlood  # noqa: E402

RATE = 600  # new connections a second
ASKED = 30  # owner requests, each on a fresh connection as a browser opening the page


def at_height(running: Any, seconds: float = 15) -> None:
    """Until the flood has filled the budget and newcomers are being turned away."""
    gate, deadline = running.gate, time.monotonic() + seconds
    while gate.refused + gate.evicted < 2 * gate.budget and time.monotonic() < deadline:
        time.sleep(0.05)


def owner_requests(port: int) -> list[float | str]:
    out: list[float | str] = []
    for _ in range(ASKED):
        started = time.monotonic()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/state", headers={"X-Flower-Token": TOKEN})
            response = conn.getresponse()
            response.read()
            conn.close()
            ok = response.status == 200
            out.append(time.monotonic() - started if ok else str(response.status))
        except OSError as exc:
            out.append(type(exc).__name__)
        time.sleep(0.2)
    return out


def test_the_owner_is_served_through_a_flood_of_young_connections(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    need(YoungFlood.missing() is None, str(YoungFlood.missing()))
    hub, _, _ = hub_with_question(tmp_path)
    with served(hub) as running:
        port, gate = port_of(running), running.gate
        with YoungFlood("127.0.0.1", port, RATE) as flood:
            at_height(running)
            seen = owner_requests(port)
        times = sorted(t for t in seen if isinstance(t, float))
        figures = (
            f"young flood as nobody, {RATE}/s: {flood.seen}; owner {len(times)}/{len(seen)}"
            f" served, p50 {times[len(times) // 2] * 1e3 if times else -1:.0f} ms;"
            f" failed {[t for t in seen if isinstance(t, str)]}; budget {gate.budget},"
            f" evicted {gate.evicted}, refused {gate.refused}"
        )
        with capfd.disabled():
            print(figures)
        assert gate.refused + gate.evicted > gate.budget, figures  # the flood was past it
        assert len(times) >= 0.8 * len(seen), figures  # a clear majority (today: all)


@pytest.mark.e2e
def test_a_fresh_page_goes_live_under_the_flood(tmp_path: Path, browser: Any) -> None:
    need(YoungFlood.missing() is None, str(YoungFlood.missing()))
    hub, _, _ = hub_with_question(tmp_path)
    with served(hub) as running:
        port = port_of(running)
        with YoungFlood("127.0.0.1", port, RATE) as flood:
            at_height(running)
            started = time.monotonic()
            browser.get(f"http://127.0.0.1:{port}/#token={TOKEN}")
            deadline, link = started + 60, ""
            while time.monotonic() < deadline:
                link = browser.execute_script("return document.getElementById('link').textContent")
                asked = browser.execute_script("return document.querySelectorAll('.ask').length")
                if link == "live" and asked:
                    break
                time.sleep(0.2)
            took = time.monotonic() - started
        assert (link, asked) == ("live", 1), f"after {took:.1f}s: {link!r}; {flood.seen}"
