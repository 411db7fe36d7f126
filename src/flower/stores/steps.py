"""Runs as the shared store sees them: one row per finished step, any machine's.

``runs/manifest.json`` is the local record of a run and stays so; a Runtime whose run has
an id (a workflow with a lineage) also appends each finished step here, so every machine
using the same store (Postgres) can list every run: ``flower status --all``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from flower.stores.engine import WRITE
from flower.stores.schema import steps

__all__ = ["record_step", "runs"]


def record_step(
    engine: Engine, run_id: str, workspace: str, host: str, row: Mapping[str, Any]
) -> None:
    """Append one finished step of run ``run_id`` (its manifest row)."""
    values = {
        "run_id": run_id,
        "workspace": workspace,
        "host": host,
        "step": str(row.get("step") or "")[:255],
        "ok": bool(row.get("ok")),
        "cost_usd": float(row.get("cost_usd") or 0.0),
        "ended_at": float(row.get("ended_at") or 0.0),
        "row": json.loads(json.dumps(dict(row), default=str)),  # plain JSON, whatever came in
    }
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(steps.insert().values(**values))


def step_rows(engine: Engine, run_id: str) -> list[dict[str, Any]]:
    """Every manifest row the store keeps for run ``run_id``, in the order they came."""
    query = sa.select(steps.c.row).where(steps.c.run_id == run_id).order_by(steps.c.id)
    with engine.connect() as conn:
        return [dict(row) for (row,) in conn.execute(query) if isinstance(row, dict)]


def runs(engine: Engine) -> list[dict[str, Any]]:
    """Every run in the store, newest first: id, workspace and host of its latest step,
    steps (finished, ok), cost, and its latest step's name and end time."""
    query = sa.select(
        steps.c.run_id, steps.c.workspace, steps.c.host, steps.c.step, steps.c.ok,
        steps.c.cost_usd, steps.c.ended_at,
    ).order_by(steps.c.id)  # fmt: skip
    found: dict[str, dict[str, Any]] = {}
    with engine.connect() as conn:
        for run_id, workspace, host, step, ok, cost, ended in conn.execute(query):
            run = found.setdefault(run_id, {"run": run_id, "steps": 0, "ok": 0, "cost_usd": 0.0})
            run["steps"] += 1
            run["ok"] += 1 if ok else 0
            run["cost_usd"] = round(run["cost_usd"] + float(cost), 6)
            run.update(workspace=workspace, host=host, last_step=step, ended_at=ended)
    return sorted(found.values(), key=lambda run: run["ended_at"], reverse=True)
