"""What the page costs a run, per event: ``emit()`` with the terminal renderer alone vs
the same renderer with the page on and a browser-like client reading the live stream.

    python plugins/flower-plugin-web/benchmarks/latency.py [--events 20000] [--rounds 7]

Both sides run in this process, alternated, over the same event mix (the one
``benchmarks/render.py`` uses); the renderer writes to ``/dev/null`` with colour on.
Reported: microseconds per event in the emitting thread (what the run itself pays), in
a burst (back to back: the page's server thread competes for the interpreter) and 2 ms
apart (as a run emits them: the server works in between), as medians and their ratios;
and how long an event takes from ``emit()`` to the client (p50 / p95). Nothing here is
a pass/fail test: these machines are noisy.
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


#: The browser stand-in: another process (a browser is one), reading ``/events`` as
#: EventSource does and noting when each event id arrived, on the system-wide clock.
CLIENT = """
import http.client, json, sys, time
host, port, out = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], "w")
conn = http.client.HTTPConnection(host, port)
conn.request("GET", "/events", headers={"Accept": "text/event-stream"})
for raw in conn.getresponse():
    if raw.startswith(b"data: "):
        out.write(f"{json.loads(raw[6:])['id']} {time.monotonic()}\\n")
        out.flush()
"""


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
    host, port = server.url.split("//")[1].split(":")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "arrived.txt"
        client = subprocess.Popen([sys.executable, "-c", CLIENT, host, port, str(log)])
        time.sleep(1.0)  # the client is connected before anything is measured

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
        sent: dict[int, float] = {}
        spaced: dict[bool, list[float]] = {False: [], True: []}
        for index, event in enumerate(events[:2000]):  # one at a time, a little apart,
            page = HUB.enabled = index % 2 == 1  # as a run emits them
            if page:
                sent[HUB.next_id] = time.monotonic()
            started = time.perf_counter()
            emit(event, view)
            spaced[page].append((time.perf_counter() - started) * 1e6)
            time.sleep(0.002)
        HUB.enabled = False
        time.sleep(1.0)
        client.terminate()
        client.wait(5)
        arrived = dict(line.split() for line in log.read_text().splitlines() if " " in line)
    server.stop()
    delays = [(float(arrived[str(i)]) - t) * 1e3 for i, t in sent.items() if str(i) in arrived]
    a, p = statistics.median(alone), statistics.median(with_page)
    print(f"{len(events)} events per round, {args.rounds} alternated rounds, medians")
    print(f"  terminal renderer alone      {a:8.2f} us/event")
    print(f"  renderer + page (1 client)   {p:8.2f} us/event   ratio {p / a:.2f}")
    print(f"  added by the page            {p - a:8.2f} us/event")
    sa, sp = statistics.median(spaced[False]), statistics.median(spaced[True])
    print(f"  events 2 ms apart: alone {sa:.2f} us, with the page {sp:.2f} us, ratio {sp / sa:.2f}")
    if len(delays) > 20:
        q = statistics.quantiles(delays, n=20)
        print(
            f"  emit -> client ({len(delays)} events): p50 {statistics.median(delays):.2f} ms,"
            f" p95 {q[18]:.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
