"""``Runtime.pause``: stop the round at once, run nothing while the human thinks, then go
on in the same session with their words (or with nothing added)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from flower.kernel.events import Event
from flower.roles.agent import AgentSpec
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, bash, conversation, text

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "build the thing"


def spec() -> AgentSpec:
    return AgentSpec(name="worker", instructions="", allowed_tools=["Bash"], workbench=False)


@pytest.mark.parametrize("words", ["先停一下,改用 B 方案", ""])
async def test_a_pause_stops_the_tool_waits_and_goes_on_with_the_words(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    make_runtime: Callable[..., Runtime],
    words: str,
) -> None:
    marker = words or Runtime.CONTINUE_NOTE
    scripted_model.play(
        [
            conversation("after", text("went on"), after_user=marker),
            conversation("main", bash("sleep 3; printf late > late.txt"), first_user=TASK),
        ]
    )
    rt = make_runtime()
    running = threading.Event()
    seen: list[Event] = []

    def on_event(event: Event) -> None:
        seen.append(event)
        if event.kind == "tool":
            running.set()

    async def human() -> None:
        await anyio.to_thread.run_sync(running.wait, 60)
        await anyio.sleep(0.3)  # the command has started
        assert rt.pause()
        while not rt.paused:
            await anyio.sleep(0.05)
        asked = len(scripted_model.requests)
        await anyio.sleep(4)  # longer than the command: it must not finish, nor anything run
        assert not (workspace / "late.txt").exists()
        assert len(scripted_model.requests) == asked and rt.paused
        assert rt.interrupt(words)  # from the loop here; a UI thread works the same

    started = time.monotonic()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(human)
        r = await rt.run(spec(), TASK, on_event=on_event)

    assert r.ok and r.text == "went on", r.errors
    assert r.attempts == 1 and r.errors == [Runtime.INTERRUPTED]
    (after,) = scripted_model.requests_for("after")
    expected = words + Runtime.INTERRUPT_NOTE if words else Runtime.CONTINUE_NOTE
    assert expected in after.text()
    interrupts = [e.payload for e in seen if e.kind == "interrupt"]
    assert interrupts[0]["paused"] is True and interrupts[-1]["said"] == words
    assert not rt.paused and not rt.interrupt("nobody waits")
    assert not (workspace / "late.txt").exists()
    assert time.monotonic() - started < 30
