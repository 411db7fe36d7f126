"""What the plugin costs a run: per event, and on a whole scripted run.

    python plugins/flower-plugin-otel/benchmarks/overhead.py [--steps 400] [--rounds 7]
                                                     [--runs 3] [--no-e2e] [--no-micro]

Part 1, per event, in this process: the same stream of steps (a step, a CLI session
around a prompt, the session id, context levels, text, tool calls and their results, a
question, the result: the mix a run emits) through ``emit()`` with the plugin not
registered (off), on with the collector down (a closed port), and on with a live
collector (an OTLP/HTTP sink in another process that takes everything), alternated.
Reported: microseconds per event in the thread that emits (what the run pays), medians
over the rounds, and the ratios to off.

Part 2, a whole run: the tests' two-process story (otel_tests/scenario.py, six CLI
sessions, a handoff, a wake) through real ``flower`` processes against the scripted
model, with the plugin off, on with the collector down, and on with the live sink (the
order of the three rotated each run): wall time per story, and the CPU time of every
process it started (flower, the CLI, the hooks; ``RUSAGE_CHILDREN``), which a busy
machine disturbs far less than wall time. Medians and ratios to off. Nothing here is a
pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

#: An OTLP/HTTP collector that takes everything and keeps nothing.
SINK = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_sink() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SINK, str(port)])
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}"


class FakeRuntime:
    def __init__(self, root: Path) -> None:
        self.run_dir = root / "runs"
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.workspace = root
        self.run_id = "bench"


def one_step(rt: FakeRuntime, i: int) -> int:
    """One step's events (and its session); returns how many were delivered."""
    from flower.kernel.agent_spec import AgentSpec
    from flower.kernel.events import Event
    from flower.plugin_types import SessionRequest
    from flower.plugins import emit
    from flower.runtime.attempt import Attempt
    from flower.runtime.scope import SessionScopes

    step = f"干活#round{i}"
    emit(Event("step", {"index": 1, "total": 1, "resumed": False, "woke": 1}, step="干活"))
    got = Attempt(session_id=f"s{i}", ok=True, cost_usd=0.02, num_turns=3, model="m")
    got.usage = {"input_tokens": 9000, "output_tokens": 40}
    spec = AgentSpec(name="协调者", instructions="")
    request = SessionRequest(runtime=rt, spec=spec, step=step, env={}, outcome=got)
    ask = {"id": f"q{i}", "question": "LF?", "options": ["LF", "CRLF"], "asked_at": time.time()}
    n = 2  # the scope's enter and exit
    with SessionScopes(request):
        for kind, payload in (
            ("prompt", {"text": "做吧", "resume": None, "fork": False}),
            ("session", {"session_id": f"s{i}", "generation": 0}),
            ("context", {"used": 45_200, "window": 1_000_000, "at": 800_000}),
            ("text", {"text": "我先看看目录结构。", "subagent": False}),
            ("tool", {"name": "Bash", "input": {"command": "ls"}, "id": f"t{i}a"}),
            ("tool_result", {"id": f"t{i}a", "text": "x.py", "error": False}),
            ("tool", {"name": "Agent", "input": {"description": "写"}, "id": f"t{i}b"}),
            ("tool_result", {"id": f"t{i}b", "text": "done", "error": False}),
            ("ask", {**ask, "state": "asked"}),
            ("ask", {**ask, "state": "answered", "answer": "LF"}),
            ("context", {"used": 48_000, "window": 1_000_000, "at": 800_000}),
            ("text", {"text": "A longer paragraph of prose " * 12, "subagent": False}),
        ):
            emit(Event(kind, payload, step=None if kind == "ask" else step))
            n += 1
    emit(Event("result", {"ok": True, "session_id": f"s{i}", "cost_usd": 0.02}, step=step))
    return n + 2


def per_event(steps: int, rt: FakeRuntime) -> float:
    started = time.perf_counter()
    delivered = sum(one_step(rt, i) for i in range(steps))
    return (time.perf_counter() - started) / delivered * 1e6


def micro(steps: int, rounds: int) -> None:
    from flower_plugin_otel import plugin as otel

    from flower.plugins import get_plugin_manager

    os.environ["OTEL_SDK_DISABLED"] = "false"
    os.environ["OTEL_METRIC_EXPORT_INTERVAL"] = "1000"
    pm = get_plugin_manager()
    if pm.get_plugin("otel") is not None:
        pm.unregister(name="otel")
    sink, live = start_sink()
    dead = f"http://127.0.0.1:{free_port()}"
    root = Path(tempfile.mkdtemp(prefix="otel-bench-"))
    rt = FakeRuntime(root)
    results: dict[str, list[float]] = {"off": [], "dead collector": [], "live collector": []}
    try:
        for _ in range(rounds):
            results["off"].append(per_event(steps, rt))
            for name, endpoint in (("dead collector", dead), ("live collector", live)):
                os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
                otel.STATE.reset()
                pm.register(otel, name="otel")
                results[name].append(per_event(steps, rt))
                otel.STATE.reset()  # the flush at exit, outside the measurement
                pm.unregister(name="otel")
    finally:
        sink.terminate()
    base = statistics.median(results["off"])
    print(f"per event ({steps} steps of 16 events, {rounds} rounds, medians):")
    for name, values in results.items():
        med = statistics.median(values)
        print(f"  {name:15s} {med:7.1f} µs/event   x{med / base:5.2f}   (+{med - base:.1f} µs)")


def macro(runs: int) -> None:
    from otel_tests import scenario as SC

    from flower.testing import ScriptedModel

    model = ScriptedModel()
    model.start()
    sink, live = start_sink()
    dead = f"http://127.0.0.1:{free_port()}"
    home = Path(tempfile.mkdtemp(prefix="otel-bench-run-"))
    configs = {
        "off": {"FLOWER_DISABLED_PLUGINS": "otel"},
        "dead collector": {"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": dead},
        "live collector": {"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": live},
    }
    times: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    codes: dict[str, set[tuple[int, int]]] = {name: set() for name in configs}
    try:
        for n in range(runs):
            order = list(configs.items())
            for name, extra in order[n % len(order) :] + order[: n % len(order)]:
                workspace = home / f"{name.split()[0]}{n}" / "proj"
                model.play(SC.script(workspace))
                env = {**os.environ, **{k: v for k, v in model.env(home=home).items() if v}}
                env.update(extra)
                before = children_cpu()
                first, second = SC.both(workspace, env)
                cpu[name].append(children_cpu() - before)
                times[name].append(first.seconds + second.seconds)
                codes[name].add((first.code, second.code))
    finally:
        sink.terminate()
        model.stop()
    base, base_cpu = statistics.median(times["off"]), statistics.median(cpu["off"])
    print(f"a whole run (two flower processes, ten CLI sessions; {runs} runs, medians):")
    for name, values in times.items():
        med, med_cpu = statistics.median(values), statistics.median(cpu[name])
        print(
            f"  {name:15s} wall {med:6.2f} s x{med / base:5.3f}"
            f"   cpu {med_cpu:6.2f} s x{med_cpu / base_cpu:5.3f}"
            f"   exit codes {sorted(codes[name])}"
        )


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-e2e", action="store_true")
    parser.add_argument("--no-micro", action="store_true")
    args = parser.parse_args()
    if not args.no_micro:
        micro(args.steps, args.rounds)
    if not args.no_e2e:
        macro(args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__: list[Any] = []
