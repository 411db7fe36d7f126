"""The page's server cannot hurt the run: the real server (uvicorn, in this process) under
idle floods, silent and slow connections, and pages that stop reading."""

from __future__ import annotations

import asyncio
import http.client
import socket
import threading
import time
from pathlib import Path

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.gate import BACKLOG  # noqa: E402
from flower_plugin_web.hub import Hub, Lagged  # noqa: E402
from flower_plugin_web.limits import Limits  # noqa: E402

from .flood import Flood, owner_latencies, summary  # noqa: E402
from .pages import TOKEN, hub_with_question, port_of, served  # noqa: E402


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closed ``sock`` within ``seconds`` (EOF or reset)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


@pytest.mark.parametrize("reconnect", [False, True], ids=["idle", "reconnecting"])
def test_a_flood_past_the_budget_holds_no_more_and_the_owner_is_served(
    tmp_path: Path, reconnect: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    with served(hub, Limits(connections=64)) as running:
        port, gate = port_of(running), running.gate
        held: list[int] = []
        with Flood("127.0.0.1", port, 400, reconnect=reconnect) as flood:
            deadline = time.monotonic() + 15  # the kernel lets the flood in by waves
            while not gate.evicted and time.monotonic() < deadline:
                held.append(gate.open)
                time.sleep(0.02)
            times = owner_latencies("127.0.0.1", port, TOKEN, count=8)
            held.append(gate.open)
        stats = (
            f"{flood.opened} opened ({'re' if reconnect else ''}connecting):"
            f" {summary(times)}; budget {gate.budget}, most held {max(held)},"
            f" evicted {gate.evicted}, refused {gate.refused}"
        )
        with capfd.disabled():
            print(stats)  # the figures, for whoever runs this with -s
        served_ = sorted(t for t in times if isinstance(t, float))
        assert gate.evicted, stats  # the flood did reach past the budget
        assert len(served_) == len(times), stats  # the owner is never turned away
        assert served_[len(served_) // 2] < 0.5, stats
        assert max(held) <= 64 + 2 * BACKLOG, stats  # never past the budget (and a batch)
    assert "Traceback" not in capfd.readouterr().err


def test_silent_and_slow_connections_are_closed_the_owners_stay(tmp_path: Path) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    with served(hub, Limits(untrusted_seconds=0.5)) as running:
        port = port_of(running)
        silent = socket.create_connection(("127.0.0.1", port))
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET /state HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finishes
        wrong = socket.create_connection(("127.0.0.1", port))  # a request without the token
        wrong.sendall(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        owner = http.client.HTTPConnection("127.0.0.1", port)
        owner.request("GET", "/state", headers={"X-Flower-Token": TOKEN})
        assert owner.getresponse().read()
        assert closed_within(silent, 3) and closed_within(slow, 3) and closed_within(wrong, 3)
        time.sleep(0.8)
        owner.request("GET", "/state", headers={"X-Flower-Token": TOKEN})  # same connection
        assert owner.getresponse().status == 200  # showed the token: not timed out


def read_whole(sock: socket.socket, seconds: float = 5) -> bytes:
    """One HTTP response from ``sock``, as far as it came (to EOF, a reset, or its length)."""
    sock.settimeout(seconds)
    data = b""
    try:
        while b"\r\n\r\n" not in data or len(data) < body_end(data):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:  # reset or timed out: what came is all there is
        pass
    return data


def body_end(data: bytes) -> int:
    head, _, _ = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return len(data) + 1


@pytest.mark.parametrize("first", ["shell", "newcomers", "owner"])
def test_a_page_shell_being_answered_is_not_evicted(tmp_path: Path, first: str) -> None:
    """A browser's request for the page's shell carries no token (it sits in the URL's
    fragment): once evicted between its request and its answer, Chromium showed its own
    error page under a flood. Here the server's loop is held while the shell's request and
    three newcomers arrive together, with every slot taken by young stalled heads: the
    newcomers displace the stalled, never the shell, which gets its page whole. Which the
    loop hears first decides whether the shell's request was read (``serving``) or still
    waits in the kernel (looked at) when the newcomers choose whom to evict; ``owner``: the
    late request is the owner's own (with the token), still in the kernel."""
    hub, _, _ = hub_with_question(tmp_path)
    with served(hub, Limits(connections=8)) as running:
        port, gate = port_of(running), running.gate
        shell = socket.create_connection(("127.0.0.1", port))
        stalled = [socket.create_connection(("127.0.0.1", port)) for _ in range(gate.budget - 1)]
        for sock in stalled:
            sock.sendall(b"GET /state HTTP/1.1\r\n")  # young for PARTIAL_SECONDS
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (
            len(gate.conns) < gate.budget
            or sum(p.state == "partial" for p in gate.conns.values()) < gate.budget - 1
        ):
            time.sleep(0.01)
        assert gate.open == gate.budget and not gate.evicted
        loop, held = next(iter(gate.conns.values())).loop, threading.Event()
        loop.call_soon_threadsafe(lambda: (held.set(), time.sleep(0.4)))
        assert held.wait(5)
        if first == "shell":
            shell.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        newcomers = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        for sock in newcomers:
            sock.sendall(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        if first != "shell":
            token = f"X-Flower-Token: {TOKEN}\r\n" if first == "owner" else ""
            path = "/state" if first == "owner" else "/"
            shell.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{token}\r\n".encode())
        page = read_whole(shell)
        figures = (
            f"{len(page)} bytes: {page[:40]!r}; evicted {gate.evicted}, refused {gate.refused}"
        )
        assert page.startswith(b"HTTP/1.1 200") and len(page) >= body_end(page), figures
        assert (b"<html" in page.lower()) == (first != "owner"), figures
        assert gate.evicted == 3, figures  # three stalled heads made room, not the shell
        assert all(read_whole(sock).startswith(b"HTTP/1.1 401") for sock in newcomers)
        for sock in [shell, *stalled, *newcomers]:
            sock.close()


def test_a_connection_answered_and_idle_goes_before_young_heads(tmp_path: Path) -> None:
    """Who goes when the budget is full: a tokenless connection that got its whole answer
    and idles goes before any young connection still sending its head (the owner's may
    be one of them); stalled heads go only once nothing answered is left."""
    hub, _, _ = hub_with_question(tmp_path)
    with served(hub, Limits(connections=8)) as running:
        port, gate = port_of(running), running.gate
        stalled = [socket.create_connection(("127.0.0.1", port)) for _ in range(gate.budget - 1)]
        for sock in stalled:  # older than the idle one: oldest first would take them
            sock.sendall(b"GET /state HTTP/1.1\r\n")
        idle = socket.create_connection(("127.0.0.1", port))
        idle.sendall(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        idle.settimeout(5)
        assert idle.recv(65536).startswith(b"HTTP/1.1 401")  # answered, kept alive
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (
            sum(p.state == "partial" for p in gate.conns.values()) < gate.budget - 1
            or not any(p.state == "answered" for p in gate.conns.values())
        ):
            time.sleep(0.01)
        assert gate.open == gate.budget
        newcomer = socket.create_connection(("127.0.0.1", port))
        newcomer.sendall(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert read_whole(newcomer).startswith(b"HTTP/1.1 401")
        assert closed_within(idle, 3)  # the answered one made room
        assert gate.evicted == 1
        assert not any(closed_within(sock, 0.01) for sock in stalled)
        for sock in [newcomer, *stalled]:
            sock.close()


def test_a_page_that_stops_reading_is_dropped_and_holds_nothing(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    with served(hub, Limits(write_seconds=1.0)) as running:
        port = port_of(running)
        frozen = socket.create_connection(("127.0.0.1", port))
        frozen.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        frozen.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        frozen.sendall(f"X-Flower-Token: {TOKEN}\r\n\r\n".encode())  # then never reads
        deadline = time.monotonic() + 5
        while hub.pages() < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert hub.pages() == 1
        big = "x" * 50_000
        deadline = time.monotonic() + 20
        while hub.pages() and time.monotonic() < deadline:
            hub.publish("text", {"text": big})  # the kernel's buffers fill, then the write waits
            time.sleep(0.01)
        assert hub.pages() == 0  # dropped once a write waited write_seconds
        deadline = time.monotonic() + 5
        while running.gate.open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert running.gate.open == 0  # and its connection closed: it holds nothing
        frozen.close()


def test_more_pages_than_allowed_are_told_so(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    with served(hub, Limits(streams=2)) as running:
        port = port_of(running)
        pages = []
        for _ in range(2):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/events", headers={"X-Flower-Token": TOKEN})
            assert conn.getresponse().status == 200
            pages.append(conn)
        third = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        third.request("GET", "/events", headers={"X-Flower-Token": TOKEN})
        refused = third.getresponse()
        assert refused.status == 503
        assert b"2 pages already follow this run: close one" in refused.read()


def test_a_page_a_whole_ring_behind_is_told_to_start_over() -> None:
    hub = Hub(enabled=True, keep=8)

    async def scenario() -> None:
        _, listener, _ = hub.listen(0)
        for n in range(20):  # the page reads nothing meanwhile
            hub.publish("text", {"n": n})
        with pytest.raises(Lagged):
            await hub.wait(listener, 1.0)
        hub.unlisten(listener)

    asyncio.run(scenario())
    assert hub.pages() == 0


def test_publishing_costs_the_run_the_same_with_many_pages() -> None:
    """The run's thread pays one wake-up per burst and loop, never one per page."""
    hub = Hub(enabled=True)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def pages() -> None:
        for _ in range(200):
            hub.listen(0)

    asyncio.run_coroutine_threadsafe(pages(), loop).result(5)
    calls: list[object] = []
    real = loop.call_soon_threadsafe

    def counted(*args: object) -> object:
        calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
    for n in range(50):
        hub.publish("text", {"n": n})
    assert hub.pages() == 200 and len(calls) <= 50  # not 200 x 50
    real(loop.stop)
    thread.join(5)
    loop.close()


def test_the_terminal_hears_one_line_per_kind_and_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A flood of broken clients must not flood the run's terminal."""
    from flower_plugin_web.quiet import Hush, quiet_loop

    hush = Hush(every=60)
    loop = asyncio.new_event_loop()
    try:
        quiet_loop(loop, hush)
        for _ in range(500):
            try:
                raise OSError(24, "Too many open files")
            except OSError as exc:
                context = {"message": "socket.accept() out of system resource"}
                loop.call_exception_handler({**context, "exception": exc})
    finally:
        loop.close()
    (said,) = [r for r in caplog.records if r.name == "flower_plugin_web"]  # one, not 500
    assert hush.hushed == 499 and said.exc_info is None  # no traceback
    assert said.getMessage() == (
        "socket.accept() out of system resource (OSError: [Errno 24] Too many open files)"
    )


def test_garbage_from_many_clients_is_one_line_on_the_terminal(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    hub = Hub(enabled=True)
    with served(hub) as running:
        port = port_of(running)
        for _ in range(50):
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")  # a TLS hello, say
                closed_within(sock, 5)
    err = capfd.readouterr().err
    assert err.count("Invalid HTTP request received.") <= 1 and "Traceback" not in err


def test_the_run_gets_more_descriptors_and_the_page_a_quarter() -> None:
    """At start ``flower web`` raises the soft limit toward the hard one (8,192 at most);
    the page's budget is a quarter of what there is, 256 at most."""
    import resource
    import subprocess
    import sys

    probe = (
        "import resource\n"
        "from flower_plugin_web.gate import budget_for, raise_fd_limit\n"
        "hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]\n"  # a hard limit only goes down
        "for soft, hard in ((1024, hard), (1024, 4096), (256, 256)):\n"
        "    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))\n"
        "    print(raise_fd_limit(), budget_for(256))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    raised = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
    first = f"{raised} {min(256, raised // 4)}"
    assert done.stdout.split("\n")[:3] == [first, f"{min(raised, 4096)} 256", "256 64"]
