"""How far past a run budget spending goes, with the real CLI and the scripted model.

    python benchmarks/budget_overshoot.py

Every request the scripted model answers costs the same known amount (2,000 input tokens
and 1 output token: $0.00802 at the CLI's price for the scripted model's name), so what was
really spent is the number of requests answered times that price. Each scenario runs one
Runtime with ``Budget(cap)`` and reports, against the cap:

- ``real``: every request the model answered, priced;
- ``counted``: what flower recorded as the run's spend (the CLI's ``total_cost_usd`` of
  each session);
- ``past``: requests answered after the one that crossed the cap.

Scenarios: one thread calling tools; a coordinator whose foreground worker does the work;
two foreground workers in parallel (one Agent call each in the same reply, every request
delayed so both are in flight); background workers (the coordinator's turn ends while
they work); and a side question running beside the work, both sessions started with the
same "what is left".
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

USAGE = {"input_tokens": 2000, "output_tokens": 1}
PRICE = 0.00802
CAP = 0.03  # crossed by the fourth request


def scenarios() -> dict[str, tuple[list[Any], dict[str, Any]]]:
    from flower.testing import ToolCall, Turn, bash, conversation, text

    def work(name: str, first: str, *, delay: float = 0.0, n: int = 8) -> Any:
        turns = [bash(f"echo {name}{i}", usage=USAGE, delay=delay) for i in range(n)]
        return conversation(name, *turns, text("done", usage=USAGE, delay=delay),
                            subagent=True, first_user=first)  # fmt: skip

    def agents(*tasks: str, background: bool = False) -> Turn:
        calls = tuple(
            ToolCall("Agent", {"description": t, "prompt": t, "subagent_type": "coder",
                               "run_in_background": background})
            for t in tasks
        )  # fmt: skip
        return Turn(tools=calls, usage=USAGE)

    main = [bash(f"echo {i}", usage=USAGE) for i in range(8)] + [text("done", usage=USAGE)]
    return {
        "one thread": ([conversation("main", *main, subagent=False)], {}),
        "foreground worker": (
            [work("w1", "task 1"),
             conversation("main", agents("task 1"), text("done", usage=USAGE), subagent=False)],
            {"agents": True},
        ),
        "two parallel workers": (
            [work("w1", "task 1", delay=0.3), work("w2", "task 2", delay=0.3),
             conversation("main", agents("task 1", "task 2"), text("done", usage=USAGE),
                          subagent=False)],
            {"agents": True},
        ),
        "background workers": (
            [work("w1", "task 1", delay=0.2), work("w2", "task 2", delay=0.2),
             conversation("main", agents("task 1", "task 2", background=True),
                          text("waiting", usage=USAGE), text("done", usage=USAGE),
                          subagent=False)],
            {"agents": True},
        ),
        "side question beside the work": (
            [conversation("aside", *[bash(f"echo a{i}", usage=USAGE, delay=0.2) for i in range(8)],
                          text("answer", usage=USAGE), first_user="ASIDE"),
             conversation("main", *[bash(f"echo {i}", usage=USAGE, delay=0.2) for i in range(8)],
                          text("done", usage=USAGE), subagent=False)],
            {"aside": True},
        ),
    }  # fmt: skip


async def measure(name: str, script: list[Any], how: dict[str, Any]) -> dict[str, Any]:
    from claude_agent_sdk import AgentDefinition

    from flower.roles.agent import AgentSpec
    from flower.runtime.budget import Budget, BudgetReached
    from flower.runtime.runner import Runtime
    from flower.testing import ScriptedModel

    home = Path(tempfile.mkdtemp(prefix="flower-budget-"))
    ws = home / "ws"
    ws.mkdir()
    with ScriptedModel() as model:
        os.environ.update({k: v for k, v in model.env(home=home).items() if v})
        model.play(script)
        coder = {"coder": AgentDefinition(description="codes", prompt="code", tools=["Bash"])}
        spec = AgentSpec(name="main", instructions="", allowed_tools=["Bash", "Agent"],
                         agents=coder if how.get("agents") else None)  # fmt: skip
        with Runtime(workspace=ws, run_dir=home / "runs") as rt:
            rt.budget = Budget(CAP)
            jobs = [rt.run(spec, "go", step_name="work")]
            if how.get("aside"):
                jobs.append(aside(ws, home, spec))
            for outcome in await asyncio.gather(*jobs, return_exceptions=True):
                if isinstance(outcome, BaseException) and not isinstance(outcome, BudgetReached):
                    raise outcome
            _, counted = rt.budget.state()
        await asyncio.sleep(6)  # background workers get the CLI's 5 s shutdown grace
        answered = [r for r in model.requests if "count_tokens" not in r.path]
    crossing = next(i for i in range(len(answered)) if (i + 1) * PRICE >= CAP)
    return {
        "scenario": name,
        "requests": len(answered),
        "real": len(answered) * PRICE,
        "counted": counted,
        "past": len(answered) - crossing - 1,
    }


async def aside(ws: Path, home: Path, spec: Any) -> Any:
    """A side question's own Runtime, started while the work runs (it finds the run's
    budget through the workspace, as ``flower``'s side questions do)."""
    from flower.runtime.runner import Runtime

    await asyncio.sleep(0.1)
    with Runtime(workspace=ws, run_dir=home / "runs" / "aside") as rt:
        return await rt.run(spec, "ASIDE where are we", step_name="aside")


def main() -> None:
    print(f"cap ${CAP}, every request ${PRICE}: the 4th request crosses the cap\n")
    print(f"{'scenario':32} {'requests':>8} {'real':>9} {'counted':>9} {'past cap':>9}")
    for name, (script, how) in scenarios().items():
        row = asyncio.run(measure(name, script, how))
        print(f"{name:32} {row['requests']:>8} ${row['real']:>8.4f} ${row['counted']:>8.4f}"
              f" {row['past']:>9}")  # fmt: skip


if __name__ == "__main__":
    main()
