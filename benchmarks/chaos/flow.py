"""What each job of the chaos harness runs: a starter-style run, scripted per job.

    flower run benchmarks/chaos/flow.py:main -w <workspace>

The harness (``benchmarks/chaos``) defers one such ``flower run`` per workspace through the queue
(``examples/queue/tasks.py``) and plays every job's script on one scripted model. This
module holds both halves of the agreement between them:

- :func:`plan` and :func:`script`: what job ``<name>`` is made of (its work rounds, the
  workers the coordinator dispatches in each, the commands each worker runs) and the
  conversations that play it. A plan is drawn from the harness's seed, so a failing seed
  replays the same jobs.
- :func:`main`: the workflow ``flower run`` loads, in the flower process. It tags every
  request the CLI sends with the job and this flower's pid (``ANTHROPIC_CUSTOM_HEADERS``,
  which the CLI adds to each request), so the model can route a request to its job's
  script and the harness can tell afterwards which process drove which run when.

Every worker command appends a marker line of its own to ``work.log`` in the workspace:
a marker found twice means a command ran twice, i.e. a call was replayed.
"""

from __future__ import annotations

import dataclasses
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.testing import Conversation, bash, conversation, text, tool
from flower.workflow.base import Workflow

#: Request headers the flower process adds through the CLI (``ANTHROPIC_CUSTOM_HEADERS``).
JOB_HEADER = "x-chaos-job"
PID_HEADER = "x-chaos-pid"
#: The file each worker command appends its marker to.
WORK_LOG = "work.log"
#: A file in each workspace holding the decoy secrets (the key, the store's URL with its
#: password), as a project's ``.env`` would; the leaker worker prints it: flower must
#: mask them in the tool's output, so they reach no transcript, row or file but this one.
SECRETS = "secrets.env"
#: What tells the roles apart in a request: their rules (system prompt) and first prompt.
CLARIFIER = "你是需求澄清者"
JUDGE = "你是裁判"
COORDINATOR = "你是协调者"
SET_GOAL = "设定这件事的目标和判定清单"
#: The most work rounds a run may take: the planned ones, plus room for the rounds a
#: fault costs (a judge cut off before it ruled is asked again on the next round).
MAX_ROUNDS = 8


@dataclass(frozen=True)
class Dispatch:
    """One worker the coordinator starts: its task marker and the commands it runs."""

    task: str
    commands: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    """One job: its name, and per work round the workers dispatched in it."""

    job: str
    rounds: tuple[tuple[Dispatch, ...], ...]
    #: The worker (task marker) that prints the API key, so a leak would show.
    leaker: str = ""

    def report(self, n: int) -> str:
        """What the coordinator says at the end of round ``n`` (1-based)."""
        return f"CHAOS-REPORT {self.job} round {n}"

    def verdict(self, n: int) -> tuple[str, str]:
        """The scripted verdict on round ``n``: (state word, reason)."""
        if n >= len(self.rounds):
            return "已达成", f"{self.job} 逐条核对通过"
        return "未达成", f"{self.job} 第 {n} 轮还差一步"

    @property
    def markers(self) -> list[str]:
        return [marker(d.task, i) for r in self.rounds for d in r for i in range(len(d.commands))]


def marker(task: str, index: int) -> str:
    return f"{task}-{index}"


def plan(job: str, rng: random.Random) -> Plan:
    """A job of 1 to 3 rounds, 1 or 2 workers a round, 2 to 4 commands a worker."""
    rounds = []
    for r in range(rng.choice((1, 2, 2, 3))):
        dispatches = []
        for w in range(rng.choice((1, 2))):
            task = f"{job}-r{r + 1}{'ab'[w]}"
            commands = []
            for i in range(rng.randint(2, 4)):
                pause = "sleep 0.3; " if rng.random() < 0.4 else ""
                commands.append(f"{pause}echo {marker(task, i)} >> {WORK_LOG}")
            dispatches.append(Dispatch(task, tuple(commands)))
        rounds.append(tuple(dispatches))
    first = rounds[0][0].task
    return Plan(job, tuple(rounds), leaker=first)


