"""``--allow-host``: what it accepts, and the page behind a real TLS proxy in Chromium;
a bad ``--allow-host`` or ``--port`` is one line (exit 2), and a page beyond loopback
says it is unencrypted.

The README's advice for the network is a TLS proxy in front. Its pages have the origin
``https://NAME`` (port 443, unsaid), which ``--allow-host NAME`` never admitted: the
``Host`` got 421 (port 443 is not the page's), the ``Origin`` 403 (not ``http``). Now
``--allow-host https://NAME`` admits exactly that origin. The proxy here terminates TLS
(a self-signed certificate made with ``openssl``) and passes the bytes on unchanged, the
``Host`` included, as nginx does with ``proxy_set_header Host $host``.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN, chromium

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.allow import Allowed, parse_allowed  # noqa: E402
from flower_plugin_web.command import CLEAR  # noqa: E402
from flower_plugin_web.guard import Guard  # noqa: E402
from flower_plugin_web.origin import fresh_loopback  # noqa: E402
from flower_plugin_web.server import serve  # noqa: E402

from .pages import TOKEN, hub_with_question, port_of  # noqa: E402

NAME = "proxy.example"


def test_what_allow_host_takes() -> None:
    assert parse_allowed("Proxy.LAN") == Allowed("proxy.lan")
    assert parse_allowed("localhost:9000") == Allowed("localhost", 9000)
    assert parse_allowed("https://proxy.example") == Allowed(NAME, 443, "https")
    assert parse_allowed("https://proxy.example:8443/") == Allowed(NAME, 8443, "https")
    assert parse_allowed("http://x") == Allowed("x", 80, "http")  # not the name "http"
    assert parse_allowed("[::1]:9000") == Allowed("::1", 9000)
    for bad in ("", "http://", "ftp://x", "https://x/page", "a@b", "x:99999", "x:0",
                "https://u:p@x", "x y", "x/y", "x?q", "-x.lan", "https://x:abc"):  # fmt: skip
        with pytest.raises(ValueError):
            parse_allowed(bad)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--port", "99999"], "flower web: --port: 99999: give a port from 1 to 65535"),
        (["--port", "-1"], "flower web: --port: -1: give a port from 1 to 65535"),
        (["--allow-host", "http://x/page"], "flower web: --allow-host: 'http://x/page' is not"),
        (["--allow-host", "ftp://x"], "flower web: --allow-host: 'ftp://x': only http:// or"),
        (["--allow-host", "x:70000"], "flower web: --allow-host: 'x:70000': the port must be"),
    ],
)
def test_a_bad_port_or_allowed_host_is_one_line(
    args: list[str], line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from flower.cli import main

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["web", *args, "make x"], input="")
    lines = result.output.splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith(line), lines[0]
    assert list(tmp_path.iterdir()) == []  # nothing made


def test_a_page_beyond_loopback_says_it_is_unencrypted(
    claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    from .runs import start_web

    run = start_web(workspace, tmp_path, "--no-goal", host="0.0.0.0")
    try:
        said = [line for line in run.lines if "plain HTTP" in line]
        assert said == [CLEAR.format(host="0.0.0.0") + "\n"], run.output
    finally:
        run.stop()
    quiet = start_web(workspace, tmp_path, "--no-goal", host="127.0.0.1")
    try:
        assert "plain HTTP" not in quiet.output
    finally:
        quiet.stop()


def test_a_proxys_https_origin_is_admitted_and_nothing_more() -> None:
    guard = Guard.bound("127.0.0.1", 8765, "t", extra=("https://proxy.example",))
    assert guard.host_ok(NAME, None) and guard.host_ok(f"{NAME}:443", None)
    assert guard.origin_ok(f"https://{NAME}", None)
    assert guard.origin_ok(f"https://{NAME}:443", None)
    assert not guard.origin_ok(f"http://{NAME}", None)  # not what was allowed
    assert not guard.origin_ok(f"https://{NAME}:8443", None)
    assert not guard.origin_ok("https://127.0.0.1:8765", None)  # the page is http itself
    assert not guard.host_ok(f"{NAME}:8765", None) and not guard.host_ok("evil.example", None)
    assert guard.origin_ok("http://127.0.0.1:8765", None)  # its own origin still
    other = Guard.bound("127.0.0.1", 8765, "t", extra=("https://proxy.example:8443",))
    assert other.origin_ok(f"https://{NAME}:8443", None) and other.host_ok(f"{NAME}:8443", None)
    assert not other.host_ok(NAME, None) and not other.origin_ok(f"https://{NAME}", None)


def certificate(folder: Path) -> tuple[Path, Path]:
    need(shutil.which("openssl") is not None, "no openssl to make a certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", f"/CN={NAME}", "-addext", f"subjectAltName=DNS:{NAME}",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@contextmanager
def tls_proxy(cert: Path, key: Path, upstream: int) -> Iterator[tuple[str, int]]:
    """A TLS proxy on port 443 of a fresh loopback address (any free port if 443 cannot
    be bound), passing every byte to ``127.0.0.1:upstream`` and back."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    address = fresh_loopback()
    sock = socket.socket()
    try:
        sock.bind((address, 443))
    except OSError:
        sock.bind((address, 0))
    loop = asyncio.new_event_loop()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def start() -> asyncio.Server:
        return await asyncio.start_server(handle, sock=sock, ssl=context)

    server = loop.run_until_complete(start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield address, sock.getsockname()[1]
    finally:
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


@pytest.mark.e2e
def test_the_page_behind_a_tls_proxy_goes_live_and_answers(tmp_path: Path) -> None:
    hub, channel, asked = hub_with_question(tmp_path)
    cert, key = certificate(tmp_path)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]  # known before the proxy: the page's own port
    probe.close()
    with tls_proxy(cert, key, port) as (address, proxy_port):
        origin = f"https://{NAME}" + ("" if proxy_port == 443 else f":{proxy_port}")
        running = serve("127.0.0.1", port, token=TOKEN, hub=hub, allow=(origin,))
        assert port_of(running) == port
        driver: Any = None
        try:
            driver = chromium(
                f"--host-resolver-rules=MAP {NAME} {address}", "--ignore-certificate-errors"
            )
            driver.get(f"{origin}/#token={TOKEN}")
            deadline, link, buttons = time.monotonic() + 30, "", []
            while time.monotonic() < deadline:
                link = driver.execute_script("return document.getElementById('link')?.textContent")
                buttons = driver.find_elements("css selector", ".ask button")
                if link == "live" and buttons:
                    break
                time.sleep(0.2)
            assert link == "live" and buttons, (link, driver.page_source[:2000])
            buttons[0].click()  # "1) LF": a POST with Origin https://proxy.example
            asked.join(10)
            assert [a.answer for a in channel.asks] == ["LF"]
        finally:
            if driver is not None:
                driver.quit()
            running.stop()
