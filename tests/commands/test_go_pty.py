"""``flower "..."`` as a person uses it: a real pty, real keystrokes, the real bundled CLI.

Each test starts the installed ``flower`` executable in a pseudo-terminal against the
scripted model (running in the test process, so the test can see every request the
agents made) and types what a person would type.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from flower.testing import ScriptedModel, bash, conversation, text, tool
from flower.workflow.brief import Brief
from flower.workflow.starter import RESUME_PLAIN
from flower.workflow.verdicts import Goal

from ..workflow import scripts as S
from .terminal import FLOWER, Flower

pytestmark = pytest.mark.e2e

ASK = "写个 hello.txt"
SLOW = 60  # seconds a scripted reply waits: long enough to act during it, never reached
ORACLE = "你是旁路问答"


def quick_flow(*work_turns: Any, extra: tuple[Any, ...] = ()) -> list[Any]:
    """Clarify without questions, a goal, the given coordinator turns, round 1 achieved."""
    return [*extra, *S.one_round(S.ACHIEVED, *work_turns)]


def manifest(ws: Path) -> list[dict[str, Any]]:
    return json.loads((ws / "runs" / "manifest.json").read_text(encoding="utf-8"))


def _ledger(ws: Path) -> list[dict[str, Any]]:
    status = subprocess.run(
        [FLOWER, "status", "--json", "-w", str(ws)], capture_output=True, text=True, check=True
    )
    run = json.loads(status.stdout)
    import sqlite3

    with sqlite3.connect(ws / "runs" / "sessions.db") as con:
        con.row_factory = sqlite3.Row
        rows = [dict(r) for r in con.execute("select * from ledger order by id")]
    assert run["judge"]["rounds"] == len([r for r in rows if r["kind"] == "verdict"])
    return rows


def notes(ws: Path) -> Path:
    return ws / ".flower" / "notes"


def wait_for(predicate: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def user_texts(request: Any) -> list[str]:
    from flower.testing import message_text

    return [message_text(m) for m in request.messages if m.get("role") == "user"]


def test_a_first_run_asks_what_to_do_takes_a_digit_and_ends_with_the_cost(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # The whole flow after the question (a goal, two rounds, the cost) is the README demo's,
    # driven the same way by tests/commands/test_demo.py; here the clarifier is enough.
    scripted_model.play(
        [conversation("oracle", text("ORACLE-SAYS 在等你回答"), system=ORACLE), *S.two_rounds()]
    )
    run = Flower("-w", str(workspace), "--clarify-only", cwd=tmp_path)
    run.expect("What should it do")
    run.type(ASK)
    run.expect("answer 1-2")
    run.type("?现在在等什么")  # a side question, even while a question waits: not its answer
    run.expect("ORACLE-SAYS")
    status = subprocess.run(
        [FLOWER, "status", "--json", "-w", str(workspace)], capture_output=True, text=True
    )
    (waiting,) = json.loads(status.stdout)["pending"]  # another process sees the question
    assert waiting["question"] == S.ASK["question"] and waiting["options"] == ["LF", "CRLF"]
    run.type("1")
    assert run.finish() == 0, run.text[-3000:]
    status = subprocess.run(
        [FLOWER, "status", "--json", "-w", str(workspace)], capture_output=True, text=True
    )
    assert json.loads(status.stdout)["pending"] == []  # answered: no longer waiting
    brief = Brief.load(notes(workspace) / "需求.md")
    assert brief is not None and brief.complete()
    assert "答:LF" in (notes(workspace) / "问答记录.md").read_text(encoding="utf-8")
    (after,) = [r for r in scripted_model.requests_for("clarify") if r.turn == 1]
    assert "LF" in " ".join(after.tool_results().values())
    screen = run.text
    for seen in ("确认需求", "1) LF", "2) CRLF", "done - total $"):
        assert seen in screen, seen


def test_a_question_waiting_at_a_kill_is_asked_again_and_answers_the_asker(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """kill -9 while the clarifier's question waits: the next flower shows it again, the
    answer typed there reaches the clarifier's own session when it resumes."""
    import os
    import sqlite3

    scripted_model.play(S.two_rounds())
    first = Flower("-w", str(workspace), "--clarify-only", ASK, cwd=tmp_path)
    first.expect("answer 1-2")
    db = workspace / "runs" / "sessions.db"

    def mirrored() -> bool:  # a question that waits has had its turn mirrored to the store
        with sqlite3.connect(db) as con:
            return bool(con.execute("select count(*) from entries").fetchone()[0])

    wait_for(mirrored, timeout=20)
    os.killpg(first.child.pid, signal.SIGKILL)  # flower and its CLI, as a power cut would
    assert first.finish() == 128 + signal.SIGKILL
    status = subprocess.run(
        [FLOWER, "status", "-w", str(workspace)], capture_output=True, text=True, check=True
    )
    assert "asked before the run stopped (确认需求)" in status.stdout, status.stdout

    again = Flower("-w", str(workspace), "--clarify-only", cwd=tmp_path)
    again.expect("continuing in")  # a clarification cut short is a run to continue
    again.expect("last time its process was killed during 确认需求")
    again.expect("A question was waiting when the run stopped")
    again.expect("answer 1-2")
    again.type("2")
    again.expect("Continue\\?")
    again.type("")
    assert again.finish() == 0, again.text[-3000:]
    resumed = [r for r in scripted_model.requests_for("clarify") if r.turn == 1]
    told = user_texts(resumed[-1])[-1]
    assert "上次运行在等人回答你的这个问题时停了" in told and "人现在的回答:CRLF" in told
    assert S.ASK["question"] in told
    assert resumed[-1].messages[0] == scripted_model.requests_for("clarify")[0].messages[0]
    brief = Brief.load(notes(workspace) / "需求.md")
    assert brief is not None and brief.complete()
    assert not (workspace / "runs" / "pending.json").exists()  # delivered once


