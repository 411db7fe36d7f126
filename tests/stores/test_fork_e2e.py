"""A fork of a big session: it runs, and it stores the original history, not the view.

Real SDK, real bundled CLI, the scripted model, through the Runtime and its pruning store.
The session is over 2 MB (four large Writes: the content is in the call and again in the
tool's result), its view is reshaped on load (a retry storm's error dropped, stale ``ls``
results expired, a large result spilled to a file), and ``fork=True`` copies it. Before
``max_buffer_size`` was set, the fork died in the SDK ("JSON message exceeded maximum
buffer size of 1048576 bytes": the CLI mirrors the whole copied transcript as one line);
before the store recognised the copy, the fork's rows were the policies' view.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flower.roles.agent import AgentSpec
from flower.runtime.resilience import Resilience
from flower.runtime.runner import Runtime
from flower.stores.trim import EphemeralPolicy, TrimPolicy
from flower.testing import ScriptedModel, Turn, bash, conversation, text, tool

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "build the big thing"
REVIEW = "review what was built"
SMALL = {"input_tokens": 500}
BIG = ("x" * 299 + "\n") * 1000  # 300 kB per Write
EXPIRED = "的结果已过期"
POINTER = "已移出上下文"  # trimming's pointer and masking's line alike


def spec() -> AgentSpec:
    return AgentSpec(name="builder", instructions="Be terse.", allowed_tools=["Write", "Bash"])


def build(workspace: Path) -> list[Turn]:
    turns = [bash("seq 1 2000", usage=SMALL)]  # large and old: spilled on load
    turns += [
        tool("Write", {"file_path": str(workspace / f"big{n}.txt"), "content": BIG}, usage=SMALL)
        for n in range(4)
    ]
    turns += [bash("ls", usage=SMALL) for _ in range(4)]  # one-off looks: the old ones expire
    turns.append(Turn(text="done", usage=SMALL, faults=(529,)))  # a storm: one error line
    return turns


async def rows(rt: Runtime, sid: str) -> list[dict[str, Any]]:
    stored = await rt.store.stored({"project_key": rt.project_key, "session_id": sid})  # type: ignore[attr-defined]
    return list(stored or [])


async def test_a_fork_of_a_big_session_runs_and_stores_the_original_history(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    make_runtime: Callable[..., Runtime],
) -> None:
    scripted_model.play(
        [
            conversation("fork", text("reviewed", usage=SMALL), after_user=REVIEW),
            conversation("main", *build(workspace), first_user=TASK),
        ]
    )
    rt = make_runtime(
        trim=TrimPolicy(keep_recent=2),
        ephemeral=EphemeralPolicy(keep_recent=1),
        resilience=Resilience(base_delay=0.05, max_delay=0.2, probe_interval=0.1),
    )
    built = await rt.run(spec(), TASK)
    assert built.ok and built.text == "done" and built.attempts == 2, built.errors
    assert built.session_id
    original = await rows(rt, built.session_id)
    assert len(json.dumps(original)) > 2_000_000
    storm = [e for e in original if e.get("isApiErrorMessage")]
    assert storm, "the retry storm left no error line"

    # the fork comes an hour later: the prompt cache is cold, so every policy applies at
    # once (on a warm cache expiry waits for masking's boundary: test_mask.py)
    rt.store.now = lambda: time.time() + 3600  # type: ignore[attr-defined]
    fork = await rt.run(spec(), REVIEW, resume=built.session_id, fork=True)

    assert fork.ok and fork.text == "reviewed", fork.errors
    assert fork.session_id and fork.session_id != built.session_id
    (seen,) = scripted_model.requests_for("fork")  # the view the fork's model was fed
    assert EXPIRED in seen.text() and POINTER in seen.text()
    assert "API Error" not in seen.text()

    copied = await rows(rt, fork.session_id)
    body = json.dumps(copied, ensure_ascii=False)
    assert EXPIRED not in body and POINTER not in body  # no view stored as rows
    assert not any(e.get("flowerHealed") for e in copied)
    by_uuid = {e["uuid"]: e for e in copied if isinstance(e.get("uuid"), str)}
    history = [e for e in original if isinstance(e.get("uuid"), str)]
    for line in history:  # every line of the original, as stored, with its links
        mine = by_uuid.get(line["uuid"])
        assert mine is not None, f"{line.get('type')} {line['uuid']} is missing from the fork"
        assert mine.get("message") == line.get("message")
        assert mine.get("parentUuid") == line.get("parentUuid")
        assert mine.get("sessionId") == fork.session_id
    assert all(by_uuid[e["uuid"]].get("isApiErrorMessage") for e in storm)  # put back
    order = [e["uuid"] for e in copied if e.get("uuid") in {h["uuid"] for h in history}]
    assert order == [h["uuid"] for h in history]  # in the original's order
    parents = {e.get("parentUuid") for e in copied} - {None}
    assert parents <= set(by_uuid), "the fork's chain points at lines it does not have"
    assert await rows(rt, built.session_id) == original  # the source is untouched

    # and the fork's next resume is shaped by the policies again, from its original rows
    view = await rt.store.load({"project_key": rt.project_key, "session_id": fork.session_id})
    assert view is not None and EXPIRED in json.dumps(view, ensure_ascii=False)
