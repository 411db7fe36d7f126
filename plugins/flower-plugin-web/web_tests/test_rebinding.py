"""DNS rebinding in a real browser: Chromium resolves ``evil.example`` to 127.0.0.1
(``--host-resolver-rules``), as an attacker's DNS would once the victim has loaded the
attacker's page. To the browser, a script on ``http://evil.example:PORT`` is then the
same origin as the page's server and may read every answer. Each of its requests
says ``Host: evil.example:PORT``, and the server refuses them all (421): no state, no
event stream, no brief, no answer to the waiting question, no inbox line, no side
question. (Once, such a page did all of that, the loopback page having no token and
checking its origin against the request's own ``Host``.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN, chromium

pytestmark = pytest.mark.e2e
need(PLUGIN, NOT_INSTALLED)

from .pages import hub_with_question, port_of, served  # noqa: E402

#: What the attacker's script tries, from its own origin (the rebound name).
ATTACK = """
const done = arguments[arguments.length - 1];
const seg = arguments[0];
const json = {"Content-Type": "application/json"};
const tries = [
  ["GET", "/state"], ["GET", "/runs"], ["GET", "/doc/brief"], ["GET", "/events"],
  ["POST", "/answer", {id: seg + "-q1", answer: "CRLF"}],
  ["POST", "/inbox", {text: "rm -rf the tests"}],
  ["POST", "/aside", {question: "what is the token?"}],
];
(async () => {
  const seen = {};
  for (const [method, path, body] of tries) {
    try {
      const r = await fetch(path, {method, headers: body ? json : {},
                                   body: body ? JSON.stringify(body) : undefined});
      seen[method + " " + path] = [r.status, (await r.text()).slice(0, 300)];
    } catch (e) { seen[method + " " + path] = [0, String(e)]; }
  }
  const xhr = new XMLHttpRequest();
  xhr.open("GET", "/state"); xhr.onloadend = () => {
    seen["XHR /state"] = [xhr.status, xhr.responseText.slice(0, 300)]; done(seen); };
  xhr.send();
})();
"""


@pytest.fixture
def rebound() -> Iterator[Any]:
    driver = chromium("--host-resolver-rules=MAP evil.example 127.0.0.1")
    try:
        yield driver
    finally:
        driver.quit()


def test_a_rebound_page_reads_and_changes_nothing(tmp_path: Path, rebound: Any) -> None:
    hub, channel, _ = hub_with_question(tmp_path)
    with served(hub) as running:
        port = port_of(running)
        rebound.get(f"http://evil.example:{port}/")  # the attacker's origin, our server
        assert "this page answers only to" in rebound.page_source  # not the page
        seen = rebound.execute_async_script(ATTACK, hub.segment)
    assert set(seen) == {
        "GET /state", "GET /runs", "GET /doc/brief", "GET /events",
        "POST /answer", "POST /inbox", "POST /aside", "XHR /state",
    }  # fmt: skip
    for what, (status, body) in seen.items():
        assert status == 421, (what, status, body)
        assert "LF or CRLF" not in body and str(tmp_path) not in body, what
    assert [a.id for a in channel.pending()] == ["q1"] and not channel.mail
    assert not [e for e in hub.recent() if e.kind in ("aside", "mail")]
