"""``Runtime.run`` paths no other test reached: giving up offline, resilience off, trimming
and denials on resume, fork at an earlier message, an ``on_session`` that raises.

Each runs the real SDK and the bundled CLI against the scripted model, through
``Runtime.run`` itself (the store's own behaviour is tested in ``tests/stores``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk.types import SessionKey

from flower.kernel.events import Event
from flower.roles.agent import AgentSpec
from flower.runtime.resilience import Resilience
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, ToolCall, Turn, conversation, text

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "build the thing"
SMALL = {"input_tokens": 500}
#: Where a spilled result went: trimming's pointer, or masking's one line.
POINTER = re.compile(r"(?:原文完整保存在|原文在) (\S+?)(?: |\]$)")


def fast(**kw: Any) -> Resilience:
    """Resilience with waits short enough for a test."""
    return Resilience(
        **{"base_delay": 0.05, "max_delay": 0.2, "probe_interval": 0.1, "probe_timeout": 0.5, **kw}
    )


def spec(tools: list[str] | None = None) -> AgentSpec:
    return AgentSpec(name="worker", instructions="Be terse.", allowed_tools=tools or ["Bash"])


class Events(list[Event]):
    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e.payload for e in self if e.kind == kind]


async def test_an_endpoint_that_stays_down_ends_the_step_after_max_offline_wait(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # The model fails; before flower's retry the endpoint goes away for good. The wait
    # for the network must give up after max_offline_wait and end the step there.
    scripted_model.play([conversation("main", Turn(text="never", fail_always=529))])
    policy = fast(max_offline_wait=0.3, max_attempts=3)
    rt = Runtime(workspace=workspace, run_dir=tmp_path / "runs", resilience=policy)
    events = Events()

    def on_event(event: Event) -> None:
        events.append(event)
        if event.kind == "retry":
            scripted_model.stop()  # connections refused from now on

    with rt:
        r = await rt.run(spec(), TASK, on_event=on_event)

    host = f"127.0.0.1:{scripted_model.port}"
    assert not r.ok and r.attempts == 1, r.errors
    assert r.error is not None and r.error.startswith(f"{host} stayed unreachable for 0s")
    assert "gave up after:" in r.error and "529" in r.error
    assert len(events.of("retry")) == 1 and events.of("offline")
    assert {p["max_wait"] for p in events.of("offline")} == {0.3}
    assert len(scripted_model.requests_for("main")) == 1
    assert events.of("result")[-1]["error"] == r.error


async def test_resilience_off_never_retries(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # One 529, then the reply: any retry at all would succeed.
    scripted_model.play([conversation("main", Turn(text="recovered", faults=(529,)))])
    rt = Runtime(workspace=workspace, run_dir=tmp_path / "runs", resilience=False)
    events = Events()
    with rt:
        r = await rt.run(spec(), TASK, on_event=events.append)
    assert not r.ok and r.attempts == 1 and not r.resumed
    assert r.error is not None and "529" in r.error
    assert not events.of("retry") and not events.of("offline")
    assert [q.outcome for q in scripted_model.requests_for("main")] == ["529"]


async def test_trim_and_keep_denials_shape_the_resumed_request(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # A large Read, then one reply with a Bash the whitelist refuses and 20 small Globs,
    # so the Read is older than the 20 results TrimPolicy keeps by default.
    big = workspace / "big.txt"
    big.write_text("".join(f"line {n} of the big file\n" for n in range(1, 1500)))
    calls = [ToolCall("Bash", {"command": "echo hi"})]
    calls += [ToolCall("Glob", {"pattern": f"*{n}*.txt"}) for n in range(20)]
    scripted_model.play(
        [
            conversation("later", text("carried on", usage=SMALL), after_user="next part"),
            conversation(
                "main", Turn(tools=(ToolCall("Read", {"file_path": str(big)}),), usage=SMALL),
                Turn(tools=tuple(calls), usage=SMALL), text("looked", usage=SMALL),
                first_user=TASK,
            ),
        ]
    )  # fmt: skip
    read_id, bash_id = "toolu_main_0_0", "toolu_main_1_0"
    rt = Runtime(workspace=workspace, run_dir=tmp_path / "runs", trim=True, keep_denials=0)
    with rt:
        first = await rt.run(spec(["Read", "Glob"]), TASK)
        assert first.ok, first.errors
        second = await rt.run(spec(["Read", "Glob"]), "next part", resume=first.session_id)
    assert second.ok and second.session_id == first.session_id, second.errors

    (live,) = [q for q in scripted_model.requests_for("main") if q.turn == 2]
    before = live.tool_results()
    assert len(before) == 22 and "No such tool available: Bash" in before[bash_id]
    assert "line 1499 of the big file" in before[read_id]

    (resumed,) = scripted_model.requests_for("later")
    after = resumed.tool_results()
    assert bash_id not in after and bash_id not in resumed.text()  # keep_denials=0
    assert "echo hi" not in str(resumed.body)
    pointer = POINTER.search(after[read_id])  # trim=True: the large old result is a pointer
    assert pointer, after[read_id][:200]
    spilled = Path(pointer.group(1))
    assert spilled.is_relative_to(workspace.resolve() / ".flower" / "spill")
    assert spilled.read_text(encoding="utf-8") == before[read_id]
    assert "line 1499 of the big file" not in resumed.text()
    assert len(after) == 21 and TASK in resumed.text()


async def test_fork_at_an_earlier_message_continues_a_copy_from_there(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [
            conversation("fork", text("after the fork", usage=SMALL), after_user="prompt-gamma"),
            conversation(
                "main",
                Turn(text="first: tulip", tools=(ToolCall("Bash", {"command": "echo tulip"}),)),
                text("second: rose", usage=SMALL),
                first_user="prompt-alpha",
            ),
        ]
    )
    rt = Runtime(workspace=workspace, run_dir=tmp_path / "runs", resilience=fast())
    with rt:
        first = await rt.run(spec(), "prompt-alpha")
        assert first.ok and first.text == "second: rose", first.errors
        sid = first.session_id
        assert sid is not None
        key: SessionKey = {"project_key": rt.project_key, "session_id": sid}
        entries = await rt.store.load(key)
        assert entries is not None
        # the last entry of the turn kept: the tool's result, before "second: rose"
        (at,) = [
            e["uuid"]
            for e in entries
            if e.get("type") == "user" and "tool_result" in str(e.get("message"))
        ]
        copy = await rt.run(spec(), "prompt-gamma", resume=sid, fork=True, resume_at=at)
        kept = await rt.store.load(key)

    assert copy.ok and copy.text == "after the fork", copy.errors
    assert copy.session_id and copy.session_id != sid  # a copy, not the original
    (forked,) = scripted_model.requests_for("fork")
    assert "prompt-alpha" in forked.text() and "first: tulip" in forked.text()
    assert "tulip" in "".join(forked.tool_results().values())
    assert "second: rose" not in forked.text()  # cut at resume_at
    assert kept is not None and "prompt-gamma" not in str(kept)  # the original is untouched


async def test_an_on_session_callback_that_raises_does_not_end_the_step(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    scripted_model.play([conversation("main", text("done", usage=SMALL))])
    seen: list[str] = []

    def broken(sid: str) -> None:
        seen.append(sid)
        raise OSError("the lineage disk is full")

    rt = Runtime(workspace=workspace, run_dir=tmp_path / "runs", resilience=fast())
    rt.on_session = broken
    with rt:
        r = await rt.run(spec(), TASK)
    assert r.ok and r.text == "done" and r.attempts == 1 and r.errors == [], r.errors
    assert seen == [r.session_id]
    assert "on_session failed" in capfd.readouterr().err
    assert len(scripted_model.requests_for("main")) == 1