def script(p: Plan, *, delay: float = 0.05) -> list[Conversation]:
    """The conversations of job ``p`` (names prefixed with the job, so fault counters and
    the request log stay per job)."""
    j = p.job
    brief = (
        f"好的,需求如下。\n\n## 目标\n{j}:按轮次把 work.log 写好\n"
        "## 验收标准\nwork.log 有每个标记\n## 边界\n只动 work.log\n## 未知与假设\n无"
    )
    goal = f"## 目标\n{j} 的 work.log 写好\n## 判定清单\n- cat work.log 有每个标记"
    convs: list[Conversation] = []
    turns: list[Any] = []
    for n, dispatches in enumerate(p.rounds, 1):
        for d in dispatches:
            payload = {
                "description": f"task {d.task}",
                "prompt": f"TASK {d.task}: run your commands in order",
                "subagent_type": "coder",
                "run_in_background": False,
            }
            turns.append(tool("Agent", payload, delay=delay))
            commands = [bash(c, delay=delay) for c in d.commands]
            if d.task == p.leaker:
                commands[1:1] = [bash(f"cat {SECRETS}")]  # the secrets in a tool's output
            convs.append(
                _repeating(
                    conversation(
                        f"{j}:{d.task}",
                        *commands,
                        text(f"{d.task} done", delay=delay),
                        first_user=f"TASK {d.task}:",
                        subagent=True,
                    )
                )
            )
        turns.append(text(p.report(n), delay=delay))
    convs.append(_repeating(conversation(f"{j}:work", *turns, system=COORDINATOR, subagent=False)))
    for n in range(1, len(p.rounds) + 1):
        state, reason = p.verdict(n)
        failed = "无" if state == "已达成" else "- cat work.log 有每个标记"
        ruling = f"## 结论\n{state}\n## 理由\n{reason}\n## 未通过\n{failed}"
        judge = conversation(
            f"{j}:verdict-{n}", text(ruling, delay=delay), system=JUDGE, first_user=p.report(n)
        )
        convs.append(_repeating(judge))
    setter = conversation(f"{j}:goal", text(goal, delay=delay), system=JUDGE, first_user=SET_GOAL)
    convs.append(_repeating(setter))
    clarifier = conversation(
        f"{j}:clarify",
        tool("Glob", {"pattern": "*"}, delay=delay),
        text(brief, delay=delay),
        system=CLARIFIER,
    )
    convs.append(_repeating(clarifier))
    return convs


def _repeating(conv: Conversation) -> Conversation:
    """``conv`` answering every request past its script with its last words, as a model
    asked to go on after it had concluded says its conclusion again: a session resumed
    after its answer was given but before flower kept it (the process was killed
    between the two) gets the same answer, not an "ended" text no parser accepts."""
    return dataclasses.replace(conv, after_end=conv.turns[-1].text)


def _workspace(argv: list[str]) -> Path:
    """The ``-w``/``--workspace`` that ``flower run`` was given (``main`` takes no
    arguments: it is called before the command opens the workspace)."""
    for i, arg in enumerate(argv):
        if arg in ("-w", "--workspace") and i + 1 < len(argv):
            return Path(argv[i + 1]).expanduser().absolute()
        for flag in ("-w", "--workspace="):
            if arg.startswith(flag) and len(arg) > len(flag):
                return Path(arg[len(flag) :]).expanduser().absolute()
    return Path.cwd()


def main() -> Any:
    """The job's workflow: the starter flow with nobody at a keyboard, fast retries, and
    nothing to do once the run has finished (a queue retry of a run whose flower ended
    after its worker died must not spend again)."""
    from flower.records.outcome import read_outcome
    from flower.runtime.resilience import Resilience
    from flower.workflow import starter_flow, wake_state

    ws = _workspace(sys.argv)
    run_dir = ws / "runs"
    os.environ["ANTHROPIC_CUSTOM_HEADERS"] = f"{JOB_HEADER}: {ws.name}\n{PID_HEADER}: {os.getpid()}"
    last = read_outcome(run_dir)
    if last.get("met") and last.get("state") == "done":
        return Workflow([], name="chaos-finished")
    state = wake_state(ws, run_dir=run_dir)
    ask = "" if state["continuing"] else f"chaos job {ws.name}: write work.log round by round"
    flow = starter_flow(
        ask,
        workspace=ws,
        run_dir=run_dir,
        timeout_s=0,
        rounds=MAX_ROUNDS,
        bequest=False,
    )
    fast = Resilience(
        base_delay=0.3,
        max_delay=2.0,
        probe_interval=0.3,
        probe_timeout=0.5,
        max_offline_wait=300.0,
        max_attempts=12,
    )
    kept = {f.name: getattr(flow, f.name) for f in dataclasses.fields(flow)}
    return FastWorkflow(**kept, resilience=fast)


@dataclass
class FastWorkflow(Workflow):
    """A Workflow whose Runtime waits out faults in seconds, not minutes (the harness's
    faults last seconds; flower's defaults are sized for real outages)."""

    resilience: Any = None

    async def run(self, runtime: Any, **kw: Any) -> Any:
        if self.resilience is not None:
            runtime.resilience = self.resilience
        return await super().run(runtime, **kw)