def test_waking_with_enter_a_phrase_new_and_dash_dash_new(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    phrase = "顺便支持代码块高亮"
    scripted_model.play(
        [
            conversation("woken", text("WAKE-REPORT"), after_user=phrase, system=S.COORDINATOR),
            S.judge("verdict-2", "WAKE-REPORT", S.ACHIEVED),
            conversation("goal-2", text(S.GOAL + "\n- 有高亮"), system=S.JUDGE, after_user=phrase),
            *quick_flow(S.DISPATCH, text(S.ROUND1)),
        ]
    )
    first = Flower("-w", str(workspace), ASK, "--timeout", "0", cwd=tmp_path)
    assert first.finish() == 0, first.text[-3000:]
    brief_before = (notes(workspace) / "需求.md").read_text(encoding="utf-8")

    # It finished: the wake says so, and Enter leaves it as it is (nothing is spent).
    asked = len(scripted_model.requests)
    enter = Flower("-w", str(workspace), cwd=tmp_path)
    enter.expect("last time it finished: the goal was met")
    enter.expect("It finished. Enter = leave it as it is")
    assert "brief confirmed" in enter.text
    enter.type("")
    assert enter.finish() == 0, enter.text[-3000:]
    assert "left as it is" in enter.text and len(scripted_model.requests) == asked

    said = Flower("-w", str(workspace), cwd=tmp_path)
    said.expect("It finished")
    said.type(phrase)
    assert said.finish() == 0, said.text[-3000:]
    brief_now = (notes(workspace) / "需求.md").read_text(encoding="utf-8")
    assert brief_now.count(phrase) == 1 and brief_now.startswith(brief_before.rstrip()[:20])
    brief = Brief.load(notes(workspace) / "需求.md")
    assert brief is not None and phrase in brief.prompt_block()
    goal = Goal.load(notes(workspace) / "目标.md")
    assert goal is not None and "有高亮" in goal.checks
    rounds = [row["round"] for row in _ledger(workspace) if row["kind"] == "verdict"]
    assert rounds == [1, 2], rounds  # the wake's round is numbered after the first run's
    (woken, *_) = scripted_model.requests_for("woken")
    assert phrase in user_texts(woken)[-1] and "有高亮" in user_texts(woken)[-1]  # hears both
    assert "照这份已经确认的需求" in user_texts(woken)[0]  # in the same conversation
    (goal_request, *_) = scripted_model.requests_for("goal-2")  # set again from the amended
    assert phrase in user_texts(goal_request)[-1]  # brief, in the goal setter's own session
    assert "设定这件事的目标" in user_texts(goal_request)[0]

    # Starting over only needs the archive and a fresh clarifier: --clarify-only stops there.
    fresh = Flower("-w", str(workspace), "--timeout", "0", "--clarify-only", cwd=tmp_path)
    fresh.expect("It finished")
    fresh.type("/new")
    fresh.expect("new piece of work")
    fresh.type("另一件事")
    assert fresh.finish() == 0, fresh.text[-3000:]
    (archived,) = (notes(workspace) / "archive").iterdir()
    # the run id goes too: left behind, it would bring the old lineage back from the store
    kept = {p.name for p in archived.iterdir()}
    assert kept == {"lineage.json", "run.json", "需求.md", "目标.md"}
    assert any("另一件事" in user_texts(r)[0] for r in scripted_model.requests_for("clarify"))
    assert len(scripted_model.requests_for("clarify")) == 2

    # `--new` on the command line: archived and clarified afresh, no question asked
    again = Flower(
        *("-w", str(workspace), "--new", "第三件事", "--timeout", "0", "--clarify-only"),
        cwd=tmp_path,
    )
    assert again.finish() == 0, again.text[-3000:]
    assert "Continue?" not in again.text
    assert len(list((notes(workspace) / "archive").iterdir())) == 2
    assert len(scripted_model.requests_for("clarify")) == 3
    assert "第三件事" in user_texts(scripted_model.requests_for("clarify")[-1])[0]
    assert len(scripted_model.requests_for("goal")) == 1  # --clarify-only: no goal set again


def test_a_run_stopped_by_a_gate_says_why_then_and_at_the_next_wake(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """The judge's goal lacks its checks: the run stops at 设定目标 and every place says
    why: the closing line, flower status (the step refused, the outcome), the manifest,
    and the banner of the next flower."""
    scripted_model.play(
        [S.coder(), S.goal_setter("## 目标\nhello.txt 写好"), S.clarifier(ask=False)]
    )
    run = Flower("-w", str(workspace), ASK, "--timeout", "0", cwd=tmp_path)
    assert run.finish() == 1, run.text[-3000:]
    said = " ".join(run.text.split())
    assert "x stopped at 设定目标: the answer lacked" in said, said[-800:]
    status = subprocess.run(
        [FLOWER, "status", "-w", str(workspace)], capture_output=True, text=True, check=True
    )
    assert (
        "x  设定目标" in status.stdout and "answer not accepted: the answer lacked" in status.stdout
    )
    assert "last time it stopped at 设定目标: the answer lacked" in status.stdout
    rows = {row["step"]: row for row in manifest(workspace)}
    assert rows["设定目标"]["refused"].startswith("the answer lacked")

    again = Flower("-w", str(workspace), cwd=tmp_path)
    again.expect("last time it stopped at 设定目标")
    again.expect("Continue\\?")
    again.ctrl_c()
    assert again.finish() == 130


def test_ctrl_c_then_words_reach_the_agent_and_the_same_session_goes_on(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    words = "先别写测试,专心写 hello"
    scripted_model.play(
        [conversation("told", text(S.ROUND1), after_user=words), *quick_flow(text("x", delay=SLOW))]
    )
    run = Flower("-w", str(workspace), ASK, "--timeout", "0", cwd=tmp_path)
    wait_for(lambda: bool(scripted_model.requests_for("work")))
    run.ctrl_c()
    run.expect("Stopped. What should the agent hear")
    run.type(words)
    assert run.finish() == 0, run.text[-3000:]
    (told,) = scripted_model.requests_for("told")
    assert words in user_texts(told)[-1]
    rows = {row["step"]: row for row in manifest(workspace)}
    assert rows["干活"]["ok"] and rows["干活"]["attempts"] == 1  # an interrupt is no failure
    assert "Traceback" not in run.text


def test_ctrl_c_stops_the_running_tool_at_once_and_enter_goes_on(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """The first Ctrl-C stops the round before the worker's slow command writes its file;
    nothing runs while the human thinks; Enter resumes the same session with nothing
    added, and the CLI's own words for a stopped tool never reach the screen."""
    from flower.runtime.runner import Runtime

    slow = conversation(
        "slow", bash("sleep 4; printf late > late.txt"), text("done"), subagent=True
    )
    goes_on = conversation(
        "goes-on", text(S.ROUND1), after_user=Runtime.CONTINUE_NOTE, system=S.COORDINATOR
    )
    scripted_model.play([goes_on, slow, *quick_flow(S.DISPATCH, text("never reached"))])
    run = Flower("-w", str(workspace), ASK, "--timeout", "0", cwd=tmp_path)
    wait_for(lambda: len(scripted_model.requests_for("slow")) >= 1)
    time.sleep(0.5)  # the worker's sleep has started
    run.ctrl_c()
    run.expect("Stopped. What should the agent hear")
    time.sleep(5)  # longer than the sleep: had it gone on, late.txt would exist now
    assert not (workspace / "late.txt").exists(), "the stopped command ran to its end"
    asked = len(scripted_model.requests)
    time.sleep(0.5)
    assert len(scripted_model.requests) == asked, "a model request while paused"
    run.type("")
    run.expect("going on with nothing added")
    assert run.finish() == 0, run.text[-3000:]
    (resumed,) = scripted_model.requests_for("goes-on")
    assert Runtime.CONTINUE_NOTE in user_texts(resumed)[-1]
    assert resumed.messages[0] == scripted_model.requests_for("work")[0].messages[0]  # same one
    assert not (workspace / "late.txt").exists()
    assert "doesn't want to proceed" not in run.text and "STOP" not in run.text


def test_ctrl_c_at_the_first_prompt_quits_and_leaves_the_folder_as_it_was(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """A bare flower in a new folder asks what to do; Ctrl-C there quits (130), and the
    next flower is not greeted as a wake by an empty store left behind."""
    folder = tmp_path / "fresh"
    folder.mkdir()
    run = Flower(cwd=folder)
    run.expect("What should it do?")
    run.ctrl_c()
    assert run.finish() == 130, run.text[-2000:]
    assert list(folder.iterdir()) == []
    assert scripted_model.requests == []


def test_ctrl_c_twice_quits_with_130_and_the_step_in_the_manifest(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(quick_flow(text("x", delay=SLOW)))
    run = Flower("-w", str(workspace), ASK, "--timeout", "0", cwd=tmp_path)
    wait_for(lambda: bool(scripted_model.requests_for("work")))
    run.ctrl_c()
    run.expect("What should the agent hear")
    run.ctrl_c()
    started = time.monotonic()
    run.expect("quitting: saving the step in flight", timeout=2)  # said at once
    assert run.finish() == 130, run.text[-3000:]
    quit_took = time.monotonic() - started
    work = [row for row in manifest(workspace) if row["step"] == "干活"]
    assert work and not work[0]["ok"] and work[0]["session_id"]
    assert work[0]["error"] == "stopped: interrupted before it finished"
    assert "Traceback" not in run.text and "quit" in run.text
    assert "~ 干活 stopped" in run.text and "Error" not in run.text  # no class names
    said = " ".join(run.text.split())  # the line wraps at the terminal's width
    assert "manifest.json; run flower here again to continue it" in said
    assert quit_took < 4, f"the second Ctrl-C took {quit_took:.1f} s to quit"


def test_side_questions_and_an_inbox_line_while_it_works(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    note = "顺便加一个 README"
    scripted_model.play(
        [
            conversation("oracle", text("ORACLE-SAYS 正在写 hello"), system=ORACLE),
            *quick_flow(
                text("working", delay=4),
                tool("mcp__human__inbox", {}),
                text(S.ROUND1),
            ),
        ]
    )
    run = Flower("-w", str(workspace), ASK, "--timeout", "0", cwd=tmp_path)
    wait_for(lambda: bool(scripted_model.requests_for("work")))
    run.type("?现在到哪了")
    run.expect("ORACLE-SAYS")
    run.type("？还要多久")
    wait_for(lambda: len(scripted_model.requests_for("oracle")) >= 2)
    run.type(note)
    assert run.finish() == 0, run.text[-3000:]
    assert run.text.count("ORACLE-SAYS") >= 2
    assert note in (notes(workspace) / "需求.md").read_text(encoding="utf-8")
    (checked,) = [r for r in scripted_model.requests_for("work") if r.turn == 2]
    assert note in " ".join(checked.tool_results().values())
    main_steps = [row["step"] for row in manifest(workspace)]
    assert "旁路问答" not in main_steps
    aside = json.loads((workspace / "runs" / "aside" / "manifest.json").read_text("utf-8"))
    assert [row["step"] for row in aside] == ["旁路问答", "旁路问答"]
    # the closing total counts the side questions, and says their part
    said = " ".join(run.text.split())
    total = re.search(r"\* done - total \$(\d+\.\d{4}) \(side questions \$(\d+\.\d{4})\)", said)
    assert total, said[-600:]
    side_usd = sum(float(row["cost_usd"]) for row in aside)
    steps_usd = sum(float(row["cost_usd"]) for row in manifest(workspace))
    assert side_usd > 0 and float(total.group(2)) == pytest.approx(side_usd, abs=6e-5)
    assert float(total.group(1)) == pytest.approx(steps_usd + side_usd, abs=6e-5)
    oracle_prompt = user_texts(scripted_model.requests_for("oracle")[0])[0]
    assert "现在到哪了" in oracle_prompt and "确认需求" in oracle_prompt  # recent events


def test_a_run_stopped_by_sigterm_is_rescued_and_continued_by_the_next_flower(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # SIGKILL (no rescue, the CLI dies too) and the continuation's details are covered
    # once, by tests/workflow/test_starter_e2e.py::test_a_process_killed_mid_work_...
    scripted_model.play(
        [
            conversation("resumed", text(S.ROUND1), after_user=RESUME_PLAIN),
            *quick_flow(S.DISPATCH, text("x", delay=SLOW)),
        ]
    )
    run = Flower("-w", str(workspace), ASK, "--timeout", "0", cwd=tmp_path)
    wait_for(lambda: any(r.turn == 1 for r in scripted_model.requests_for("work")))
    run.signal(signal.SIGTERM)
    assert run.finish() == 128 + signal.SIGTERM
    (rescued,) = [row for row in manifest(workspace) if row["step"] == "干活"]
    assert rescued["error"] == "killed-by-signal" and not rescued["ok"]
    again = Flower("-w", str(workspace), "--timeout", "0", cwd=tmp_path)
    again.expect("last time its process was stopped by SIGTERM during 干活")  # no Ctrl-C
    again.expect("Continue\\?")
    again.type("")
    assert again.finish() == 0, again.text[-3000:]
    assert scripted_model.requests_for("resumed")
    assert len(scripted_model.requests_for("clarify")) == 1


def test_piped_and_unattended_it_runs_to_the_end(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # the clarifier's question settles at once (nobody can answer a pipe); one round
    scripted_model.play(S.one_round(S.ACHIEVED, S.DISPATCH, text(S.ROUND1), ask=True))
    done = subprocess.run(
        [FLOWER, "-w", str(workspace), "--timeout", "0", "--no-bequest"],
        input=ASK,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert "\x1b" not in done.stdout  # no colour, no cursor games in a pipe
    assert "done - total $" in done.stdout
    assert not (workspace / "CLAUDE.md").exists() and "left a note" not in done.stdout


def test_a_second_flower_on_an_active_run_is_refused_and_says_who_has_it(
    workspace: Path, tmp_path: Path, claude_env: dict[str, str]
) -> None:
    first = Flower("-w", str(workspace), cwd=tmp_path)  # waits for what to do: holds the run
    try:
        first.expect("What should it do")
        second = subprocess.run(
            [FLOWER, "-w", str(workspace), "写个 hello.txt"],
            capture_output=True, text=True, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"active in another flower (pid {first.child.pid} on" in second.stderr
        assert "--force" in second.stderr and "Traceback" not in second.stderr
        assert "typing into its terminal or its page" in second.stderr  # how to reach it
        assert len(second.stderr.strip().splitlines()) == 1
    finally:
        first.ctrl_c()
        assert first.finish() == 130


def test_a_misspelt_command_from_a_real_shell(tmp_path: Path) -> None:
    done = subprocess.run(
        [FLOWER, "onec", "hi"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 2 and "did you mean `flower once`" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_no_credentials_on_a_terminal_starts_setup_then_the_run_and_no_escape_reaches_it(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    import os
    import stat

    hostile = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred"  # from a tool's output and from the model
    scripted_model.play(
        quick_flow(
            bash("printf '\\033]0;pwned\\007\\033[2J'; exit 3"),
            text(f"{S.ROUND1} {hostile}"),
        )
    )
    run = Flower(
        *("-w", str(workspace), ASK, "--timeout", "0", "-v"),
        cwd=tmp_path,
        env={"ANTHROPIC_API_KEY": ""},
    )
    run.expect("key> ")
    run.type("sk-ant-api03-offline-test-key")
    run.expect("url> ")
    run.type("")
    run.expect("model> ")
    run.type("")
    run.expect("lang> ")
    run.type("")
    assert run.finish() == 0, run.text[-3000:]
    saved = Path(os.environ["XDG_CONFIG_HOME"]) / "flower" / ".env"
    assert "sk-ant-api03-offline-test-key" in saved.read_text(encoding="utf-8")
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert "sk-ant-api03-offline-test-key" not in run.text  # never echoed
    assert "done - total $" in run.text
    assert "\x1b]0;pwned" not in run.raw and "\x1b[2J" not in run.raw
    assert "ROUND-1-REPORT" in run.text


def test_no_credentials_in_a_pipe_is_one_line_and_exit_2(
    claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    import os

    env = {**os.environ, "ANTHROPIC_API_KEY": ""}
    done = subprocess.run(
        [FLOWER, "-w", str(workspace), ASK],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "no credentials" in line and "flower setup" in line


def test_flower_run_drives_your_own_workflow(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    from pathlib import Path as P

    example = P(__file__).resolve().parents[2] / "examples" / "flows.py"
    (workspace / "seed.txt").write_text("苹果\n", encoding="utf-8")
    scripted_model.play(
        [
            conversation(
                "取词",
                tool("Read", {"file_path": str(workspace / "seed.txt")}),
                text("苹果"),
                first_user="读 seed.txt",
            )
        ]
    )
    done = subprocess.run(
        [FLOWER, "run", f"{example}:main", "-w", str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert "取词" in done.stdout and "done - total $" in done.stdout
    bad = subprocess.run(
        [FLOWER, "run", f"{example}:nothing"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "has no 'nothing'" in bad.stderr


def test_without_a_terminal_only_the_first_question_waits(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    second = {"question": "要不要测试?", "options": ["要", "不要"]}
    scripted_model.play(
        [
            conversation(
                "clarify",
                tool("mcp__human__ask", S.ASK),
                tool("mcp__human__ask", second),
                text(S.BRIEF),
                system=S.CLARIFIER,
            ),
        ]
    )
    done = subprocess.run(  # only the clarifier's questions matter here
        [FLOWER, "-w", str(workspace), "--timeout", "8", "--clarify-only"],
        input=ASK,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert done.stdout.count("pass --timeout 0") == 1  # said once
    log = (notes(workspace) / "问答记录.md").read_text(encoding="utf-8")
    assert log.count("· timeout") == 2
    at = {r.turn: r.at for r in scripted_model.requests_for("clarify")}
    assert at[1] - at[0] >= 8  # the first question waited for an answer that never came
    assert at[2] - at[1] < 6  # the second settled at once instead of waiting 8 s more
