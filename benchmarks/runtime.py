"""What ``Runtime.run`` costs on top of a bare ``claude_agent_sdk.query``.

Three shapes of session, each played by both against the scripted model with the real
CLI, alternated in one process so machine noise hits both alike: one turn (a text
reply), a tool call (Bash ``ls``, then text), and a resumed session (the tool-call
session continued by id). The Runtime runs twice: with the workers' sandbox off, which
is flower's own cost (the client with its interrupt watcher, the guards, the pruning
store mirroring every entry to SQLite, context tracking, events, a manifest row), and
with the sandbox on (every Bash command in bubblewrap), which is the price of the
confinement. A model's window is known from the first session on
(``flower.runtime.windows``), so no session asks for it first. Target: the Runtime with the
sandbox off at most 1.05x the bare query, per shape (medians of alternated runs).

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
from typing import Any

import anyio

from flower.testing import ScriptedModel, bash, conversation, text

TARGET = 1.05
SHAPES = ("one turn", "tool call", "resumed")
PROMPTS = {"one turn": "ONE say done", "tool call": "TOOL list the workspace and say done"}


async def bare(
    workspace: Path, env: dict[str, str], shape: str, resume: str | None
) -> tuple[float, str]:
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    options = ClaudeAgentOptions(cwd=str(workspace), env=env, allowed_tools=["Bash"], resume=resume)
    prompt = PROMPTS.get(shape, "again, say done")
    started = time.perf_counter()
    sid, ok = "", False
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, ResultMessage):
            ok, sid = not message.is_error, message.session_id
    elapsed = time.perf_counter() - started
    assert ok, f"the bare query failed ({shape})"
    return elapsed, sid


async def runtime(
    workspace: Path, run_dir: Path, shape: str, resume: str | None, sandboxed: bool
) -> tuple[float, str]:
    from flower import AgentSpec, Runtime
    from flower.roles.sandbox import Sandbox

    rt = Runtime(workspace=workspace, run_dir=run_dir, sandbox=Sandbox(sandboxed))
    spec = AgentSpec(name="bench", instructions="", allowed_tools=["Bash"])
    prompt = PROMPTS.get(shape, "again, say done")
    started = time.perf_counter()
    try:
        result = await rt.run(spec, prompt, resume=resume)
    finally:
        rt.close()
    elapsed = time.perf_counter() - started
    assert result.ok, result.error
    return elapsed, result.session_id or ""


def script() -> list[Any]:
    return [
        conversation("one", text("done"), text("done"), first_user="ONE"),
        conversation("tool", bash("ls"), text("done"), text("done again"), first_user="TOOL"),
    ]


async def main(pairs: int) -> int:
    root = Path(tempfile.mkdtemp(prefix="flower-bench-"))
    workspace = root / "ws"
    workspace.mkdir()
    subjects = ("bare query", "Runtime (no sandbox)", "Runtime (sandbox)")
    times: dict[tuple[str, str], list[float]] = {(s, k): [] for s in SHAPES for k in subjects}
    with ScriptedModel(script(), quiet=True) as model:
        env = model.env(home=root / "home")
        for name, value in env.items():  # the Runtime reads the process environment
            if value:
                os.environ[name] = value
            else:
                os.environ.pop(name, None)
        n = 0
        for i in range(pairs + 1):  # the first round warms the page cache and the CLI
            for subject in subjects:
                resume = None
                for shape in SHAPES:
                    n += 1
                    if subject == "bare query":
                        took, sid = await bare(workspace, env, shape, resume)
                    else:
                        took, sid = await runtime(
                            workspace, root / f"runs-{n}", shape, resume, "no" not in subject
                        )
                    if shape == "tool call":
                        resume = sid  # the resumed shape continues this session
                    if i:
                        times[(shape, subject)].append(took)
    print(f"{pairs} rounds, each shape alternated bare / Runtime / Runtime+sandbox; medians")
    print(f"{'shape':10} {'subject':22} {'median s':>9} {'ratio':>6}")
    worst = 0.0
    for shape in SHAPES:
        base = statistics.median(times[(shape, "bare query")])
        for subject in subjects:
            med = statistics.median(times[(shape, subject)])
            print(f"{shape:10} {subject:22} {med:9.3f} {med / base:6.2f}")
            if subject == "Runtime (no sandbox)":
                worst = max(worst, med / base)
    verdict = "meets" if worst <= TARGET else "MISSES"
    print(
        f"Runtime without the sandbox, worst shape: {worst:.2f}x:"
        f" {verdict} the {TARGET:.2f}x target"
    )
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    sys.exit(anyio.run(main, max(3, parser.parse_args().pairs)))
