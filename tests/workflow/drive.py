"""Run a workflow in a process of its own, as a user's script or `flower` would.

Tests that need a real process (killed with SIGKILL, two at once in one run_dir, a
second process that must continue the first) start this file with a JSON argument:

    {"mode": "starter", "ask": "...", "workspace": "...", "run_dir": "...", ...}
    {"mode": "steps", "steps": ["甲"], "prompt": "...", "workspace": "...", "run_dir": "..."}

It prints one JSON line with what the test checks: the wake count, the sessions, the
failure keys. The environment (the scripted model's address, HOME) is inherited.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from flower import AgentSpec, Resilience, Runtime, Step, Workflow, starter_flow

TERSE = AgentSpec(
    name="terse",
    instructions="回答极简,一行以内,不解释不寒暄。",
    allowed_tools=["Read", "Glob"],
    max_turns=4,
)


def build(args: dict[str, Any]) -> Workflow:
    if args["mode"] == "starter":
        return starter_flow(
            args.get("ask", ""),
            workspace=args["workspace"],
            run_dir=args["run_dir"],
            timeout_s=args.get("timeout_s", 0),
            rounds=args.get("rounds", 3),
            new=args.get("new", False),
        )
    steps = [Step(name, TERSE, args["prompt"]) for name in args["steps"]]
    return Workflow(steps)


async def main(args: dict[str, Any]) -> dict[str, Any]:
    workflow = build(args)
    fast = Resilience(base_delay=0.05, max_delay=0.2, probe_interval=0.1, probe_timeout=0.5)
    with (
        Runtime(workspace=args["workspace"], run_dir=args["run_dir"], resilience=fast) as rt,
        rt.rescue_on_signals(),
    ):
        ctx = await workflow.run(rt)
    return {
        "woke": ctx["_woke"],
        "sessions": ctx["_sessions"],
        "failed_at": ctx.get("_failed_at"),
        "aborted": ctx.get("_aborted"),
        "passed": [name for name in ctx if not name.startswith("_")],
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1]))), ensure_ascii=False), flush=True)
