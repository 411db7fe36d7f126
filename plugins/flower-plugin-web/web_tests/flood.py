"""An attacker's flood of idle connections, and the owner's requests timed through it.

``Flood(host, port, n)`` keeps ``n`` sockets connected that never send a byte; with
``reconnect`` it opens a new one whenever the server closes one (the harder case: the
server must keep evicting), at most ``rate`` a second (the tests share two cores).
``owner_latencies`` times requests that carry the token, each on a fresh connection,
as a browser opening the page would.
"""

from __future__ import annotations

import json
import multiprocessing
import selectors
import socket
import statistics
import subprocess
import sys
import time
from typing import Any


class Flood:
    """The flood, run in a process of its own, as an attacker's would be: in the test's
    process its loop held the interpreter between the owner's connect and request (the
    test's own ``run.post`` calls) past the gate's 50 ms grace, and the gate rightly
    reset the owner (seen once in CI). ``opened`` and ``closed_by_server`` are read live.
    """

    def __init__(
        self, host: str, port: int, n: int, reconnect: bool = False, rate: float = 2000.0
    ) -> None:
        self.host, self.port, self.n, self.reconnect = host, port, n, reconnect
        self.rate = rate  # new connections a second at most, once all n are open
        context = multiprocessing.get_context("fork")
        self._opened = context.Value("i", 0)
        self._closed = context.Value("i", 0)
        self._stop = context.Event()
        self._proc = context.Process(
            target=_flood,
            args=(host, port, n, reconnect, rate, self._opened, self._closed, self._stop),
            daemon=True,
        )

    @property
    def opened(self) -> int:
        return int(self._opened.value)

    @property
    def closed_by_server(self) -> int:
        return int(self._closed.value)

    def __enter__(self) -> Flood:
        self._proc.start()
        deadline = time.monotonic() + 10
        while self.opened < self.n and time.monotonic() < deadline:
            time.sleep(0.05)
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)


def _flood(
    host: str, port: int, n: int, reconnect: bool, rate: float,
    opened: Any, closed: Any, stop: Any,
) -> None:  # fmt: skip
    """The flood's loop (in its own process): ``n`` idle sockets, reopened when closed."""
    sel = selectors.DefaultSelector()

    def connect() -> None:
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.connect((host, port))
        except BlockingIOError:
            pass
        except OSError:
            sock.close()
            return
        sel.register(sock, selectors.EVENT_READ)
        opened.value += 1

    for _ in range(n):
        connect()
    owed, stamp = 0, time.monotonic()  # reconnections due, paced to ``rate``
    while not stop.is_set():
        now = time.monotonic()
        budget = int((now - stamp) * rate)
        if budget:
            stamp = now
            for _ in range(min(owed, budget)):
                connect()
                owed -= 1
        for key, _ in sel.select(0.01 if owed else 0.1):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                data = sock.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(sock)
                sock.close()
                closed.value += 1
                if reconnect:
                    owed += 1
    for key in list(sel.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    sel.close()


#: The owner's requests, run in a process of their own (see :func:`owner_latencies`).
_OWNER = """
import http.client, json, sys, time
host, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
count, gap = int(sys.argv[4]), float(sys.argv[5])
out = []
for _ in range(count):
    started = time.monotonic()
    try:
        conn = http.client.HTTPConnection(host, port, timeout=30)
        conn.request("GET", "/state", headers={"X-Flower-Token": token})
        response = conn.getresponse()
        response.read()
        conn.close()
        took = time.monotonic() - started
        out.append(took if response.status == 200 else str(response.status))
    except OSError as exc:
        out.append(repr(exc))
    time.sleep(gap)
print(json.dumps(out))
"""


def owner_latencies(
    host: str, port: int, token: str, count: int = 10, gap: float = 0.1
) -> list[float | str]:
    """Seconds each ``GET /state`` with the token took (or what went wrong), each on a
    fresh connection, from a process of its own, as a browser is: in this one the
    flood's thread held the interpreter between the owner's connect and its request
    long enough (over ``gate.SILENT_GRACE`` under a full suite's load) for the gate to
    take the owner's connection for an idle one."""
    done = subprocess.run(
        [sys.executable, "-c", _OWNER, host, str(port), token, str(count), str(gap)],
        capture_output=True,
        text=True,
        timeout=60 + count * 31,
        check=True,
    )
    return list(json.loads(done.stdout))


def summary(latencies: list[float | str]) -> str:
    times = [t for t in latencies if isinstance(t, float)]
    failed = [t for t in latencies if not isinstance(t, float)]
    if not times:
        return f"no request served: {failed}"
    return (
        f"{len(times)}/{len(latencies)} served, p50 {statistics.median(times) * 1e3:.1f} ms,"
        f" max {max(times) * 1e3:.1f} ms" + (f", failed: {failed}" if failed else "")
    )
