"""What the run view costs: per event, and on a whole scripted run.

Part 1, per event: the same stream of events (the mix a real run produces: context
levels, text, tool calls and results, a question, retries, results) through a
``Renderer`` vs through a no-op callback, alternated. The Renderer prints through a
``Terminal`` on (a) a pseudo-terminal drained by a thread, with colour and an input line
attached (every line erases and redraws it), and (b) ``/dev/null`` (a pipe or a log file).

Part 2, a whole run: ``starter_flow`` (3 steps, 4 CLI sessions, benchmarks/workflow.py's
script) with the Renderer on a pty as ``on_event`` vs with a no-op ``on_event``,
alternated, fresh workspace each. Target: the view adds <= 2 %.

    python benchmarks/render.py [--events 20000] [--pairs 6] [--no-e2e]
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGET = 1.02


def stream_of_events(n: int) -> list[Any]:
    from flower.kernel.events import Event

    ask = {"id": "q1", "question": "换行用 LF 还是 CRLF?", "options": ["LF", "CRLF"]}
    cycle = [
        Event("context", {"used": 45_200, "window": 1_000_000, "at": 800_000}),
        Event("text", {"text": "我先看看目录结构,然后写 hello.txt。", "subagent": False}),
        Event("tool", {"name": "Bash", "input": {"command": "ls -la src"}, "subagent": False}),
        Event("tool_result", {"text": "total 8\n-rw-r--r-- 1 a a 3 x.py", "error": False,
                              "subagent": False}),
        Event("tool", {"name": "Agent", "subagent": False,
                       "input": {"subagent_type": "coder", "description": "写 hello.txt"}}),
        Event("tool", {"name": "Write", "input": {"file_path": "/ws/hello.txt"},
                       "subagent": True}),
        Event("tool_result", {"text": "\x1b[31mpermission denied\x1b[0m", "error": True,
                              "subagent": True}),
        Event("thinking", {"text": "hmm", "subagent": False}),
        Event("ask", {**ask, "state": "asked"}),
        Event("ask", {**ask, "state": "answered", "answer": "LF"}),
        Event("text", {"text": "A longer paragraph of prose " * 12, "subagent": False}),
        Event("result", {"ok": True, "num_turns": 3, "cost_usd": 0.04, "context": 45_200,
                         "duration_s": 12.0, "attempts": 1}, step="干活"),
    ]  # fmt: skip
    return [cycle[i % len(cycle)] for i in range(n)]


class DrainedPty:
    def __init__(self) -> None:
        from fcntl import ioctl
        from struct import pack
        from termios import TIOCSWINSZ

        self.master, self.slave = os.openpty()
        ioctl(self.slave, TIOCSWINSZ, pack("HHHH", 40, 100, 0, 0))
        self.stream = os.fdopen(os.dup(self.slave), "w", encoding="utf-8")
        self._stop = False
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        while not self._stop:
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    os.read(self.master, 1 << 16)
                except OSError:
                    return

    def close(self) -> None:
        self._stop = True
        self.stream.close()


class Prompt:
    def view(self, width: int) -> tuple[str, str, int]:
        return "> ", "half-typed 一半", 17


def per_event(events: list[Any], make: Callable[[], Callable[[Any], None]], rounds: int) -> float:
    """Best-of-``rounds`` microseconds per event."""
    best = float("inf")
    for _ in range(rounds):
        sink = make()
        started = time.perf_counter()
        for event in events:
            sink(event)
        best = min(best, (time.perf_counter() - started) / len(events) * 1e6)
    return best


def micro(n: int) -> None:
    from flower.kernel.terminal import Terminal
    from flower.ui.render import Renderer

    events = stream_of_events(n)
    pty = DrainedPty()
    null = open(os.devnull, "w", encoding="utf-8")
    try:
        tty = Terminal(pty.stream, color=True)
        tty.attach(Prompt())
        plain = Terminal(null)

        def noop() -> Callable[[Any], None]:
            return lambda event: None

        rows = []
        for _ in range(3):  # alternate subject and baseline
            rows.append(
                (
                    per_event(events, noop, 3),
                    per_event(events, lambda: Renderer(tty), 3),
                    per_event(events, lambda: Renderer(plain), 3),
                )
            )
        base, on_tty, on_null = (statistics.median(col) for col in zip(*rows, strict=True))
        print(f"events: {n} (a mix of {len(stream_of_events(12))} kinds)")
        print(f"no-op callback:                     {base:8.2f} us/event")
        print(f"Renderer -> Terminal on a pty:      {on_tty:8.2f} us/event (colour, input line)")
        print(f"Renderer -> Terminal on /dev/null:  {on_null:8.2f} us/event")
    finally:
        pty.close()
        null.close()


async def macro(pairs: int) -> float:
    sys.path.insert(0, str(Path(__file__).parent))
    from workflow import ASK, SCRIPT  # benchmarks/workflow.py

    from flower import Runtime, starter_flow
    from flower.kernel.terminal import Terminal
    from flower.testing import ScriptedModel
    from flower.ui.render import Renderer

    base = Path(tempfile.mkdtemp(prefix="flower-bench-render-"))
    pty = DrainedPty()
    term = Terminal(pty.stream, color=True)
    counts: list[int] = []

    async def run(root: Path, view: bool) -> float:
        seen = [0]
        renderer = Renderer(term) if view else None

        def on_event(event: Any) -> None:
            seen[0] += 1
            if renderer is not None:
                renderer(event)

        started = time.perf_counter()
        wf = starter_flow(ASK, workspace=root, run_dir=root / "runs", timeout_s=0)
        with Runtime(workspace=root, run_dir=root / "runs") as rt:
            ctx = await wf.run(rt, on_event=on_event)
        assert "_failed_at" not in ctx, ctx.get("_failed_at")
        counts.append(seen[0])
        return time.perf_counter() - started

    with ScriptedModel(SCRIPT) as model:
        for name, value in model.env(home=base / "home").items():
            os.environ[name] = value
        await run(_fresh(base, "warm"), True)
        subject: list[float] = []
        baseline: list[float] = []
        for i in range(pairs):
            for view in (True, False) if i % 2 == 0 else (False, True):
                took = await run(_fresh(base, f"{view}-{i}"), view)
                (subject if view else baseline).append(took)
    pty.close()
    ratio = statistics.median(subject) / statistics.median(baseline)
    print(f"pairs: {pairs}; events per run: {statistics.median(counts):.0f}")
    print(f"starter_flow with the Renderer on a pty: median {statistics.median(subject):.3f} s")
    print(f"starter_flow with a no-op on_event:      median {statistics.median(baseline):.3f} s")
    print(f"ratio: {ratio:.3f}x (target <= {TARGET:.2f}x)")
    return ratio


def _fresh(base: Path, name: str) -> Path:
    root = base / name
    root.mkdir()
    return root


def main() -> int:
    import anyio

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--no-e2e", action="store_true")
    args = parser.parse_args()
    micro(args.events)
    if args.no_e2e:
        return 0
    ratio = anyio.run(macro, args.pairs)
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
