"""What the page costs a run, per event: ``emit()`` with the terminal renderer alone vs
the same renderer with the page on and 1, then 100, pages reading the live stream.

    python plugins/flower-plugin-web/benchmarks/latency.py [--events 20000] [--rounds 7]
                                                           [--pages 1 100]

Both sides run in this process, alternated, over the same event mix (the one
``benchmarks/render.py`` uses); the renderer writes to ``/dev/null`` with colour on. The
pages are another process (a browser is one): one connection each to ``/events`` with
the token, read as fast as they come. A page dropped a ring behind reconnects, as a tab
does: back-to-back bursts (~30,000 events a second) drop pages that a run's few events
a second never would; the drops are counted.

Reported, for each number of pages: microseconds per event in the emitting thread (what
the run itself pays), in a burst (back to back: the page's server thread competes for
the interpreter) and 2 ms apart (as a run emits them: the server works in between), as
medians and their ratios; and how long an event takes from ``emit()`` to the first page
(p50 / p95). Nothing here is a pass/fail test: these machines are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

#: The pages: ``n`` connections to ``/events`` in one process, all drained; the first
#: notes when each event id arrived, on the system-wide clock.
CLIENT = """
import selectors, socket, sys, time
host, port, token, n, out = sys.argv[1:6]
port, n = int(port), int(n)
log = open(out, "w")
sel = selectors.DefaultSelector()
ask = (f"GET /events HTTP/1.1\\r\\nHost: {host}:{port}\\r\\nX-Flower-Token: {token}\\r\\n"
       "Accept: text/event-stream\\r\\n\\r\\n").encode()

def page(i):
    try:
        s = socket.create_connection((host, port))
    except OSError:  # the server has stopped: done
        sys.exit(0)
    s.sendall(ask)
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ, i)

for i in range(n):
    page(i)
rest = b""
while True:
    for key, _ in sel.select():
        try:
            data = key.fileobj.recv(1 << 16)
        except BlockingIOError:
            continue
        except OSError:
            data = b""
        if not data:  # dropped (a ring behind): come back, as a browser tab does
            sel.unregister(key.fileobj)
            key.fileobj.close()
            log.write("dropped\\n")
            page(key.data)
            continue
        if key.data == 0:
            now = time.monotonic()
            lines = (rest + data).split(b"\\n")
            rest = lines.pop()
            for line in lines:
                if line.startswith(b"id: "):
                    log.write(f"{line[4:].decode().split('-')[1]} {now}\\n")
            log.flush()
"""


def pages_of(host: str, port: str, token: str, pages: int, log: Path) -> subprocess.Popen[bytes]:
    """Start the pages and return once they are all connected."""
    from flower_plugin_web.hub import HUB

    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, host, port, token, str(pages), str(log)]
    )
    deadline = time.monotonic() + 20
    while HUB.pages() < pages and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    return client


def measure(pages: int, events: list, view: object, rounds: int) -> dict[str, float]:
    from flower_plugin_web.hub import HUB
    from flower_plugin_web.server import serve

    from flower.plugins import emit

    token = "benchmark-token"
    server = serve("127.0.0.1", 0, token=token)
    host, port = server.url.split("//")[1].split(":")

    def run(page: bool) -> float:
        HUB.enabled = page
        started = time.perf_counter()
        for event in events:
            emit(event, view)
        return (time.perf_counter() - started) / len(events) * 1e6

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "bursts.txt"
        client = pages_of(host, port, token, pages, log)
        connected = HUB.pages()
        alone, with_page = [], []
        for _ in range(rounds):
            alone.append(run(False))
            with_page.append(run(True))
        HUB.enabled = False
        client.terminate()  # before the server stops: its end is not a drop
        client.wait(5)
        drops = log.read_text().splitlines().count("dropped")
        # fresh pages for the spaced events: none of them is catching up on the bursts
        log = Path(tmp) / "spaced.txt"
        client = pages_of(host, port, token, pages, log)
        sent: dict[int, float] = {}
        spaced: dict[bool, list[float]] = {False: [], True: []}
        for index, event in enumerate(events[:2000]):  # one at a time, a little apart,
            page = HUB.enabled = index % 2 == 1  # as a run emits them
            if page:
                sent[HUB.last + 1] = time.monotonic()
            started = time.perf_counter()
            emit(event, view)
            spaced[page].append((time.perf_counter() - started) * 1e6)
            time.sleep(0.002)
        HUB.enabled = False
        time.sleep(1.0)
        client.terminate()
        client.wait(5)
        server.stop()
        lines = log.read_text().splitlines()
        arrived = dict(line.split() for line in lines if " " in line)
        drops += lines.count("dropped")
    delays = [(float(arrived[str(i)]) - t) * 1e3 for i, t in sent.items() if str(i) in arrived]
    figures = {
        "pages": float(connected),
        "drops": float(drops),
        "alone": statistics.median(alone),
        "page": statistics.median(with_page),
        "spaced_alone": statistics.median(spaced[False]),
        "spaced_page": statistics.median(spaced[True]),
    }
    if len(delays) > 20:
        figures["p50_ms"] = statistics.median(delays)
        figures["p95_ms"] = statistics.quantiles(delays, n=20)[18]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pages", type=int, nargs="+", default=[1, 100])
    args = parser.parse_args()

    from flower_plugin_web.gate import raise_fd_limit
    from flower_plugin_web.hub import HUB, Where
    from render import stream_of_events  # benchmarks/render.py: the same mix

    from flower.kernel.terminal import Terminal
    from flower.ui.render import Renderer

    raise_fd_limit()
    events = stream_of_events(args.events)
    sink = open("/dev/null", "w", encoding="utf-8")
    view = Renderer(Terminal(sink, color=True))
    HUB.where = Where(workspace=Path("."), run_dir=Path("runs"), workbench=Path(".flower"))
    print(f"{len(events)} events per round, {args.rounds} alternated rounds, medians")
    for pages in args.pages:
        f = measure(pages, events, view, args.rounds)
        a, p = f["alone"], f["page"]
        sa, sp = f["spaced_alone"], f["spaced_page"]
        print(f"{int(f['pages'])} page(s) connected ({int(f['drops'])} drops a ring behind)")
        print(f"  terminal renderer alone      {a:8.2f} us/event")
        print(f"  renderer + page              {p:8.2f} us/event   ratio {p / a:.2f}")
        print(f"  added by the page            {p - a:8.2f} us/event")
        print(f"  2 ms apart: alone {sa:.2f} us, with the page {sp:.2f} us, ratio {sp / sa:.2f}")
        if "p50_ms" in f:
            print(f"  emit -> first page: p50 {f['p50_ms']:.2f} ms, p95 {f['p95_ms']:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
