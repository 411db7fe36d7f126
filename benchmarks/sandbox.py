"""What the CLI's sandbox costs per Bash command.

One ``Runtime.run`` session whose main thread runs N commands (each its own turn) and one
that runs none, each with flower's sandbox on and off, alternated in one process so the
machine's noise hits all four alike. A command's cost is the difference between the
session with N commands and the one without, divided by N; the sandbox's cost is that
figure sandboxed against unsandboxed. Wall time and CPU time (the CLI and everything it
started, waited for: bubblewrap and the command itself) are both reported; CPU is the
one a busy machine does not inflate.

    python benchmarks/sandbox.py [--pairs 5] [--commands 10] [--command true]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from flower.testing import ScriptedModel, bash, conversation, text


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def session(root: Path, i: int, prompt: str, sandboxed: bool) -> tuple[float, float]:
    from flower import AgentSpec, Runtime
    from flower.roles.sandbox import Sandbox

    ws = root / f"ws-{i}"
    ws.mkdir()
    rt = Runtime(workspace=ws, run_dir=root / f"runs-{i}", sandbox=Sandbox(sandboxed))
    spec = AgentSpec(name="bench", instructions="", allowed_tools=["Bash"])
    cpu, wall = children_cpu(), time.perf_counter()
    try:
        result = await rt.run(spec, prompt)
    finally:
        rt.close()
    wall, cpu = time.perf_counter() - wall, children_cpu() - cpu
    assert result.ok, result.error
    return wall, cpu


async def main(pairs: int, commands: int, command: str) -> int:
    root = Path(tempfile.mkdtemp(prefix="flower-bench-sandbox-"))
    script = [
        conversation("busy", *[bash(command) for _ in range(commands)], text("done"),
                     first_user="BUSY"),
        conversation("idle", text("done"), first_user="IDLE"),
    ]  # fmt: skip
    kinds = [(p, s) for p in ("BUSY", "IDLE") for s in (True, False)]
    samples: dict[tuple[str, bool], list[tuple[float, float]]] = {k: [] for k in kinds}
    with ScriptedModel(script, quiet=True) as model:
        for name, value in model.env(home=root / "home").items():
            if value:
                os.environ[name] = value
            else:
                os.environ.pop(name, None)
        n = 0
        for kind in kinds:  # warm the CLI and the page cache once each
            n += 1
            await session(root, n, kind[0], kind[1])
        for _ in range(pairs):
            for kind in kinds:
                n += 1
                samples[kind].append(await session(root, n, kind[0], kind[1]))

    def per_command(sandboxed: bool, which: int) -> float:
        busy = statistics.median(s[which] for s in samples[("BUSY", sandboxed)])
        idle = statistics.median(s[which] for s in samples[("IDLE", sandboxed)])
        return (busy - idle) / commands

    print(f"{commands} x {command!r} a session, {pairs} rounds of 4 sessions (medians)")
    for which, label in ((0, "wall"), (1, "CPU")):
        on, off = per_command(True, which), per_command(False, which)
        ratio = on / off if off > 0 else float("nan")
        print(
            f"{label:5} per command: sandboxed {on * 1000:7.1f} ms, unsandboxed"
            f" {off * 1000:7.1f} ms, +{(on - off) * 1000:6.1f} ms, ratio {ratio:.2f}x"
        )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--commands", type=int, default=10)
    parser.add_argument("--command", default="true")
    args = parser.parse_args()
    raise SystemExit(anyio.run(main, args.pairs, args.commands, args.command))
