"""What ``Runtime.run`` costs on top of a bare ``claude_agent_sdk.query``.

Both play the same scripted conversation (a Bash call, then a final text) against the
scripted model, with the real CLI, alternately in one process so machine noise hits
both alike. The Runtime adds the client with its interrupt watcher, the guards, the
pruning session store mirroring every entry to SQLite, context tracking, events and a
``manifest.json`` row. Target: the Runtime's median at most 1.10x the bare query's.

    python benchmarks/runtime.py [--pairs 12]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from flower.testing import ScriptedModel, bash, conversation, text

TARGET = 1.10
PROMPT = "list the workspace and say done"


async def bare(workspace: Path, env: dict[str, str]) -> float:
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    options = ClaudeAgentOptions(cwd=str(workspace), env=env, allowed_tools=["Bash"])
    started = time.perf_counter()
    ok = False
    async for message in query(prompt=PROMPT, options=options):
        if isinstance(message, ResultMessage):
            ok = not message.is_error
    elapsed = time.perf_counter() - started
    assert ok, "the bare query failed"
    return elapsed


async def runtime(workspace: Path, run_dir: Path) -> float:
    from flower import AgentSpec, Runtime

    rt = Runtime(workspace=workspace, run_dir=run_dir)
    spec = AgentSpec(name="bench", instructions="", allowed_tools=["Bash"])
    started = time.perf_counter()
    try:
        result = await rt.run(spec, PROMPT)
    finally:
        rt.close()
    elapsed = time.perf_counter() - started
    assert result.ok, result.error
    return elapsed


async def main(pairs: int) -> int:
    root = Path(tempfile.mkdtemp(prefix="flower-bench-"))
    workspace = root / "ws"
    workspace.mkdir()
    with ScriptedModel([conversation("main", bash("ls"), text("done"))]) as model:
        env = model.env(home=root / "home")
        for name, value in env.items():  # the Runtime reads the process environment
            if value:
                os.environ[name] = value
            else:
                os.environ.pop(name, None)
        await bare(workspace, env)  # warm the page cache and the CLI once each
        await runtime(workspace, root / "runs")
        times: dict[str, list[float]] = {"bare query": [], "Runtime.run": []}
        for i in range(pairs):
            times["bare query"].append(await bare(workspace, env))
            times["Runtime.run"].append(await runtime(workspace, root / f"runs-{i}"))
    base = statistics.median(times["bare query"])
    print(
        f"{'subject':14} {'median s':>9} {'min s':>7} {'max s':>7} {'ratio':>6}   ({pairs} pairs)"
    )
    for name, samples in times.items():
        med = statistics.median(samples)
        print(f"{name:14} {med:9.3f} {min(samples):7.3f} {max(samples):7.3f} {med / base:6.2f}")
    ratio = statistics.median(times["Runtime.run"]) / base
    pairs_ = zip(times["Runtime.run"], times["bare query"], strict=True)
    paired = statistics.median(r / b for r, b in pairs_)
    verdict = "meets" if ratio <= TARGET else "MISSES"
    print(f"median of the {pairs} per-pair ratios: {paired:.2f}")
    print(f"Runtime.run is {ratio:.2f}x the bare query: {verdict} the {TARGET:.2f}x target")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    sys.exit(anyio.run(main, max(10, parser.parse_args().pairs)))
