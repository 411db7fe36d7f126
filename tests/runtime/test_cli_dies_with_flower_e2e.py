"""A CLI never goes on without its flower (found by the chaos harness, benchmarks/chaos).

A ``flower`` process that ends, by SIGTERM or by SIGKILL, must take its Claude Code CLI
with it at once. A CLI left running finishes its turn on its own: its commands run, its
requests reach the model, and none of it reaches the session store (the flower that
mirrored it is gone), while the job's retry resumes the same session in a new flower:
two processes driving one session, and a resumed model that never hears of the calls.
Real SDK, real bundled CLI, the scripted model; the flower is a child process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from flower.testing import ScriptedModel, bash, conversation, text, tool

pytestmark = [pytest.mark.e2e]

#: The Bash call the signal lands in; what the CLI does after it is the question.
SLOW = "echo started && sleep 1.5"
AFTER = "echo after >> after.txt"
#: Or a tool of flower's own that waits (an SDK MCP tool, as the human's ``ask`` is): the
#: flower's unwinding ends that call, and a CLI only sent SIGTERM heard it end
#: "interrupted" and asked the model once more (the web page's squatting test saw it).
HOLD = tool("mcp__wait__hold", {})

CHILD = textwrap.dedent(
    """
    import anyio, sys
    from flower.roles.agent import AgentSpec
    from flower.runtime.runner import Runtime

    from claude_agent_sdk import create_sdk_mcp_server, tool

    rt = Runtime(workspace=sys.argv[1], run_dir=sys.argv[2])

    @tool("hold", "waits, as a question to the human waits", {})
    async def hold(args):
        await anyio.sleep_forever()

    servers = {"wait": create_sdk_mcp_server("wait", tools=[hold])}
    spec = AgentSpec(
        name="w", instructions="", allowed_tools=["Bash", "mcp__wait__hold"], mcp_servers=servers
    )
    if sys.argv[3:] == ["slow-store"]:  # a loaded machine, a remote Postgres: 0.5 s a write
        plain = type(rt.store).append

        async def slow(self, key, entries):
            await anyio.sleep(0.5)
            await plain(self, key, entries)

        type(rt.store).append = slow

    def on_event(event):
        if event.kind == "tool":
            print("TOOL", flush=True)

    async def main():
        await rt.run(spec, "build the thing", step_name="work", on_event=on_event)

    with rt.rescue_on_signals(grace=10.0):
        anyio.run(main)
    """
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.parametrize(
    ("signame", "waiting_in"),
    [("SIGTERM", "bash"), ("SIGKILL", "bash"), ("SIGTERM", "flower's tool")],
)
def test_the_cli_ends_with_its_flower(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    signame: str,
    waiting_in: str,
) -> None:
    first = bash(SLOW) if waiting_in == "bash" else HOLD
    scripted_model.play([conversation("main", first, bash(AFTER), text("done"))])
    env = {**os.environ, **{k: v for k, v in claude_env.items() if v}}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(workspace), str(tmp_path / "runs")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    clis: list[int] = []
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "TOOL"
        clis = _children(child.pid)
        assert clis, "no CLI under the flower"
        time.sleep(0.3)  # the call is running
        signalled = time.time()
        child.send_signal(getattr(signal, signame))
        child.wait(timeout=30)
        time.sleep(2.5)  # past the end of the Bash call: an orphan CLI would go on
        deadline = time.monotonic() + 10  # the CLI's own way out may take a moment
        while (left := [pid for pid in clis if _alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        for pid in clis:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if child.poll() is None:
            child.kill()
    late = [r for r in scripted_model.requests if r.at > signalled and "count_tokens" not in r.path]
    assert not left, f"the CLI outlived its flower ({signame})"
    assert not late, f"the CLI sent {len(late)} requests after its flower got {signame}"
    assert not (workspace / "after.txt").exists()


MARK = "echo ran >> marker.txt && sleep 1.5"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
def test_a_call_is_in_the_store_before_it_runs(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """The flower is killed the moment its command has run: the call must already be in
    the store (else the resumed session never hears of it and runs it again). The store
    takes half a second a write here, so the line is still on its way when the CLI would
    start the command on its own."""
    import sqlite3

    scripted_model.play([conversation("main", bash(MARK), text("done"))])
    env = {**os.environ, **{k: v for k, v in claude_env.items() if v}}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(workspace), str(tmp_path / "runs"), "slow-store"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        start_new_session=True,
    )  # fmt: skip
    marker = workspace / "marker.txt"
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.002)
        child.kill()
        child.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
    assert marker.exists(), "the command never ran"
    with sqlite3.connect(tmp_path / "runs" / "sessions.db") as db:
        (stored,) = db.execute(
            "SELECT count(*) FROM entries WHERE entry LIKE ?", ("%toolu_main_0_0%",)
        ).fetchone()
    assert stored == 1, "the command ran and the store never heard of the call"
