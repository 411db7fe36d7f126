"""The starter flow end to end: real SDK, real bundled CLI, the scripted model on loopback.

Clarify asks through the real MCP ask tool and a UI thread answers; the brief and the
goal are frozen; the judge sends round 1 back and the same worker session continues;
round 2 is achieved. Then the unhappy paths: an unreachable goal nobody answers for,
a process killed with SIGKILL mid-work and continued by the next one, two processes in
one run folder. Waking (Enter, a remark, /new) is driven through `flower` itself in
tests/commands/test_go_pty.py.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flower import Runtime, starter_flow, wake_state
from flower.kernel.events import Event
from flower.records.lineage import Lineage
from flower.runtime.resilience import Resilience
from flower.stores.sqlite import SqliteSessionStore
from flower.testing import ScriptedModel, conversation, message_text, text
from flower.workflow import GOAL_KEY, ROUND_KEY, VERDICT_KEY
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Goal

from . import scripts as S
from .fakes import Answerer

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

DRIVER = Path(__file__).with_name("drive.py")


def fast() -> Resilience:
    return Resilience(base_delay=0.05, max_delay=0.2, probe_interval=0.1, probe_timeout=0.5)


def manifest(run_dir: Path) -> list[dict[str, Any]]:
    return json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))


def user_texts(request: Any) -> list[str]:
    return [message_text(m) for m in request.messages if m.get("role") == "user"]


async def test_the_full_starter_flow_clarifies_sets_a_goal_and_works_two_rounds(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(S.two_rounds())
    run_dir = tmp_path / "runs"
    wf = starter_flow("写个 hello.txt", workspace=workspace, run_dir=run_dir)
    events: list[Event] = []
    with (
        Answerer(wf.channel, {"换行": "LF"}) as ui,
        Runtime(workspace=workspace, run_dir=run_dir, resilience=fast()) as rt,
    ):
        ctx = await wf.run(rt, on_event=events.append)

    assert "_failed_at" not in ctx and "_aborted" not in ctx, ctx.get("_failed_at")
    # clarify: one real question through the MCP ask tool, answered by the UI thread
    assert ui.answered == [(S.ASK["question"], "LF")]
    (after_ask,) = [r for r in scripted_model.requests_for("clarify") if r.turn == 1]
    assert "LF" in " ".join(after_ask.tool_results().values())
    notes = workspace / ".flower" / "notes"
    brief = Brief.load(notes / "需求.md")
    assert brief is not None and brief.complete() and brief.goal == "写一个 hello.txt"
    assert "LF" in (notes / "问答记录.md").read_text(encoding="utf-8")
    # the goal, frozen, with checks
    goal = Goal.load(notes / "目标.md")
    assert goal is not None and goal.checks == ["cat hello.txt 输出 hi", "没有改动别的文件"]
    assert ctx[GOAL_KEY] == goal
    # the work: a real subagent wrote the file; round 2 resumed the same worker session
    assert (workspace / "hello.txt").read_text() == "hi"
    rows = {row["step"]: row for row in manifest(run_dir)}
    assert list(rows) == [
        "确认需求",
        "设定目标",
        "干活",
        "干活·判定#1",
        "干活#round2",
        "干活·判定#2",
        "收尾",  # the bequest's read-only round, after the run ended
    ]
    assert rows["干活#round2"]["session_id"] == rows["干活"]["session_id"]
    assert rows["干活·判定#1"]["session_id"] != rows["干活·判定#2"]["session_id"]
    (round2,) = [r for r in scripted_model.requests_for("work") if r.turn == 2]
    feedback = user_texts(round2)[-1]
    assert "没有证明别的文件没动" in feedback and "- 没有改动别的文件" in feedback
    assert ctx[VERDICT_KEY].achieved and ctx[ROUND_KEY] == 2
    verdicts = [e.payload["state"] for e in events if e.kind == "verdict"]
    assert verdicts == ["not_yet", "achieved"]
    # judge sessions never enter the lineage
    lineage = Lineage.open(run_dir, workspace)
    assert set(lineage.steps) == {"确认需求", "设定目标", "干活"}
    judged = {rows["干活·判定#1"]["session_id"], rows["干活·判定#2"]["session_id"]}
    assert not judged & set(lineage.steps.values())
    assert lineage.steps["干活"] == rows["干活"]["session_id"]
    # every request of a judge starts a fresh conversation
    for name in ("verdict-1", "verdict-2"):
        assert all(r.turn == 0 for r in scripted_model.requests_for(name))
    kinds = [e.kind for e in events]
    assert kinds.count("step") == 3 and "ask" in kinds
    # the judge ledger: both rulings, in the store under the run's id and in the notes
    store = SqliteSessionStore(str(run_dir / "sessions.db"))
    try:
        ledger = store.rulings(lineage.run)
    finally:
        store.close()
    assert [(r["round"], r["state"], r["session_id"]) for r in ledger] == [
        (1, "not_yet", rows["干活·判定#1"]["session_id"]),
        (2, "achieved", rows["干活·判定#2"]["session_id"]),
    ]
    assert ledger[0]["failed"] == ["没有改动别的文件"] and ledger[0]["cost_usd"] > 0
    notes_ledger = (notes / "判定记录.md").read_text(encoding="utf-8")
    assert notes_ledger.index("第 1 轮 · 未达成") < notes_ledger.index("第 2 轮 · 已达成")


async def test_an_overruled_judge_is_in_the_ledger_and_in_flower_status(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from flower.cli import main

    scripted_model.play(S.one_round(S.UNREACHABLE, text(S.ROUND1)))
    run_dir = tmp_path / "runs"
    wf = starter_flow("写个 hello.txt", workspace=workspace, run_dir=run_dir)
    events: list[Event] = []
    with (
        Answerer(wf.channel, {"unreachable": "1"}),  # accept the result anyway
        Runtime(workspace=workspace, run_dir=run_dir, resilience=fast()) as rt,
    ):
        ctx = await wf.run(rt, on_event=events.append)
    assert "_failed_at" not in ctx
    (override,) = [e.payload for e in events if e.kind == "override"]
    assert override == {"round": 1, "choice": "accept", "said": ""}
    bequest = (workspace / "CLAUDE.md").read_text(encoding="utf-8")  # the next tool is told
    assert "人接受了结果,裁判判为无法达成:要在 macOS 上验证" in bequest
    assert "- cat hello.txt 输出 hi:未满足" in bequest

    args = ["status", "-w", str(workspace), "-r", str(run_dir)]
    shown = CliRunner().invoke(main, args)
    assert shown.exit_code == 0, shown.output
    assert re.search(
        r"judge: 1 round\(s\) \(1 unreachable\), \$[\d.]+; overruled 1 time\(s\)"
        r" \(1 accepted anyway\); agrees with the human 0 of 1 \(0%\)",
        shown.output,
    ), shown.output
    as_json = json.loads(CliRunner().invoke(main, [*args, "--json"]).output)
    assert as_json["judge"]["overrides"] == {"accept": 1} and as_json["judge"]["rate"] == 0.0
    listed = json.loads(CliRunner().invoke(main, [*args, "--all", "--json"]).output)
    (run,) = listed
    assert run["judge"]["reviewed"] == 1 and run["judge"]["verdicts"] == {"unreachable": 1}


async def test_an_unreachable_goal_with_nobody_to_answer_aborts(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(S.one_round(S.UNREACHABLE, text(S.ROUND1), text(S.ROUND2)))
    run_dir = tmp_path / "runs"
    wf = starter_flow("写个 hello.txt", workspace=workspace, run_dir=run_dir, timeout_s=0)
    with Runtime(workspace=workspace, run_dir=run_dir, resilience=fast()) as rt:
        ctx = await wf.run(rt)
    assert ctx["_failed_at"] == "干活" and "unreachable" in ctx["_aborted"]
    assert ctx[VERDICT_KEY].unreachable
    steps = [row["step"] for row in manifest(run_dir)]
    assert steps[-3:] == ["干活", "干活·判定#1", "收尾"]  # a stopped run leaves its note too
    (ask,) = wf.channel.asks
    assert ask.state == "timeout" and "unreachable" in ask.question


def start(args: dict[str, Any], cwd: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    return subprocess.Popen(
        [sys.executable, str(DRIVER), json.dumps(args)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def wait_for(predicate: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def starter_args(workspace: Path, tmp_path: Path) -> Iterator[dict[str, Any]]:
    yield {"mode": "starter", "workspace": str(workspace), "run_dir": str(tmp_path / "runs")}


def test_a_process_killed_mid_work_is_continued_by_the_next_one(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    starter_args: dict[str, Any],
) -> None:
    # SIGKILL: no cleanup at all, the CLI dies too (power loss). SIGTERM (the step in flight
    # rescued into the manifest, exit 143, then continued) is covered through `flower` by
    # tests/commands/test_go_pty.py::test_a_run_stopped_by_sigterm_is_rescued_and_continued_...
    # and for a Runtime in a script by tests/runtime/test_runtime_extras_e2e.py (rescue-SIGTERM).
    from flower.workflow.starter import RESUME_PLAIN

    scripted_model.play(
        [
            conversation("resumed", text(S.ROUND1), after_user=RESUME_PLAIN),
            *S.one_round(S.ACHIEVED, S.DISPATCH, text("never", delay=120)),
        ]
    )
    run_dir = tmp_path / "runs"
    first = start({**starter_args, "ask": "写个 hello.txt"}, tmp_path)
    try:  # killed while the coordinator waits for its second reply, after real work
        wait_for(lambda: any(r.turn == 1 for r in scripted_model.requests_for("work")))
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate(timeout=60)
    assert first.returncode == -signal.SIGKILL
    assert (workspace / "hello.txt").read_text() == "hi"
    work_sid = Lineage.open(run_dir, workspace).steps["干活"]
    with Runtime(workspace=workspace, run_dir=run_dir) as rt:
        assert rt.has_session(work_sid)
    before = wake_state(workspace, run_dir=run_dir)
    assert before["waking"] and before["checks"] == 2 and before["woke"] == 1

    second = finish(start({**starter_args, "ask": ""}, tmp_path))
    assert second["woke"] == 2 and second["failed_at"] is None
    assert second["sessions"]["干活"] == work_sid
    rows = [row for row in manifest(run_dir)]
    steps = [row["step"] for row in rows]
    assert steps.count("确认需求") == 1 and steps.count("设定目标") == 1  # skipped on wake
    resumed = next(row for row in rows if row["step"] == "干活" and row["ok"])
    assert resumed["session_id"] == work_sid
    (request,) = scripted_model.requests_for("resumed")
    texts = user_texts(request)
    assert "照这份已经确认的需求" in texts[0] and RESUME_PLAIN in texts[-1]
    assert len(scripted_model.requests_for("clarify")) == 1  # nobody asked again
    assert len(scripted_model.requests_for("goal")) == 1


def test_two_processes_in_one_run_dir_keep_both_lineages_and_every_manifest_row(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # Also the Runtime's own case: both processes' manifest rows, each read-merge-written
    # under the lock, and two run ids.
    scripted_model.play(
        [
            conversation("甲", text("A", delay=1.5), first_user="甲:"),
            conversation("乙", text("B", delay=1.5), first_user="乙:"),
        ]
    )
    run_dir = tmp_path / "runs"
    base = {"mode": "steps", "workspace": str(workspace), "run_dir": str(run_dir)}
    procs = [
        start({**base, "steps": ["甲"], "prompt": "甲:读"}, tmp_path),
        start({**base, "steps": ["乙"], "prompt": "乙:读"}, tmp_path),
    ]
    results = [finish(p) for p in procs]
    lineage = Lineage.open(run_dir, workspace)
    assert lineage.steps == {"甲": results[0]["sessions"]["甲"], "乙": results[1]["sessions"]["乙"]}
    assert lineage.woke == 2
    rows = manifest(run_dir)
    assert sorted(row["step"] for row in rows) == ["乙", "甲"]
    assert len({row["run"] for row in rows}) == 2 and all(row["ok"] for row in rows)
