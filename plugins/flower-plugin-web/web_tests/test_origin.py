"""Where the page listens (``origin.py``), without a browser: by default a fresh loopback
address and port for every run, named in the URL by the address itself; ``localhost``
(two addresses) refused in one line; a name printed as the address it resolved to."""

from __future__ import annotations

import errno
import ipaddress
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web import origin  # noqa: E402
from flower_plugin_web.server import Running, serve  # noqa: E402

from .pages import TOKEN, port_of  # noqa: E402


def address_of(running: Running) -> str:
    return running.url.removeprefix("http://").rsplit(":", 1)[0]


def answers(url: str) -> int:
    request = urllib.request.Request(url + "/state", headers={"X-Flower-Token": TOKEN})
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.status)


def test_every_run_gets_an_origin_of_its_own() -> None:
    runs = [serve(None, 0, token=TOKEN) for _ in range(2)]
    try:
        addresses = [ipaddress.ip_address(address_of(r)) for r in runs]  # literals, not names
        for address in addresses:
            assert address.is_loopback and not str(address).startswith("127.0.")
        assert len({(address_of(r), port_of(r)) for r in runs}) == 2
        for running in runs:
            assert answers(running.url) == 200  # its own address is one of its names
            with pytest.raises(OSError) as refused, socket.socket() as probe:
                probe.connect(("127.0.0.1", port_of(running)))  # not where it listens
            assert refused.value.errno == errno.ECONNREFUSED
    finally:
        for running in runs:
            running.stop()


def test_without_the_range_it_falls_back_to_127_0_0_1(monkeypatch: Any) -> None:
    # 192.0.2.1 (TEST-NET) is no address of this machine: the kernel refuses it, as a
    # system refuses 127.0.0.2 when only 127.0.0.1 is loopback (macOS)
    monkeypatch.setattr(origin, "fresh_loopback", lambda: "192.0.2.1")
    running = serve(None, 0, token=TOKEN)
    try:
        assert address_of(running) == "127.0.0.1" and answers(running.url) == 200
    finally:
        running.stop()


def test_the_url_names_the_address_bound() -> None:
    running = serve("::1", 0, token=TOKEN)
    try:
        assert running.url == f"http://[::1]:{port_of(running)}" and answers(running.url) == 200
    finally:
        running.stop()
    name = socket.gethostname()
    try:
        resolved = socket.gethostbyname(name)
    except OSError:
        pytest.skip(f"this machine's name ({name}) does not resolve")
    running = serve(name, 0, token=TOKEN)
    try:
        assert address_of(running) == resolved  # the address, never the name
    finally:
        running.stop()


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "localhost."])
def test_localhost_is_one_line_and_exit_2(workspace: Path, host: str) -> None:
    from click.testing import CliRunner

    from flower.cli import main

    result = CliRunner().invoke(main, ["web", "-w", str(workspace), "--host", host, "x"])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and origin.AMBIGUOUS in result.output
    assert not (workspace / "runs").exists()
