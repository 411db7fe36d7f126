"""A resumed session is charged what it cost this time, never the session's running total.

The CLI keeps its running totals in a ``cost-state`` transcript line and restores them
when it resumes a transcript holding one: its result's ``total_cost_usd`` is then the
whole session's cost so far. flower charges that figure to the attempt (the step's cost,
the run budget's spend rows), so the view a resume is fed must not hold the line
(``stores/prune.py``). Real CLI, scripted model: what is charged is compared with the
scripted model's own bill for the requests of that attempt.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from flower.roles.agent import AgentSpec
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, conversation, text
from flower.testing.prices import cost_of

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

#: A real-shaped ``cost-state`` line (the bundled CLI's schema), as an earlier CLI left it.
EARLIER = {
    "type": "cost-state",
    "totalCostUSD": 5.0,
    "totalAPIDuration": 81_000,
    "totalAPIDurationWithoutRetries": 80_000,
    "totalToolDuration": 2_000,
    "totalLinesAdded": 40,
    "totalLinesRemoved": 3,
    "totalDuration": 120_000,
    "startTime": 1_764_000_000_000,
    "modelUsage": {},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_resume_from_a_history_with_running_totals_is_charged_its_own_cost(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    make_runtime: Callable[..., Runtime],
    tmp_path: Path,
) -> None:
    scripted_model.play(
        [
            conversation("later", text("two", usage={"input_tokens": 20_000}), after_user="go on"),
            conversation("first", text("one", usage={"input_tokens": 50_000}), first_user="hi"),
        ]
    )
    spec = AgentSpec(name="worker", instructions="Be terse.")
    rt = make_runtime()
    first = await rt.run(spec, "hi")
    sid = first.session_id
    (project,) = await rt.store.projects_of(sid)
    key = {"project_key": project, "session_id": sid}
    await rt.store.append(key, [{**EARLIER, "sessionId": sid}])
    rt.close()

    again = make_runtime()  # another process's Runtime: the resume reads the store
    later = await again.run(spec, "go on", resume=sid)
    billed = sum(
        cost_of(r.usage, r.body.get("model")) for r in scripted_model.requests_for("later")
    )
    assert later.ok and later.session_id == sid
    assert billed > 0 and later.cost_usd == pytest.approx(billed, abs=1e-4)
    stored = await again.store.stored(key)
    assert stored is not None and any(e.get("type") == "cost-state" for e in stored)
    assert not any(e.get("type") == "cost-state" for e in (await again.store.load(key)) or [])
    assert again.total_cost() == pytest.approx(billed, abs=1e-4)
