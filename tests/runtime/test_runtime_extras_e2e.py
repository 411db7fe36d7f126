"""The Runtime's extras with the real SDK, the real bundled CLI and the scripted model:
rescue on a real signal, an interrupt from another thread, context_of after a run, and a
worker writing into a workbench outside the workspace."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import project_key_for_directory

from flower.kernel.events import Event
from flower.kernel.result import KILLED
from flower.roles.agent import AgentSpec
from flower.roles.factory import coordinator, worker
from flower.runtime.runner import Runtime
from flower.stores.prune import INTERRUPTED_NOTE
from flower.testing import ScriptedModel, bash, conversation, text, tool

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "build the thing"
SLOW = "echo started && sleep 15"  # not a bare sleep: the CLI refuses those


def spec() -> AgentSpec:
    return AgentSpec(name="worker", instructions="Be terse.", allowed_tools=["Bash"])


CHILD = textwrap.dedent(
    """
    import anyio, sys
    from flower.roles.agent import AgentSpec
    from flower.runtime.runner import Runtime

    rt = Runtime(workspace=sys.argv[1], run_dir=sys.argv[2])
    spec = AgentSpec(name="w", instructions="", allowed_tools=["Bash"])

    def on_event(event):
        if event.kind == "session":
            print("SID", event.payload["session_id"], flush=True)
        if event.kind == "tool":
            print("TOOL", flush=True)

    async def main():
        await rt.run(spec, "build the thing", step_name="干活", on_event=on_event)

    if sys.argv[3] == "rescue":
        grace = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
        with rt.rescue_on_signals(grace=grace):
            anyio.run(main)
    else:
        anyio.run(main)
    """
)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


# SIGHUP takes the same path as SIGTERM through the real CLI; that it is caught, unwound,
# re-sent and honoured when ignored is tested without a CLI in test_runtime_extras.py.
@pytest.mark.parametrize(("mode", "signame"), [("rescue", "SIGTERM"), ("plain", "SIGTERM")])
def test_a_signal_mid_step_leaves_a_killed_row_only_with_the_rescue(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    mode: str,
    signame: str,
) -> None:
    scripted_model.play([conversation("main", bash(SLOW), text("never"))])
    run_dir = tmp_path / "runs"
    env = {**os.environ, **{k: v for k, v in claude_env.items() if v}}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(workspace), str(run_dir), mode],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    signum = getattr(signal, signame)
    try:
        assert child.stdout is not None
        sid = child.stdout.readline().split()[1]
        assert child.stdout.readline().strip() == "TOOL"
        time.sleep(0.5)  # the Bash call is running
        sent = time.monotonic()
        child.send_signal(signum)
        code = child.wait(timeout=60)
        took = time.monotonic() - sent
        # the CLI and its command (in the sandbox: bubblewrap and its own init too) are
        # killed as the process goes; their teardown takes a moment under load
        cli_left = not gone_within(child.pid, 5)
    finally:
        if group_alive(child.pid):
            os.killpg(child.pid, signal.SIGKILL)

    manifest = run_dir / "manifest.json"
    if mode == "plain":  # what the rescue is for: Python dies, the row never lands
        assert code == -signum and not manifest.exists()
        return
    assert code == 128 + signum and took < 20
    assert not cli_left, "the CLI subprocess outlived the rescued process"
    (row,) = json.loads(manifest.read_text())
    assert (row["step"], row["session_id"], row["ok"], row["error"]) == ("干活", sid, False, KILLED)
    assert row["errors"] == [KILLED] and row["ended_at"] >= row["started_at"] > 0
    assert row["context"] > 0  # the level the model had reported before the signal


def gone_within(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.parametrize(("how", "grace"), [("second-signal", 10.0), ("watchdog", 1.0)])
def test_leaving_by_os_exit_still_stops_the_cli(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    how: str,
    grace: float,
) -> None:
    # os._exit skips atexit and the SDK's reaper with it, while the SDK's close is still
    # waiting for the CLI to leave on its own: the CLI, mid-Bash, must not be orphaned.
    scripted_model.play([conversation("main", bash(SLOW), text("never"))])
    run_dir = tmp_path / "runs"
    env = {**os.environ, **{k: v for k, v in claude_env.items() if v}}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(workspace), str(run_dir), "rescue", str(grace)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        sid = child.stdout.readline().split()[1]
        assert child.stdout.readline().strip() == "TOOL"
        time.sleep(0.5)  # the Bash call is running
        sent = time.monotonic()
        child.send_signal(signal.SIGTERM)
        if how == "second-signal":
            time.sleep(0.3)
            child.send_signal(signal.SIGTERM)
        code = child.wait(timeout=60)
        took = time.monotonic() - sent
        stopped = gone_within(child.pid, 20.0)  # the CLI stops its Bash call; slow under load
    finally:
        if group_alive(child.pid):
            os.killpg(child.pid, signal.SIGKILL)
    # left by os._exit, not by unwinding; the CLI is stopped at the first signal now, so
    # the unwinding can be over before the second one lands: Python's finalization has
    # restored the default action then, and the process ends by it (-15)
    leaving = {128 + signal.SIGTERM}
    if how == "second-signal":
        leaving.add(-signal.SIGTERM)
    assert code in leaving and took < 4
    assert stopped, "the CLI subprocess outlived the process that os._exit ended"
    (row,) = json.loads((run_dir / "manifest.json").read_text())
    assert (row["session_id"], row["error"]) == (sid, KILLED)


async def test_an_interrupt_from_another_thread_resumes_with_the_humans_line(
    scripted_model: ScriptedModel, claude_env: dict[str, str], make_runtime: Callable[..., Runtime]
) -> None:
    said = "also write a README please"
    scripted_model.play(
        [
            conversation("after", text("noted"), after_user=said),
            conversation("main", bash(SLOW), first_user=TASK),
        ]
    )
    rt = make_runtime()
    running = threading.Event()
    outcome: dict[str, Any] = {}

    def on_event(event: Event) -> None:
        if event.kind == "tool":
            running.set()

    def human() -> None:  # a UI's input thread: never the event loop's
        if running.wait(timeout=60):
            outcome["returned"] = rt.interrupt(said)
            outcome["thread"] = threading.get_ident()

    ui = threading.Thread(target=human)
    ui.start()
    started = time.monotonic()
    try:
        r = await rt.run(spec(), TASK, on_event=on_event)
    finally:
        ui.join(timeout=60)

    assert outcome["returned"] is True and outcome["thread"] != threading.get_ident()
    assert r.ok and r.text == "noted", r.errors
    assert time.monotonic() - started < 15, "the running Bash was not interrupted"
    assert r.attempts == 1 and r.errors == [Runtime.INTERRUPTED]
    (last,) = scripted_model.requests_for("after")
    assert last.tool_results() == {"toolu_main_0_0": INTERRUPTED_NOTE}
    assert said + Runtime.INTERRUPT_NOTE in last.text()

    late: list[bool] = []
    t = threading.Thread(target=lambda: late.append(rt.interrupt("nobody is running")))
    t.start()
    t.join()
    assert late == [False]


async def test_context_of_total_cost_and_the_paths_after_two_steps(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    cached = {"input_tokens": 300, "cache_read_input_tokens": 40}
    scripted_model.play(
        [
            conversation("one", bash("echo hi", usage={"input_tokens": 500}),
                         text("done", usage={"input_tokens": 700}), first_user="one"),
            conversation("two", text("also", usage=cached), first_user="two"),
        ]
    )  # fmt: skip
    run_dir = tmp_path / "runs"
    with Runtime(workspace=workspace, run_dir=run_dir) as rt:
        assert rt.total_cost() == 0.0
        first = await rt.run(spec(), "one")
        second = await rt.run(spec(), "two")
        assert first.ok and second.ok
        assert rt.context_of(first.session_id) == 700 == first.context
        assert rt.context_of(second.session_id) == 340 == second.context
        assert rt.context_of("no-such-session") == 0 and rt.context_of(None) == 0
        assert rt.total_cost() == pytest.approx(first.cost_usd + second.cost_usd)
        assert first.cost_usd > 0 and second.cost_usd > 0
        assert rt.manifest_path == run_dir / "manifest.json" and rt.manifest_path.is_file()
        assert rt.project_key == project_key_for_directory(str(workspace))
    with Runtime(workspace=workspace, run_dir=run_dir) as later:  # the wake-up line's case
        assert later.context_of(first.session_id) == 700 and later.total_cost() == 0.0


async def test_a_worker_writes_into_a_workbench_outside_the_workspace(
    scripted_model: ScriptedModel, claude_env: dict[str, str], make_runtime: Callable[..., Runtime]
) -> None:
    rt = make_runtime(workbench=True)
    assert rt.workbench is not None and rt.workbench.external
    target = rt.workbench.notes / "发现.md"
    dispatch = {"description": "record", "prompt": "write the note",
                "subagent_type": "coder", "run_in_background": False}  # fmt: skip
    scripted_model.play(
        [
            conversation("coder", tool("Write", {"file_path": str(target), "content": "结论\n"}),
                         text("written"), subagent=True),
            conversation("coordinator", tool("Agent", dispatch), text("all done"), subagent=False),
        ]
    )  # fmt: skip
    lead = coordinator("协调者", "", workers={"coder": worker("writes notes", "write it")})
    assert lead.permission_mode == "acceptEdits" and "Write" not in lead.allowed_tools
    r = await rt.run(lead, TASK)

    assert r.ok, r.errors
    (sub,) = [q for q in scripted_model.requests_for("coder") if q.tool_results()]
    assert "haven't granted" not in sub.text(), sub.tool_results()
    assert target.read_text(encoding="utf-8") == "结论\n"
