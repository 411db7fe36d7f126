"""examples/queue runs as docs/scaling.md says: procrastinate jobs, each one `flower run`.

The queue and the session store share one fresh Postgres schema; a worker in this process
runs the deferred jobs one at a time, each a real ``flower`` process whose CLI talks to
the scripted model on loopback: three good jobs succeed, one with a target that does not
exist (flower exits 2) fails once and is not retried.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from flower.testing import ScriptedModel, conversation, text, tool

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUEUE = EXAMPLES / "queue"


@pytest.fixture
def example(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModuleType, ...]]:
    """examples/queue's ``tasks`` and ``defer``, imported with the store (and the queue,
    by default) in ``pg_url``."""
    monkeypatch.setenv("FLOWER_STORE_URL", pg_url)
    monkeypatch.delenv("FLOWER_QUEUE_URL", raising=False)
    monkeypatch.syspath_prepend(str(QUEUE))
    names = ("tasks", "defer")
    for name in names:
        sys.modules.pop(name, None)
    try:
        yield tuple(importlib.import_module(name) for name in names)
    finally:
        for name in names:
            sys.modules.pop(name, None)


async def defer_and_work(tasks: ModuleType, defer: ModuleType, root: Path) -> dict[str, Any]:
    good = [str(root / f"ws{i}") for i in range(3)]
    ids = await defer.defer(f"{EXAMPLES / 'flows.py'}:main", good)
    [bad] = await defer.defer(f"{EXAMPLES / 'flows.py'}:nothing", [str(root / "ws-bad")])
    async with tasks.app.open_async():
        await tasks.app.run_worker_async(
            wait=False, concurrency=1, listen_notify=False, install_signal_handlers=False
        )
        jobs = {job.id: job for job in await tasks.app.job_manager.list_jobs_async()}
        rows = await tasks.app.connector.execute_query_all_async(
            "SELECT DISTINCT session_id FROM entries WHERE subpath = ''"
        )
    return {"ids": ids, "bad": bad, "jobs": jobs, "sessions": {r["session_id"] for r in rows}}


def test_a_worker_runs_one_flower_per_job_on_the_shared_store(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    example: tuple[ModuleType, ...],
    tmp_path: Path,
) -> None:
    tasks, defer = example
    workspaces = [tmp_path / f"ws{i}" for i in range(3)]
    for ws in workspaces:
        ws.mkdir()
        (ws / "seed.txt").write_text("苹果\n", encoding="utf-8")
    scripted_model.play(
        [
            conversation(
                "取词",
                tool("Glob", {"pattern": "seed.txt"}),
                text("苹果"),
                first_user="读 seed.txt",
            )
        ]
    )

    got = asyncio.run(defer_and_work(tasks, defer, tmp_path))

    jobs = got["jobs"]
    assert len(jobs) == 4
    for job_id, ws in zip(got["ids"], workspaces, strict=True):
        job = jobs[job_id]
        assert (job.status, job.attempts) == ("succeeded", 1), job
        assert job.task_kwargs["workspace"] == str(ws) and job.lock == str(ws)
    bad = jobs[got["bad"]]  # flower exited 2 (no such workflow): failed, not retried
    assert (bad.status, bad.attempts) == ("failed", 1), bad

    sessions = set()
    for ws in workspaces:
        rows = json.loads((ws / "runs" / "manifest.json").read_text(encoding="utf-8"))
        assert [(row["step"], row["ok"]) for row in rows] == [("取词", True)], rows
        sessions.add(rows[0]["session_id"])
        assert not (ws / "runs" / "sessions.db").exists()  # the transcripts went to Postgres
    assert len(sessions) == 3 and sessions == got["sessions"]

    first = [r for r in scripted_model.requests_for("取词") if r.turn == 0]
    bodies = [json.dumps(r.body, ensure_ascii=False) for r in first]  # the CLI's env section
    seen = {ws for ws in workspaces for body in bodies if f"directory: {ws}\\n" in body}
    assert len(first) == 3 and seen == set(workspaces)  # one run in each workspace
