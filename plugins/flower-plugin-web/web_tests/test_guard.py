"""Who may talk to the page, against the real server (uvicorn, in this process), as
curl would: a rebound name (``Host: evil.example``) is refused on every route with or
without the token; ``Origin`` is compared with the page's names, never with the
request's own ``Host``; another local user gets nothing without the token; every
route, errors included, carries the same security headers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

import httpx  # noqa: E402 - a test extra, like the plugin: after the check
from flower_plugin_web.guard import Guard  # noqa: E402
from flower_plugin_web.hub import Hub  # noqa: E402
from flower_plugin_web.server import Running  # noqa: E402

from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402

GETS = ["/", "/page.js", "/state", "/events", "/doc/brief", "/runs"]
POSTS = ["/answer", "/inbox", "/aside"]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, Hub, Any]]:
    """One real server with a question waiting, shared by this module's tests."""
    hub, channel, _ = hub_with_question(tmp_path_factory.mktemp("guard"))
    with served(hub) as running:
        yield running, hub, channel


def request(running: Running, method: str, path: str, **headers: str) -> httpx.Response:
    port = port_of(running)
    body = None
    if method == "POST":
        body = json.dumps({"id": "x-q1", "answer": "yes", "text": "hi", "question": "?"})
        headers.setdefault("Content-Type", "application/json")
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        if path == "/events":  # the stream never ends: the status and headers are enough
            with client.stream(method, path, headers=headers) as r:
                if r.status_code != 200:
                    r.read()
                return r
        return client.request(method, path, headers=headers, content=body)


@pytest.mark.parametrize("with_token", [False, True], ids=["no-token", "token"])
def test_a_rebound_name_is_refused_on_every_route(
    page: tuple[Running, Hub, Any], with_token: bool
) -> None:
    running, hub, channel = page
    port = port_of(running)
    evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    if with_token:
        evil["X-Flower-Token"] = TOKEN
    for method, path in [("GET", p) for p in GETS] + [("POST", p) for p in POSTS]:
        refused = request(running, method, path, **evil)
        assert refused.status_code == 421, (method, path)
        assert "this page answers only to" in refused.json()["error"]
        assert str(hub.where.workspace) not in refused.text if hub.where else True
    assert channel.pending() and not channel.mail  # nothing answered, nothing queued


def test_the_names_a_loopback_page_answers_to(page: tuple[Running, Hub, Any]) -> None:
    running, _, _ = page
    port = port_of(running)
    token = {"X-Flower-Token": TOKEN}
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
        assert request(running, "GET", "/state", Host=host, **token).status_code == 200, host
    for host in (
        "evil.example",
        f"evil.example:{port}",
        f"127.0.0.1:{port + 1}",  # another port: another service's name
        "127.0.0.1",  # no port: port 80
        f"localhost.:{port}",
        f"127.0.0.1.evil.example:{port}",
        f"user@127.0.0.1:{port}",
        f"{os.uname().nodename}:{port}",  # the machine's name: not for a loopback bind
        "",
    ):
        assert request(running, "GET", "/state", Host=host, **token).status_code == 421, host


def test_origin_is_compared_with_the_pages_names_never_with_host(
    page: tuple[Running, Hub, Any],
) -> None:
    running, _, channel = page
    port = port_of(running)
    own = {"X-Flower-Token": TOKEN, "Host": f"localhost:{port}"}
    for origin in (
        f"http://evil.example:{port}",  # what a rebound page sends (its Host is refused too)
        "http://evil.example",
        f"http://127.0.0.1:{port + 1}",
        f"https://127.0.0.1:{port}",
        "null",
    ):
        refused = request(running, "POST", "/inbox", Origin=origin, **own)
        assert refused.status_code == 403, origin
        # a GET carrying a foreign Origin (a cross-site fetch) is refused as well
        assert request(running, "GET", "/state", Origin=origin, **own).status_code == 403
    assert not channel.mail
    # the page's own names, in either spelling, whatever the Host says
    for origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        assert request(running, "POST", "/answer", Origin=origin, **own).status_code == 404


