"""The run budget through real ``flower`` processes in a pipe, the real CLI and the
scripted model, whose usage makes every request cost a known amount.

One run story, shared by the assertions (each process costs about a CPU-second):

1. ``echo "写个 hello.txt" | flower --timeout 0 --budget 0.05``: the clarifier and the goal
   setter cost $0.02002 each (the view warns at 80 %), the work round is stopped by the CLI
   mid-round, in the worker's third request, the one that crosses the cap. No model
   request follows; exit 3; the terminal says how to go on; ``flower status`` shows spent
   of the cap; the manifest row and the lineage keep the step, as after a quit.
2. ``flower`` again without ``--budget``: the cap was kept with the run, so it stops
   before any request.
3. ``flower --budget 1``: the same work session continues, the judge agrees, the bequest
   is written; every request of every process is in the spend, none twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flower.commands import EXIT_BUDGET
from flower.records.lineage import LINEAGE_NAME
from flower.testing import RecordedRequest, ScriptedModel, bash, conversation, text, tool
from flower.workflow.starter import RESUME_PLAIN

from ..workflow import scripts as S
from .terminal import FLOWER

pytestmark = pytest.mark.e2e

#: What the bundled CLI charges for these usages (its price for the scripted model's name:
#: $4 per million input tokens, $20 per million output tokens; measured).
BIG = {"input_tokens": 5000, "output_tokens": 1}
SMALL = {"input_tokens": 750, "output_tokens": 1}
PRICE = {"big": 0.02002, "small": 0.00302}
CAP = 0.05
HEIR = "你是收尾记录者"
NOTE = "## 这是什么\nhello\n## 验收\n已满足\n## 生成的文件\n无\n## 死路\n无"


def script() -> list[Any]:
    dispatch = tool("Agent", dict(S.DISPATCH.tools[0].input), usage=SMALL)
    return [
        conversation(
            "resumed", text(S.ROUND1, usage=SMALL), after_user=RESUME_PLAIN, system=S.COORDINATOR
        ),
        conversation(
            "coder",
            *(bash(f"echo {n} >> steps.txt", usage=SMALL) for n in range(6)),
            text("done", usage=SMALL),
            subagent=True,
        ),
        conversation(
            "verdict-1", text(S.ACHIEVED, usage=SMALL), system=S.JUDGE, first_user=S.ROUND1
        ),
        conversation("goal", text(S.GOAL, usage=BIG), system=S.JUDGE, first_user=S.SET_GOAL),
        conversation("clarify", text(S.BRIEF, usage=BIG), system=S.CLARIFIER),
        conversation("heir", text(NOTE, usage=SMALL), system=HEIR),
        S.coordinator(dispatch, text(S.ROUND1, usage=SMALL)),
    ]


def asked(model: ScriptedModel) -> list[RecordedRequest]:
    """The model requests, in order (token counts are free and asked for every session)."""
    return [r for r in model.requests if "count_tokens" not in r.path]


def cost(model: ScriptedModel) -> float:
    """What the model requests cost: the clarifier's and the goal's are big."""
    big = {"clarify", "goal"}
    return sum(PRICE["big"] if r.conversation in big else PRICE["small"] for r in asked(model))


def flower(ws: Path, env: dict[str, str], *args: str, ask: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [FLOWER, "-w", str(ws), "--timeout", "0", *args],
        input=ask,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=ws,
    )


def status(ws: Path, env: dict[str, str]) -> tuple[dict[str, Any], str]:
    found = subprocess.run(
        [FLOWER, "-w", str(ws), "status", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    said = subprocess.run(
        [FLOWER, "-w", str(ws), "status"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    return json.loads(found.stdout), said.stdout


def test_a_budget_stops_a_run_mid_round_and_a_raised_one_continues_the_same_session(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    scripted_model.play(script())
    env = {**os.environ, **{k: v for k, v in claude_env.items() if v}, "COLUMNS": "200"}
    env.pop("FLOWER_BUDGET", None)
    ws = tmp_path / "proj"
    ws.mkdir()

    first = flower(ws, env, "--budget", str(CAP), "--no-bequest", ask="写个 hello.txt")
    out = first.stdout + first.stderr
    assert first.returncode == EXIT_BUDGET, out[-3000:]
    talked = [r.conversation for r in asked(scripted_model)]
    assert talked == ["clarify", "goal", "work", "coder", "coder", "coder"], talked
    spent = cost(scripted_model)
    assert spent - PRICE["small"] < CAP <= spent  # the last request crossed it; none after
    assert "! budget: $0.04 of $0.05 spent (80%)" in out  # after the goal, before the work
    assert "the run's budget is spent ($0.0521 of $0.05); nothing more is asked" in out
    assert "x stopped by the budget: $0.0521 of $0.05 spent" in out
    assert "the step in flight is saved (runs/manifest.json)" in out
    assert "to go on, raise the budget: flower --budget 0.11" in out
    assert "Traceback" not in out

    rows = json.loads((ws / "runs" / "manifest.json").read_text(encoding="utf-8"))
    work = next(row for row in rows if row["step"] == "干活")
    assert not work["ok"] and work["error"].startswith("stopped: the run's budget is spent")
    lineage = json.loads((ws / "runs" / LINEAGE_NAME).read_text(encoding="utf-8"))
    assert lineage["steps"]["干活"] == work["session_id"]
    report, lines = status(ws, env)
    assert report["budget"]["cap"] == CAP and report["budget"]["reached"] is True
    assert report["budget"]["spent"] == pytest.approx(spent)
    assert "budget: $0.0521 of $0.05 spent, reached" in lines

    kept = flower(ws, env)  # no --budget: the cap stayed with the run
    assert kept.returncode == EXIT_BUDGET, (kept.stdout + kept.stderr)[-3000:]
    assert len(asked(scripted_model)) == len(talked)  # not one more request
    assert "x stopped by the budget: $0.0521 of $0.05 spent" in kept.stdout

    before = len(asked(scripted_model))
    raised = flower(ws, env, "--budget", "1")
    assert raised.returncode == 0, (raised.stdout + raised.stderr)[-3000:]
    talked = [r.conversation for r in asked(scripted_model)[before:]]
    assert talked == ["resumed", "verdict-1", "heir"], talked
    (resumed,) = scripted_model.requests_for("resumed")  # the same conversation goes on
    assert "照这份已经确认的需求" in resumed.text()
    rows = json.loads((ws / "runs" / "manifest.json").read_text(encoding="utf-8"))
    assert [r["session_id"] for r in rows if r["step"] == "干活" and r["ok"]] == [
        work["session_id"]
    ]
    report, lines = status(ws, env)
    assert report["budget"]["cap"] == 1.0 and report["budget"]["reached"] is False
    assert report["budget"]["spent"] == pytest.approx(cost(scripted_model))  # judge, bequest
    assert "budget: $0.0612 of $1 spent (6%), $0.9388 left" in lines


def test_an_answer_that_arrived_whole_is_kept_when_the_budget_stops_its_session(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """The CLI ends a session at its budget after the turn that crossed it: when that turn
    was the goal setter's whole answer, the answer is kept (the goal frozen), not paid
    for again by the next run; the budget stops the run at the next session."""
    import subprocess

    from ..workflow import scripts as S

    ws = tmp_path / "proj"
    ws.mkdir()
    scripted_model.play(S.one_round(S.ACHIEVED, S.DISPATCH, text(S.ROUND1)))
    flower = str(Path(sys.executable).with_name("flower"))
    args = [flower, "-w", str(ws), "写个 hello.txt", "--timeout", "0", "--no-bequest"]
    first = subprocess.run([*args, "--budget", "0.03"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=300)  # fmt: skip
    assert first.returncode == 3, first.stdout[-3000:]
    goal = ws / ".flower" / "notes" / "目标.md"
    assert goal.is_file() and "cat hello.txt" in goal.read_text(encoding="utf-8"), first.stdout
    assert len(scripted_model.requests_for("goal")) == 1
    again = subprocess.run([flower, "-w", str(ws), "--timeout", "0", "--no-bequest",
                            "--budget", "5"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=300)  # fmt: skip
    assert "设定目标 skipped" in again.stdout, again.stdout[-3000:]
    assert len(scripted_model.requests_for("goal")) == 1  # not asked (nor paid) again
