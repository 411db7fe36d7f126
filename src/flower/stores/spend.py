"""What each run spent and the cap it was given, in the store every machine shares.

A run budget (``runtime/budget.py``) is only as good as its count: the spend of a process
that died, of yesterday's wake, of another machine continuing the same run, all have to
be in it. So every model session that cost something is one row here (``spend``: run id,
step, session, cost), appended by whichever process ran it, and the run's total is their
sum, read again before every session. Appending rows rather than updating one counter
keeps two writers (the run and a side question, two machines) from losing each other's
costs, and leaves a record of where the money went.

The cap is one row per run (``budgets``), replaced when a human gives another: a wake
without ``--budget`` keeps it, ``--budget none`` clears it (``NULL``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from flower.stores.engine import WRITE
from flower.stores.schema import budgets, spend

__all__ = ["budget_of", "budgets_by_run", "record_spend", "set_cap"]


def _run_id(run_id: Any) -> str:
    run = str(run_id or "")
    if not 0 < len(run) <= 64:
        raise ValueError(f"a run id is 1 to 64 characters, not {run!r}")
    return run


def record_spend(engine: Engine, row: Mapping[str, Any]) -> None:
    """Add what one session cost to run ``row["run_id"]``'s spend.

    :raise ValueError: ``run_id`` is empty or too long, or ``cost_usd`` is not a finite
        number of 0 or more (a cost the CLI could not price is not a refund).
    """
    cost = float(row.get("cost_usd") or 0.0)
    if not math.isfinite(cost) or cost < 0:
        raise ValueError(f"a session's cost is a finite amount of 0 or more, not {cost!r}")
    session_id = row.get("session_id")
    values = {
        "run_id": _run_id(row.get("run_id")),
        "step": str(row.get("step") or "")[:255],
        "session_id": str(session_id)[:128] if session_id else None,
        "cost_usd": cost,
        "host": str(row.get("host") or "")[:255],
        "at": float(row.get("at") or time.time()),
    }
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(spend.insert().values(**values))


def set_cap(engine: Engine, run_id: str, cap: float | None, host: str) -> None:
    """Make ``cap`` (USD; ``None``: no cap) run ``run_id``'s budget; the newest wins.

    :raise ValueError: a bad run id, or a cap that is not a finite amount above 0.
    """
    if cap is not None and (not math.isfinite(cap) or cap <= 0):
        raise ValueError(f"a budget is a finite amount above 0, not {cap!r}")
    run = _run_id(run_id)
    values = {"cap_usd": cap, "host": host[:255], "updated_at": time.time()}
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        updated = conn.execute(budgets.update().where(budgets.c.run_id == run).values(**values))
        if not updated.rowcount:
            conn.execute(budgets.insert().values(run_id=run, **values))


def budget_of(engine: Engine, run_id: str) -> dict[str, Any]:
    """Run ``run_id``'s budget: ``cap`` (USD, ``None`` for none), ``spent`` (USD, every
    session of every process so far) and ``sessions`` (how many rows that is), read in
    one transaction so the two agree."""
    total = sa.select(sa.func.coalesce(sa.func.sum(spend.c.cost_usd), 0.0), sa.func.count())
    with engine.connect() as conn, conn.begin():
        spent, sessions = conn.execute(total.where(spend.c.run_id == run_id)).one()
        cap = conn.execute(sa.select(budgets.c.cap_usd).where(budgets.c.run_id == run_id)).first()
    return {
        "cap": float(cap[0]) if cap is not None and cap[0] is not None else None,
        "spent": round(float(spent), 9),
        "sessions": int(sessions),
    }


def budgets_by_run(engine: Engine) -> dict[str, dict[str, Any]]:
    """Every run that spent something or has a cap: run id -> :func:`budget_of`'s dict."""
    found: dict[str, dict[str, Any]] = {}
    totals = sa.select(spend.c.run_id, sa.func.sum(spend.c.cost_usd), sa.func.count())
    with engine.connect() as conn, conn.begin():
        for run, spent, sessions in conn.execute(totals.group_by(spend.c.run_id)):
            found[run] = {"cap": None, "spent": round(float(spent), 9), "sessions": int(sessions)}
        for run, cap in conn.execute(sa.select(budgets.c.run_id, budgets.c.cap_usd)):
            entry = found.setdefault(run, {"cap": None, "spent": 0.0, "sessions": 0})
            entry["cap"] = float(cap) if cap is not None else None
    return found
