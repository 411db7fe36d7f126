"""A corrupt ``runs/lineage.json`` costs nothing the session store still has.

Real SDK, real bundled CLI, the scripted model, through the Workflow API. A first process
runs a step (its lineage goes to ``runs/lineage.json``, its run id to the workbench, both
to the store); the file is then cut in half, as a full disk or a crash of another tool
leaves it. The next process must continue the same run and the same session, as it does
when the file is missing, and keep the broken file aside rather than delete it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flower.kernel.events import Event
from flower.records.lineage import LINEAGE_NAME, set_aside_corrupt
from flower.records.runstate import marked_run
from flower.roles.agent import AgentSpec
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, conversation, text
from flower.workflow.base import Step, Workflow

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "write the parser"
AGAIN = "carry on with the parser"
SMALL = {"input_tokens": 500}


def flow() -> Workflow:
    spec = AgentSpec(name="worker", instructions="Be terse.", allowed_tools=["Read"])
    return Workflow([Step("干活", spec, TASK, resume_prompt=AGAIN)])


async def run(workspace: Path, run_dir: Path) -> tuple[dict[str, Any], list[Event]]:
    events: list[Event] = []
    with Runtime(workspace=workspace, run_dir=run_dir, workbench=True) as rt:
        ctx = await flow().run(rt, on_event=events.append)
    return ctx, events


async def test_a_corrupt_lineage_is_set_aside_and_the_run_continues_from_the_store(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    scripted_model.play(
        [
            conversation("again", text("parser finished", usage=SMALL), after_user=AGAIN),
            conversation("first", text("parser started", usage=SMALL), first_user=TASK),
        ]
    )
    run_dir = tmp_path / "runs"
    first, _ = await run(workspace, run_dir)
    run_id, sid = first["_lineage"].run, first["_sessions"]["干活"]
    assert run_id and sid and first["_results"]["干活"].ok
    path = run_dir / LINEAGE_NAME
    whole = path.read_bytes()
    broken = whole[: len(whole) // 2]  # cut mid-write
    path.write_bytes(broken)

    second, events = await run(workspace, run_dir)

    lineage = second["_lineage"]
    assert lineage.run == run_id, "a corrupt lineage minted a new run id"
    assert second["_sessions"]["干活"] == sid and second["_results"]["干活"].session_id == sid
    assert second["_results"]["干活"].ok and second["_results"]["干活"].text == "parser finished"
    (again,) = scripted_model.requests_for("again")
    assert TASK in again.text()  # the same conversation, resumed
    (aside,) = run_dir.glob(f"{LINEAGE_NAME}.corrupt-*")
    assert aside.read_bytes() == broken  # kept for a human, never deleted
    disk = json.loads(path.read_text(encoding="utf-8"))
    assert (disk["run"], disk["steps"], disk["woke"]) == (run_id, {"干活": sid}, 2)
    assert marked_run(run_dir / "workbench") == run_id
    (wake,) = [e.payload for e in events if e.kind == "wake"]
    assert f"set aside as {aside.name}" in wake["notice"] and run_id[:8] in wake["notice"]


def test_only_an_unreadable_file_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / LINEAGE_NAME
    assert set_aside_corrupt(path) is None  # missing
    path.write_text(json.dumps({"workspace": "/elsewhere", "steps": {}}))
    assert set_aside_corrupt(path) is None and path.exists()  # readable (even foreign)
    path.write_bytes(b"\xff{")
    aside = set_aside_corrupt(path)
    assert aside is not None and aside.read_bytes() == b"\xff{" and not path.exists()
    assert aside.name.startswith(f"{LINEAGE_NAME}.corrupt-")
