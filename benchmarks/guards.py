"""In-process cost of one guard decision against a hook that returns ``{}``.

The CLI calls every hook over the SDK's control channel, so the hooks' own Python cost
is what flower adds on top of that round trip. Measured here, alternated in rounds with
the baseline in the same event loop:

- PreToolUse for a coordinator (its full PreToolUse list from ``build_options``: the
  delegate guard with glance): a denied ``rm``, an allowed ``git status`` (runs
  ``is_ephemeral``), a denied Write;
- PostToolUse spill of a 10,000-character Bash result: the same text again (its spill
  file exists, so only hashing and a stat), and a new text each call (a file written);
- PostToolUse for a short result (nothing to spill: the common case).

Reports microseconds per call (median of rounds) and the ratio to the baseline.

    python benchmarks/guards.py [--rounds 15] [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from flower.records.workbench import Workbench
from flower.roles.agent import build_options
from flower.roles.factory import coordinator, worker

Hook = Callable[[Any, Any, Any], Awaitable[Any]]


async def nothing(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
    return {}


def chain(hooks: list[Hook]) -> Hook:
    """All hooks of one event, called in turn (the CLI runs them concurrently; the sum
    is the CPU they cost)."""

    async def run(data: Any, tool_use_id: Any, context: Any) -> Any:
        answer = None
        for hook in hooks:
            answer = await hook(data, tool_use_id, context)
        return answer

    return run


async def per_call_us(hook: Hook, inputs: list[dict[str, Any]], calls: int) -> float:
    n = len(inputs)
    started = time.perf_counter_ns()
    for i in range(calls):
        await hook(inputs[i % n], "toolu_1", None)
    return (time.perf_counter_ns() - started) / calls / 1000


def pre(tool: str, **tool_input: Any) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}


def post_bash(stdout: str) -> dict[str, Any]:
    return {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cat big.log"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False},
    }


async def main_async(rounds: int, calls: int) -> None:
    ws = Path(tempfile.mkdtemp(prefix="flower-bench-")) / "ws"
    ws.mkdir()
    wb = Workbench(ws)
    spec = coordinator("协调者", "", {"coder": worker("d", "p")})
    options = build_options(spec, cwd=ws, workbench=wb, use_plugin=False)
    hooks = options.hooks or {}
    pre_hook = chain([h for m in hooks["PreToolUse"] for h in m.hooks])
    post_hook = chain([h for m in hooks["PostToolUse"] for h in m.hooks if h.__name__ == "spill"])

    line = "2026-11-29 12:00:00 INFO worker 7 processed batch 1234 ok\n"
    big = (line * (10_000 // len(line) + 1))[:10_000]
    writes = min(calls, 200)  # each writes a 10 KB file: keep the disk use small
    fresh_iter = (f"{i:08d}" + big[8:] for i in range(10**8))

    cases: list[tuple[str, Hook, Callable[[], list[dict[str, Any]]]]] = [
        ("Pre: coordinator rm (deny)", pre_hook, lambda: [pre("Bash", command="rm -rf build")]),
        (
            "Pre: coordinator git status (glance)",
            pre_hook,
            lambda: [pre("Bash", command="git status")],
        ),
        ("Pre: coordinator Write (deny)", pre_hook, lambda: [pre("Write", file_path="/x")]),
        ("Post: spill 10k, file exists", post_hook, lambda: [post_bash(big)]),
        (
            "Post: spill 10k, new file each call",
            post_hook,
            lambda: [post_bash(next(fresh_iter)) for _ in range(writes)],
        ),
        ("Post: 200-char result (no spill)", post_hook, lambda: [post_bash(big[:200])]),
    ]
    results: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n, _, _ in cases}
    for round_no in range(rounds + 1):  # round 0 warms up
        for name, hook, make in cases:
            inputs = make()
            n = len(inputs) if len(inputs) > 1 else calls
            base = await per_call_us(nothing, inputs, n)
            mine = await per_call_us(hook, inputs, n)
            if round_no:
                results[name][0].append(base)
                results[name][1].append(mine)

    print(f"{'decision':40} {'baseline µs':>12} {'guard µs':>10} {'ratio':>8}")
    for name, (base_s, mine_s) in results.items():
        b, m = statistics.median(base_s), statistics.median(mine_s)
        print(f"{name:40} {b:12.2f} {m:10.2f} {m / b:8.1f}")
    print(f"({rounds} alternated rounds of {calls} calls, {writes} for new files;")
    print(" baseline = a hook returning {} on the same inputs)")
    shutil.rmtree(ws.parent, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(main_async(max(3, args.rounds), max(100, args.calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
