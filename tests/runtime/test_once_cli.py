"""``flower once`` as a user runs it: a subprocess against the scripted model."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from flower.stores.prune import INTERRUPTED_NOTE
from flower.testing import ScriptedModel, bash, conversation, text

from .once import FLOWER, SMALL, run_once, session_of

pytestmark = pytest.mark.e2e

#: A Bash call that says when it is running (it touches ``started`` in the workspace) and
#: says "slept" only if nothing stopped it. Not a bare sleep: the CLI refuses those.
SLOW = "touch started && sleep 20 && echo slept"


def wait_until_running(workspace: Path, proc: subprocess.Popen[str] | None = None) -> None:
    """Return once the scripted Bash call is running (its marker file exists)."""
    deadline = time.monotonic() + 60
    while not (workspace / "started").exists():
        assert time.monotonic() < deadline, "the Bash call never started"
        assert proc is None or proc.poll() is None, "flower ended before the Bash call ran"
        time.sleep(0.05)


def test_once_streams_the_work_and_resume_continues_it(
    scripted_model: ScriptedModel, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [
            conversation("more", text("added the README", usage=SMALL), after_user="now a README"),
            conversation(
                "main", bash("echo made > proof.txt", usage=SMALL), text("made it", usage=SMALL),
                first_user="make proof",
            ),
        ]
    )  # fmt: skip
    first = run_once(["make proof", "-w", str(workspace), "-r", "runs"], env, tmp_path)
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "> Bash(echo made > proof.txt)" in out and "made it" in out and "* once done" in out
    assert "$0." in out and "context 500" in out
    sid = session_of(out)
    assert f"flower once --resume {sid}" in out
    assert (workspace / "proof.txt").read_text().strip() == "made"
    (row,) = json.loads((tmp_path / "runs" / "manifest.json").read_text())
    assert row["step"] == "once" and row["session_id"] == sid and row["ok"]

    again = ["--resume", sid, "now a README", "-w", str(workspace), "-r", "runs"]
    second = run_once(again, env, tmp_path)
    assert second.returncode == 0, second.stderr
    assert "added the README" in second.stdout and session_of(second.stdout) == sid
    (req,) = scripted_model.requests_for("more")
    assert "make proof" in req.text() and "made it" in req.text()  # the same conversation
    assert len(json.loads((tmp_path / "runs" / "manifest.json").read_text())) == 2


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, 1), (401, 2)],  # a step that failed; a key the API refused is bad input
)
def test_a_failed_step_exits_with_the_error(
    scripted_model: ScriptedModel,
    env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    status: int,
    code: int,
) -> None:
    from flower.testing import Turn

    scripted_model.play([conversation("main", Turn(text="x", fail_always=status))])
    done = run_once(["do it", "-w", str(workspace)], env, tmp_path)
    assert done.returncode == code, done.stdout
    assert "x once failed" in done.stdout and str(status) in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "say what to do"),
        (["x", "--tools", " , "], "name at least one tool"),
        (["x", "-w", "a-file"], "is a file"),
        (["--fork", "x"], "give it --resume <id>"),
        (["--resume", "no-such-session", "-w", "."], "no session no-such-session"),
    ],
)
def test_bad_input_is_one_clear_line(
    args: list[str], needle: str, env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    done = run_once(args, env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert needle in done.stderr and "Traceback" not in done.stderr


def test_a_store_that_cannot_be_opened_is_a_clear_error(
    tmp_path: Path, env: dict[str, str], workspace: Path
) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "sessions.db").write_bytes(b"not a database at all " * 20)
    done = run_once(["x", "-w", str(workspace), "-r", "runs"], env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "sessions.db" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_no_credentials_is_a_clear_error(tmp_path: Path, env: dict[str, str]) -> None:
    bare = {k: v for k, v in env.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    done = run_once(["x"], bare, tmp_path)
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_ctrl_c_asks_for_a_line_and_the_session_goes_on_with_it(
    scripted_model: ScriptedModel, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    from tests.commands.terminal import Flower

    said = "use tabs not spaces"
    scripted_model.play(
        [
            conversation("after", text("ok, tabs", usage=SMALL), after_user=said),
            conversation("main", bash(SLOW, usage=SMALL), first_user="format it"),
        ]
    )
    run = Flower("once", "format it", "-w", str(workspace), cwd=tmp_path)
    wait_until_running(workspace)
    run.ctrl_c()  # the byte a keyboard sends, into the terminal
    run.expect("hat should the agent hear")
    run.type(said)
    assert run.finish() == 0, run.text[-3000:]
    assert "ok, tabs" in run.text and "* once done" in run.text
    (after,) = scripted_model.requests_for("after")
    assert "format it" in after.text() and said in after.text()
    # the running call was stopped, not waited out: its result is the interruption note
    assert after.tool_results() == {"toolu_main_0_0": INTERRUPTED_NOTE}


def test_a_second_ctrl_c_quits_with_130(
    scripted_model: ScriptedModel, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    from tests.commands.terminal import Flower

    scripted_model.play([conversation("main", bash(SLOW, usage=SMALL), first_user="wait")])
    run = Flower("once", "wait", "-w", str(workspace), cwd=tmp_path)
    wait_until_running(workspace)
    run.ctrl_c()
    run.expect("hat should the agent hear")
    run.ctrl_c()
    assert run.finish() == 130, run.text[-3000:]
    assert "quit (Ctrl-C)" in run.text and "session: " in run.text
    assert "Traceback" not in run.text


def test_sigint_in_a_pipe_quits_cleanly(
    scripted_model: ScriptedModel, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play([conversation("main", bash(SLOW, usage=SMALL), first_user="wait")])
    proc = subprocess.Popen(
        [FLOWER, "once", "wait", "-w", str(workspace)], env=env, cwd=tmp_path,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_until_running(workspace, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "session: " in out and "Traceback" not in err
    rows = json.loads((workspace / "runs" / "manifest.json").read_text())
    assert rows and rows[0]["step"] == "once" and not rows[0]["ok"]


def test_fork_continues_a_copy_and_flags_reach_the_agent(
    scripted_model: ScriptedModel, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [
            conversation("copy", text("forked", usage=SMALL), after_user="try another way"),
            conversation("main", text("first", usage=SMALL), first_user="plan it"),
        ]
    )
    first = run_once(
        ["plan it", "-w", str(workspace), "-i", "RULE-XYZ", "-t", "Read"], env, tmp_path
    )
    assert first.returncode == 0, first.stderr
    sid = session_of(first.stdout)
    (req,) = scripted_model.requests_for("main")
    assert "RULE-XYZ" in req.system_text and {t["name"] for t in req.body["tools"]} >= {"Read"}
    fork = run_once(
        ["--resume", sid, "--fork", "try another way", "-w", str(workspace)], env, tmp_path
    )
    assert fork.returncode == 0, fork.stderr
    copy = session_of(fork.stdout)
    assert copy != sid and "forked" in fork.stdout
    (forked,) = scripted_model.requests_for("copy")
    assert "plan it" in forked.text()  # the copy holds the original conversation
    rows = json.loads((workspace / "runs" / "manifest.json").read_text())
    assert [row["session_id"] for row in rows] == [sid, copy]
