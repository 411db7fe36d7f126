"""A worker cut off mid-task survives in the resumed coordinator's prompt.

Real SDK, real bundled CLI, the scripted model. A coordinator dispatches a worker (a
foreground Agent call); the worker writes files and runs commands, then the API goes away
for longer than the CLI retries (``fail_always``, and the server down for a second so the
Runtime's probe waits). The Runtime resumes the coordinator once the network is back; its
resume prompt must say what the worker was asked, which files it changed, which commands
wrote, what its last calls returned and what it last said. A second run kills the CLI while
the worker's command runs: that call has no result anywhere, and both the report and the
coordinator's own context say it may or may not have taken effect.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition

from flower.kernel.events import Event
from flower.roles.agent import AgentSpec
from flower.runtime.cutoff_words import CLOSING, HEAD, MAX_CHARS
from flower.runtime.resilience import RESUME_PROMPT, Resilience
from flower.runtime.runner import Runtime
from flower.stores.prune import ORPHAN_NOTE, UNSURE
from flower.testing import (
    RecordedRequest,
    ScriptedModel,
    Turn,
    bash,
    conversation,
    message_text,
    text,
    tool,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "coordinate: get a.txt and b.txt written"
WORKER_TASK = "写 a.txt 和 b.txt,然后核对两个文件的内容"
LAST_WORDS = "两个文件都写好了,内容核对无误,准备汇报"
SMALL = {"input_tokens": 500}
#: Not a bare ``sleep``: the CLI refuses a command that starts with one.
SLOW = "echo started > started.txt && sleep 20"


def fast() -> Resilience:
    return Resilience(base_delay=0.05, max_delay=0.2, probe_interval=0.1, probe_timeout=0.5)


def coordinator() -> AgentSpec:
    worker = AgentDefinition(description="does the work", prompt="work", tools=["Write", "Bash"])
    return AgentSpec(
        name="coordinator",
        instructions="Dispatch the work.",
        allowed_tools=["Agent", "Read", "Write", "Bash"],
        agents={"worker": worker},
    )


def dispatch() -> Turn:
    return tool(
        "Agent",
        {
            "description": "write the files",
            "prompt": WORKER_TASK,
            "subagent_type": "worker",
            "run_in_background": False,
        },
        usage=SMALL,
    )


def last_user(request: RecordedRequest) -> str:
    users = [m for m in request.messages if m.get("role") == "user"]
    return message_text(users[-1]) if users else ""


async def worker_ids(rt: Runtime, sid: str) -> list[str]:
    subkeys = await rt.store.list_subkeys({"project_key": rt.project_key, "session_id": sid})
    return [s.removeprefix("subagents/agent-") for s in subkeys]


async def test_a_worker_cut_off_by_an_outage_is_reported_to_the_resumed_coordinator(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    make_runtime: Callable[..., Runtime],
) -> None:
    a_txt = workspace / "a.txt"
    scripted_model.play(
        [
            conversation("resumed", text("接着做完了", usage=SMALL), after_user=RESUME_PROMPT),
            conversation(
                "worker",
                tool("Write", {"file_path": str(a_txt), "content": "alpha\n"}, usage=SMALL),
                bash("echo beta > b.txt && echo wrote b", usage=SMALL),
                bash("cat a.txt b.txt", say=LAST_WORDS, usage=SMALL),
                Turn(text="never", fail_always=529),  # the outage, in the worker's turn
                subagent=True,
            ),
            conversation("main", dispatch(), Turn(text="never", fail_always=529), first_user=TASK),
        ]
    )
    rt = make_runtime(resilience=fast())
    events: list[Event] = []

    def on_event(event: Event) -> None:
        events.append(event)
        if event.kind == "retry":
            scripted_model.restart(after=1.0)  # down for a second: the probe waits

    r = await rt.run(coordinator(), TASK, on_event=on_event)

    assert r.ok and r.text == "接着做完了", r.errors
    assert r.attempts == 2 and r.resumed and r.session_id
    assert any(e.kind == "offline" for e in events), "the probe never saw the outage"
    assert a_txt.read_text() == "alpha\n" and (workspace / "b.txt").read_text() == "beta\n"
    (agent_id,) = await worker_ids(rt, r.session_id)
    (resumed,) = scripted_model.requests_for("resumed")
    told = last_user(resumed)
    report = told.removeprefix(RESUME_PROMPT)
    assert told.startswith(RESUME_PROMPT) and report.startswith("\n\n" + HEAD)
    print(told)  # the example docs/runtime.md quotes
    assert f"worker「write the files」(agent {agent_id})" in report
    assert f"交给它的任务:{WORKER_TASK}" in report
    assert f"改过的文件:{a_txt}" in report  # the Write
    assert "写过文件的命令:\n   - echo beta > b.txt && echo wrote b" in report  # a writing Bash
    assert "Bash: echo beta > b.txt && echo wrote b → wrote b" in report  # the last results
    assert "Bash: cat a.txt b.txt → alpha beta" in report
    assert f"它最后说的话:{LAST_WORDS}" in report
    assert "调用了 3 次工具" in report
    assert UNSURE not in report  # every call of this worker has its result
    assert "SendMessage" not in report  # the role cannot message a worker
    assert report.endswith(CLOSING) and len(report) < MAX_CHARS
    assert resumed.text().count(HEAD) == 1  # told once, in the resume prompt only
    assert "529" not in report and "API Error" not in report


def kill_cli_when(marker: Path, done: threading.Event) -> None:
    """SIGKILL every bundled CLI process of this test (and what it runs) once ``marker``
    exists: a crash while the worker's command is still running."""
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the call's line has been mirrored by now
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if b"claude" in cmdline:
            for child in [*descendants(pid), pid]:
                try:
                    os.kill(child, signal.SIGKILL)
                except OSError:
                    pass
    done.set()


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


async def test_a_call_running_when_the_cli_died_is_reported_as_unsure_never_as_done(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    make_runtime: Callable[..., Runtime],
) -> None:
    scripted_model.play(
        [
            conversation("resumed", text("先核实", usage=SMALL), after_user=RESUME_PROMPT),
            conversation(
                "worker",
                tool("Write", {"file_path": str(workspace / "a.txt"), "content": "a\n"}),
                bash(SLOW, usage=SMALL),
                subagent=True,
            ),
            conversation("main", dispatch(), first_user=TASK),
        ]
    )
    rt = make_runtime(resilience=fast())
    killed = threading.Event()
    started: list[Any] = []

    def on_event(event: Event) -> None:
        if event.kind == "tool" and event.payload.get("subagent") and not started:
            if event.payload.get("name") == "Bash":
                started.append(
                    threading.Thread(target=kill_cli_when, args=(workspace / "started.txt", killed))
                )
                started[0].start()

    r = await rt.run(coordinator(), TASK, on_event=on_event)

    assert killed.is_set() and r.ok and r.text == "先核实", r.errors
    assert r.attempts == 2 and r.resumed
    (resumed,) = scripted_model.requests_for("resumed")
    report = last_user(resumed).removeprefix(RESUME_PROMPT)
    assert f"中断时还没有结果的调用({UNSURE}):\n   - Bash: {SLOW}" in report
    assert f"改过的文件:{workspace / 'a.txt'}" in report
    assert "最后几步:" in report and SLOW not in report.split("中断时还没有结果")[0]
    # the coordinator's own Agent call has no result either: healed in its context
    # with the same words, and not listed twice (its worker is reported)
    assert ORPHAN_NOTE in resumed.tool_results().values()
    assert UNSURE in ORPHAN_NOTE and "【你自己被中断的调用】" not in report
