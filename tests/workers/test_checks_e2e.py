"""Checks that run: flower runs the goal's checks itself, and what they show outranks the judge.

Whole ``flower`` runs through the real CLI and the scripted model. The scripted judge
always rules "achieved"; what is asserted is what flower did anyway: the round is
``not_yet`` when a check it ran failed, the ledger and ``flower status`` say which check
overruled the judge, a held-out script the worker never saw still fails a weakened test,
and the same failure three rounds in a row is "stuck" (exit 4 without a human; a question
with one).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flower.testing import ScriptedModel, bash, conversation, text, tool

from ..commands.terminal import Flower
from ..workflow import scripts as S

pytestmark = pytest.mark.e2e

FLOWER = str(Path(sys.executable).with_name("flower"))
PY = sys.executable
BROKEN = "def add(a, b):\n    return a - b\n"
RIGHT = "def add(a, b):\n    return a + b\n"
GOAL = (
    "## 目标\ncalc.add 会加法\n## 判定清单\n"
    f"- `{PY} -c 'import calc; assert calc.add(2, 3) == 5'` 退出码为 0\n"
    "- calc.py 写得清楚"
)


def status(ws: Path) -> dict:
    done = subprocess.run(
        [FLOWER, "-w", str(ws), "status", "--json"], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def crew(*work: object, report: str = S.ROUND1, rounds: int = 1) -> list:
    """A goal with the runnable check above, a coordinator that dispatches once a round
    and reports success, a judge that always says achieved."""
    turns = []
    for _ in range(rounds):
        turns += [S.DISPATCH, text(report)]
    return [
        conversation("coder", *work, text("done: all tests pass"), subagent=True),
        conversation("verdict", text(S.ACHIEVED), system=S.JUDGE, first_user=S.VERIFY),
        S.goal_setter(GOAL),
        S.clarifier(ask=False),
        S.coordinator(*turns),
    ]


def test_a_worker_that_says_it_passed_never_makes_the_round_achieved(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    scripted_model.play(crew(tool("Write", {"file_path": "calc.py", "content": BROKEN})))
    run = Flower(
        "-w", str(ws), "写个 calc", "--timeout", "0", "--no-bequest", "--rounds", "1", cwd=tmp_path
    )
    assert run.finish(timeout=240) == 1, run.text[-3000:]  # never "achieved"
    assert "x check 1 failed" in run.text, run.text[-3000:]
    assert "Overruled by check 1" in run.text or "被第 1 条检查推翻" in run.text, run.text[-3000:]

    (ruling,) = scripted_model.requests_for("verdict")
    told = ruling.text()
    assert "flower 亲自跑过的检查" in told and "[没通过]" in told and "AssertionError" in told
    report = status(ws)
    judge = report["judge"]
    assert judge["overruled"] == 1 and judge["verdicts"] == {"not_yet": 1}, judge
    assert judge["checks"] == {"failed": 1}, judge
    assert report["verdict"]["state"] == "not_yet", report["verdict"]
    notes = (ws / ".flower" / "notes" / "判定记录.md").read_text(encoding="utf-8")
    assert "flower 跑检查:没通过" in notes and "被第 1 条检查推翻" in notes, notes


def test_a_right_answer_passes_its_check_and_the_judge_is_told(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    scripted_model.play(crew(tool("Write", {"file_path": "calc.py", "content": RIGHT})))
    run = Flower(
        "-w", str(ws), "写个 calc", "--timeout", "0", "--no-bequest", "--rounds", "1", cwd=tmp_path
    )
    assert run.finish(timeout=240) == 0, run.text[-3000:]
    assert "* check 1 passed" in run.text, run.text[-3000:]
    (ruling,) = scripted_model.requests_for("verdict")
    assert "[通过]" in ruling.text()
    judge = status(ws)["judge"]
    assert judge["checks"] == {"passed": 1} and judge["overruled"] == 0, judge
    assert judge["rounds_to_achieved"] == 1, judge


HELD = "check_calc.sh"
HELD_BODY = f"{PY} -c 'import calc; assert calc.add(10, 5) == 15, \"held-out: add is wrong\"'"
HELD_GOAL = (
    "## 目标\ncalc.add 会加法\n## 判定清单\n"
    f"- `{PY} -m pytest -q -p no:cacheprovider test_calc.py` 退出码为 0\n"
    f"- `bash $FLOWER_HELD_OUT/{HELD}` 退出码为 0(加法对任意两个数都对)\n"
    f"## 暗检脚本\n### {HELD}\n```sh\n{HELD_BODY}\n```\n"
)


def test_a_weakened_test_passes_and_the_held_out_check_still_fails(
    scripted_model: ScriptedModel, claude_env: dict[str, str], claude_home: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    state = claude_home / ".local" / "state" / "flower" / "runs"
    work = [
        tool("Write", {"file_path": "calc.py", "content": BROKEN}),
        tool(
            "Write", {"file_path": "test_calc.py", "content": "def test_add():\n    assert True\n"}
        ),
        bash(f"cat {state}/*/held-out/{HELD}; echo cat=$?"),
        bash(f"find {claude_home} -name '{HELD}' | wc -l"),
        bash(f"ln -s {state} peek; cat peek/*/held-out/{HELD}; echo link=$?"),
        bash(f"echo 'exit 0' > {state}/x; echo write=$?"),
        tool("Glob", {"pattern": f"**/{HELD}", "path": str(claude_home)}),
        bash(f"git show HEAD:{HELD} 2>&1 | head -1"),
    ]
    scripted_model.play(
        [
            conversation("coder", *work, text("done: tests pass"), subagent=True),
            conversation("verdict", text(S.ACHIEVED), system=S.JUDGE, first_user=S.VERIFY),
            S.goal_setter(HELD_GOAL),
            S.clarifier(ask=False),
            S.coordinator(S.DISPATCH, text(S.ROUND1)),
        ]
    )
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    run = Flower(
        "-w", str(ws), "写个 calc", "--timeout", "0", "--no-bequest", "--rounds", "1", cwd=tmp_path
    )
    assert run.finish(timeout=240) == 1, run.text[-3000:]
    assert "* check 1 passed" in run.text and "x check 2 failed" in run.text, run.text[-3000:]

    (script,) = list(state.glob(f"*/held-out/{HELD}"))  # written outside the workspace
    assert script.read_text() == HELD_BODY + "\n"
    assert not list(ws.rglob(HELD))  # and nowhere in it, nor in the goal file's copy
    shown = "\n".join(scripted_model.requests_for("coder")[-1].tool_results().values())
    assert "held-out: add is wrong" not in shown and HELD_BODY not in shown, shown
    assert "cat=1" in shown and "link=1" in shown and "write=1" in shown, shown
    assert "\n0\n" in f"\n{shown}\n" or shown.splitlines().count("0") >= 1, shown  # find: none
    (ruling,) = scripted_model.requests_for("verdict")
    assert "held-out: add is wrong" in ruling.text()  # the judge sees what the script showed
    assert status(ws)["judge"]["overruled"] == 1


def test_the_same_check_failing_three_rounds_is_stuck(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """Without anyone to answer it stops with "stuck" (exit 4) after three rounds, never
    spending the five it was allowed."""
    ws = tmp_path / "proj"
    ws.mkdir()
    work = [tool("Write", {"file_path": "calc.py", "content": BROKEN})]
    scripted_model.play(crew(*work, rounds=5))
    run = subprocess.run(
        [FLOWER, "-w", str(ws), "写个 calc", "--timeout", "0", "--no-bequest", "--rounds", "5"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
    )  # fmt: skip
    assert run.returncode == 4, run.stdout[-3000:] + run.stderr[-2000:]
    assert "stuck" in run.stdout + run.stderr, run.stdout[-3000:]
    assert len(scripted_model.requests_for("verdict")) == 3
    assert status(ws)["judge"]["rounds"] == 3


def test_stuck_with_a_human_there_asks_what_to_do(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    scripted_model.play(crew(tool("Write", {"file_path": "calc.py", "content": BROKEN}), rounds=5))
    run = Flower(
        "-w", str(ws), "写个 calc", "--no-bequest", "--rounds", "5", "--stuck-after", "2",
        cwd=tmp_path,
    )  # fmt: skip
    run.expect("连续 2 轮没通过", timeout=240)
    run.type("2")  # stop
    assert run.finish(timeout=120) == 4, run.text[-3000:]
    assert len(scripted_model.requests_for("verdict")) == 2
