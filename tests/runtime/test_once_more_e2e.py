"""``flower once`` beyond the happy path: what a retry, an outage and a handoff look like
on its terminal view, the flags that must reach the CLI, ``--resume`` with no new words,
and ``--version``."""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import flower
from flower import hookimpl
from flower.cli import main
from flower.commands.once import CONTINUE
from flower.kernel.events import Event
from flower.plugins import get_plugin_manager
from flower.runtime.resilience import RESUME_PROMPT, Resilience
from flower.testing import ScriptedModel, Turn, bash, conversation, text

from .once import FLOWER, SMALL, run_once, session_of

pytestmark = pytest.mark.e2e


class Outage:
    """Takes the scripted model away for half a second when flower decides to retry."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model

    @hookimpl
    def flower_event(self, event: Event) -> None:
        if event.kind == "retry":
            self.model.restart(after=0.5)


def test_a_retry_an_outage_and_a_handoff_show_on_the_once_view(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # In-process, so the default Resilience can be made quick: the first attempt gets a
    # 529, the endpoint is gone for 0.5 s, the resumed session overflows, and the
    # successor finishes after a (mechanical) handoff.
    quick = functools.partial(
        Resilience, base_delay=0.05, max_delay=0.2, probe_interval=0.1, probe_timeout=0.5
    )
    monkeypatch.setattr("flower.runtime.runner.Resilience", quick)
    monkeypatch.chdir(tmp_path)
    scripted_model.play(
        [
            conversation("successor", text("finished", usage=SMALL), first_user="你接手"),
            conversation(
                "resumed", Turn(text="x", fail_always="overflow"), after_user=RESUME_PROMPT
            ),
            conversation("main", Turn(text="never", fail_always=529), first_user="fix it"),
        ]
    )
    outage = Outage(scripted_model)
    pm = get_plugin_manager()
    pm.register(outage, name="test-outage")
    try:
        done = CliRunner().invoke(main, ["once", "fix it", "-w", str(workspace)])
    finally:
        pm.unregister(outage)

    out = done.output
    assert done.exit_code == 0, out
    lines = out.splitlines()
    flat = " ".join(out.split())  # lines are wrapped at 100 columns off a terminal
    retry = r"~ attempt 1/6 failed \(transient\): API Error: 529 .* - retrying in \d\.\ds \(same"
    assert re.search(retry + r" session\)", flat), out
    port = scripted_model.port
    assert any(line.startswith(f"! offline: 127.0.0.1:{port} unreachable for") for line in lines)
    assert "~ context full (" in out and "writing the handoff..." in out
    assert "* a mechanical handoff is written; continuing in a new session" in lines
    assert "~ new session after 1 handoff" in lines
    assert "finished" in lines and any(line.startswith("* once done - ") for line in lines)
    order = [out.index(s) for s in ("~ attempt 1/6", "! offline", "~ context full", "finished")]
    assert order == sorted(order)


THREE_TURNS = [
    bash("echo one > one.txt", usage=SMALL),
    bash("echo two > two.txt", usage={**SMALL, "output_tokens": 200_000}),  # costs dollars
    text("done", usage=SMALL),
]


def test_model_instructions_plan_mode_and_max_turns_reach_the_cli(
    scripted_model: ScriptedModel, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play([conversation("main", *THREE_TURNS, first_user="look")])
    args = ["look", "-w", str(workspace), "--model", "claude-xyz-9", "-i", "RULE-QQ"]
    done = run_once([*args, "-p", "plan", "--max-turns", "1"], env, tmp_path)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "Reached maximum number of turns (1)" in done.stdout  # --max-turns
    (req,) = scripted_model.requests_for("main")
    assert req.body["model"] == "claude-xyz-9"  # --model
    assert "RULE-QQ" in req.system_text  # -i
    assert "Plan mode is active" in req.text()  # -p plan
    assert not (workspace / "one.txt").exists()  # plan mode: the one turn's Bash never ran


def test_tools_and_budget_reach_the_cli_and_resume_without_words_continues(
    scripted_model: ScriptedModel, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [
            conversation("continued", text("carried on", usage=SMALL), after_user=CONTINUE),
            conversation("main", *THREE_TURNS, first_user="work"),
        ]
    )
    first = run_once(["work", "-w", str(workspace), "-t", "Read,Glob", "-b", "1"], env, tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "Reached maximum budget ($1)" in first.stdout  # -b: stopped after the costly reply
    assert [q.turn for q in scripted_model.requests_for("main")] == [0, 1]
    refused = scripted_model.requests_for("main")[1].tool_results()["toolu_main_0_0"]
    assert "No such tool available: Bash" in refused  # -t: Bash is not among the tools
    assert not (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()

    sid = session_of(first.stdout)
    again = run_once(["--resume", sid, "-w", str(workspace)], env, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "carried on" in again.stdout and session_of(again.stdout) == sid
    (resumed,) = scripted_model.requests_for("continued")
    assert "work" in resumed.text() and CONTINUE in resumed.text()


def test_version_prints_the_package_version(env: dict[str, str], tmp_path: Path) -> None:
    done = subprocess.run(
        [FLOWER, "--version"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"flower {flower.__version__}"
