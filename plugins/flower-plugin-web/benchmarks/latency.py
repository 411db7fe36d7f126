"""What the page costs a run, per event: ``emit()`` with the terminal renderer alone vs
the same renderer with the page on and a browser-like client reading the live stream.

    python plugins/flower-plugin-web/benchmarks/latency.py [--events 20000] [--rounds 7]

Both sides run in this process, alternated, over the same event mix (the one
``benchmarks/render.py`` uses); the renderer writes to ``/dev/null`` with colour on.
Reported: microseconds per event in the emitting thread (what the run itself pays) as
medians and their ratio, and how long an event takes from ``emit()`` to the client
(p50 / p95). Nothing here is a pass/fail test: these machines are noisy.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    from flower_plugin_web.hub import HUB, Where
    from flower_plugin_web.server import serve
    from render import stream_of_events  # benchmarks/render.py: the same mix

    from flower.core.events import emit
    from flower.ui.render import Renderer
    from flower.ui.terminal import Terminal

    events = stream_of_events(args.events)
    sink = open("/dev/null", "w", encoding="utf-8")
    view = Renderer(Terminal(sink, color=True))
    HUB.where = Where(workspace=Path("."), run_dir=Path("runs"), workbench=Path(".flower"))
    server = serve("127.0.0.1", 0, token=None)
    arrived: dict[int, float] = {}
    reader = threading.Thread(target=read_stream, args=(server.url, arrived), daemon=True)
    reader.start()
    time.sleep(0.5)  # the client is connected before anything is measured

    def run(page: bool) -> float:
        HUB.enabled = page
        started = time.perf_counter()
        for event in events:
            emit(event, view)
        return (time.perf_counter() - started) / len(events) * 1e6

    alone, with_page = [], []
    for _ in range(args.rounds):
        alone.append(run(False))
        with_page.append(run(True))
    HUB.enabled = False

    delays = delivery(emit, view, events[:2000], arrived)
    server.stop()
    a, p = statistics.median(alone), statistics.median(with_page)
    print(f"{len(events)} events per round, {args.rounds} alternated rounds, medians")
    print(f"  terminal renderer alone      {a:8.2f} us/event")
    print(f"  renderer + page (1 client)   {p:8.2f} us/event   ratio {p / a:.2f}")
    print(f"  added by the page            {p - a:8.2f} us/event")
    if delays:
        q = statistics.quantiles(delays, n=20)
        print(f"  emit -> client: p50 {statistics.median(delays):.2f} ms, p95 {q[18]:.2f} ms")
    return 0


def delivery(emit: Any, view: Any, events: list[Any], arrived: dict[int, float]) -> list[float]:
    """Milliseconds from ``emit()`` to the client having the event, one event at a time."""
    from flower_plugin_web.hub import HUB

    HUB.enabled = True
    delays = []
    for event in events:
        event_id = HUB.next_id
        sent = time.perf_counter()
        emit(event, view)
        deadline = sent + 2.0
        while event_id not in arrived and time.perf_counter() < deadline:
            time.sleep(0.0001)
        if event_id in arrived:
            delays.append((arrived[event_id] - sent) * 1e3)
    HUB.enabled = False
    return delays


def read_stream(url: str, arrived: dict[int, float]) -> None:
    """A client reading ``/events`` the way EventSource does; notes when each id arrives."""
    host, port = url.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port))
    conn.request("GET", "/events", headers={"Accept": "text/event-stream"})
    response = conn.getresponse()
    for raw in response:
        line = raw.decode("utf-8", "replace")
        if line.startswith("data: "):
            arrived[json.loads(line[6:])["id"]] = time.perf_counter()


if __name__ == "__main__":
    raise SystemExit(main())