def test_every_route_carries_the_security_headers(page: tuple[Running, Hub, Any]) -> None:
    running, _, _ = page
    port = port_of(running)
    own = {"X-Flower-Token": TOKEN, "Origin": f"http://127.0.0.1:{port}"}
    cases: list[tuple[str, str, dict[str, str]]] = [("GET", p, own) for p in GETS]
    cases += [("POST", p, own) for p in POSTS]
    cases += [("GET", "/state", {}), ("GET", "/nothing", own), ("PUT", "/answer", own)]
    cases += [("GET", "/state", {"Host": "evil.example"})]
    for method, path, headers in cases:
        r = request(running, method, path, **headers)
        csp = r.headers.get("content-security-policy", "")
        for rule in (
            "default-src 'none'",
            "script-src 'self'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ):
            assert rule in csp, (method, path, r.status_code, rule)
        assert r.headers.get("referrer-policy") == "no-referrer", (method, path)
        assert r.headers.get("x-content-type-options") == "nosniff", (method, path)
        assert r.headers.get("cache-control") == "no-store", (method, path)
        assert r.headers.get("x-frame-options") == "DENY", (method, path)
        assert "set-cookie" not in r.headers
        assert r.headers.get("server") is None  # says nothing about itself


def test_another_local_user_gets_nothing_without_the_token(
    page: tuple[Running, Hub, Any],
) -> None:
    """``runuser -u nobody``: a different uid on the same machine, as any local user or
    a forwarded port would be. It cannot read the token (this process holds it), so it
    gets the page's empty shell and a 401 for everything of the run."""
    running, hub, channel = page
    need(os.geteuid() == 0, "runs as root only: runuser switches to the user nobody")
    runuser = shutil.which("runuser")
    need(runuser is not None, "no runuser on this machine")
    python = "/usr/bin/python3"
    need(os.path.exists(python), "no system python3 for the user nobody")
    port = port_of(running)
    script = """
import json, sys, urllib.error, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
out = {}
for method, path in [("GET", "/"), ("GET", "/state"), ("GET", "/runs"), ("GET", "/doc/brief"),
                     ("GET", "/events"), ("POST", "/answer"), ("POST", "/inbox")]:
    data = json.dumps({"id": sys.argv[2], "answer": "yes", "text": "hi"}).encode()
    headers = {"Content-Type": "application/json", "Origin": base}
    req = urllib.request.Request(base + path, method=method, headers=headers,
                                 data=data if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            out[path] = [r.status, r.read(4000).decode()]
    except urllib.error.HTTPError as e:
        out[path] = [e.code, e.read().decode()]
print(json.dumps(out))
"""
    pending_id, mail = f"{hub.segment}-q1", len(channel.mail)
    done = subprocess.run(
        [str(runuser), "-u", "nobody", "--", python, "-c", script, str(port), pending_id],
        capture_output=True, text=True, timeout=60, cwd="/", env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["/"][0] == 200 and str(Path(hub.where.workspace)) not in seen["/"][1]  # type: ignore[union-attr]
    for path in ("/state", "/runs", "/doc/brief", "/events", "/answer", "/inbox"):
        assert seen[path][0] == 401, (path, seen[path])
        assert "LF or CRLF" not in seen[path][1]
    assert channel.pending() and len(channel.mail) == mail  # nothing answered, nothing sent


def test_a_page_bound_elsewhere_answers_to_the_machine_and_its_address() -> None:
    guard = Guard.bound("0.0.0.0", 8765, "t")
    name = os.uname().nodename.lower()
    assert guard.host_ok(f"{name}:8765", "192.168.1.5")
    assert guard.host_ok("192.168.1.5:8765", "192.168.1.5")  # the address it came in on
    assert guard.host_ok("127.0.0.1:8765", "127.0.0.1")
    assert not guard.host_ok("10.0.0.9:8765", "192.168.1.5")  # an address it did not
    assert not guard.host_ok("evil.example:8765", "192.168.1.5")
    extra = Guard.bound("127.0.0.1", 8765, "t", extra=("proxy.lan", "LOCALHOST:9000"))
    assert extra.host_ok("proxy.lan:8765", None) and not extra.host_ok(f"{name}:8765", None)
    assert extra.host_ok("localhost:9000", None)  # an SSH forward from another port
    assert extra.origin_ok("http://localhost:9000", None)
    assert not extra.host_ok("proxy.lan:9000", None) and not extra.host_ok("127.0.0.1:9000", None)
