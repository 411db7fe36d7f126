"""What the workflow layer costs on top of the bare steps it runs.

Subject: ``starter_flow(...).run(rt)``: three steps (确认需求, 设定目标, 干活 with one
judge ruling), so four CLI sessions, plus everything the layer adds: the lineage written
at every session id and checked against the store, the brief and goal parsed and frozen,
the human channel's MCP server, the events. Baseline: the same four sessions (the same
specs and prompts) as four bare ``Runtime.run`` calls in a row. Both run alternately in
one process, each in a fresh workspace, against the scripted model with the real CLI.

    python benchmarks/workflow.py [--pairs 8]
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

from flower.testing import ScriptedModel, conversation, text

TARGET = 1.10
ASK = "写个 hello.txt"
BRIEF = "## 目标\n写 hello.txt\n## 验收标准\n内容是 hi\n## 边界\n只动它\n## 未知与假设\n无"
VERDICT = "## 结论\n已达成\n## 理由\n核对过"
GOAL = "## 目标\nhello.txt 写好\n## 判定清单\n- cat hello.txt 输出 hi"

SCRIPT = [
    conversation("verdict", text(VERDICT), system="你是裁判", first_user="判定这一轮"),
    conversation("goal", text(GOAL), system="你是裁判"),
    conversation("clarify", text(BRIEF), system="你是需求澄清者"),
    conversation("work", text("ROUND-1 写好了"), system="你是协调者"),
]


async def workflow(root: Path) -> float:
    from flower import Runtime, starter_flow

    started = time.perf_counter()
    wf = starter_flow(ASK, workspace=root, run_dir=root / "runs", timeout_s=0)
    with Runtime(workspace=root, run_dir=root / "runs") as rt:
        ctx = await wf.run(rt)
    elapsed = time.perf_counter() - started
    assert "_failed_at" not in ctx, (ctx.get("_failed_at"), ctx["_results"])
    return elapsed


async def bare(root: Path) -> float:
    """The same four sessions, specs, prompts and workbench, without the workflow around
    them (building the specs is counted on both sides)."""
    from flower import Runtime, starter_flow
    from flower.workflow.goal import SET_PROMPT, VERIFY_PROMPT

    started = time.perf_counter()
    wf = starter_flow(ASK, workspace=root, run_dir=root / "runs", timeout_s=0)
    clarify, goal, work = (step.spec for step in wf.steps)
    judge = judge_spec()
    with Runtime(workspace=root, run_dir=root / "runs", workbench=wf.workbench) as rt:
        calls = [
            (clarify, ASK, "确认需求"),
            (goal, SET_PROMPT.format(brief=BRIEF), "设定目标"),
            (work, f"照这份已经确认的需求把事情做完:\n\n{BRIEF}\n\n{GOAL}", "干活"),
            (judge, VERIFY_PROMPT.format(goal=GOAL, report="ROUND-1 写好了"), "干活·判定#1"),
        ]
        for spec, prompt, name in calls:
            result = await rt.run(spec, prompt, step_name=name)
            assert result.ok, result.error
    return time.perf_counter() - started


def judge_spec() -> object:
    from flower import HumanChannel, judge

    return judge("干活·判定", HumanChannel(timeout_s=0))


async def main(pairs: int) -> int:
    base = Path(tempfile.mkdtemp(prefix="flower-bench-wf-"))
    with ScriptedModel(SCRIPT) as model:
        for name, value in model.env(home=base / "home").items():
            os.environ[name] = value
        await workflow(_fresh(base, "warm-a"))  # warm the CLI and imports once each
        await bare(_fresh(base, "warm-b"))
        subject: list[float] = []
        baseline: list[float] = []
        for i in range(pairs):
            order = (workflow, bare) if i % 2 == 0 else (bare, workflow)
            for run in order:
                took = await run(_fresh(base, f"{run.__name__}-{i}"))
                (subject if run is workflow else baseline).append(took)
    ratio = statistics.median(subject) / statistics.median(baseline)
    print(f"pairs: {pairs}")
    print(f"starter_flow (3 steps, 4 sessions): median {statistics.median(subject):.3f} s")
    print(f"bare Runtime.run x4 (same specs):   median {statistics.median(baseline):.3f} s")
    print(f"ratio: {ratio:.3f}x (target <= {TARGET:.2f}x)")
    return 0 if ratio <= TARGET else 1


def _fresh(base: Path, name: str) -> Path:
    root = base / name
    root.mkdir()
    return root


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=8)
    sys.exit(anyio.run(main, parser.parse_args().pairs))
