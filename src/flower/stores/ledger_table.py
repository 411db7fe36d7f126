"""The judge ledger: every verdict on a guarded step, and every human override of one.

A judge that rules wrongly (says ``achieved`` too early, ``unreachable`` for a goal that
was within reach) is only noticed when its rulings are kept next to what the humans then
did about them. So each verdict (``kind="verdict"``: its state, reason, failed checks,
cost and the judge's session) and each override (``kind="override"``: ``accept``,
``change_goal`` or ``misjudged``, with the human's words or the new goal in ``said``) is
a row here, by run id, in the store every machine shares; so is each tool call a wall
refused (``kind="refusal"``), the attempts a verdict alone would hide, and each frozen
document flower put back after it was changed behind its back (``kind="restored"``).
``notes/判定记录.md`` in the workspace is the readable local mirror, written elsewhere;
this table is what outlives the workspace and can be counted across runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from flower.stores.engine import WRITE
from flower.stores.schema import KEY_LENGTH, ledger

__all__ = ["KINDS", "REQUIRED", "record_ruling", "rulings"]

#: The kinds of row: a judge's ruling, a human's override of one, a tool call a wall
#: refused (``state``: the tool, ``said``: the thread that asked, ``reason``: the wall's
#: words), and a frozen document put back (``state``: its file name, ``reason``: what had
#: happened to it), and a check flower ran itself (``state``: passed, failed or
#: cannot_run; ``failed``: the check; ``said``: its command; ``reason``: why, and the end of
#: its output), and a ``flower rewind`` (``kind="rewind"``: ``state`` ``#N``, the checkpoint
#: gone back to, or ``undo``; ``reason``: where to; ``said``: the human's new words).
KINDS = ("verdict", "override", "refusal", "restored", "check", "rewind")
#: Keys a row must have; the others default (reason, said ``""``, failed ``[]``,
#: cost_usd ``0.0``, session_id ``None``, at: now).
REQUIRED = ("run_id", "workspace", "host", "step", "round", "kind", "state")
#: Every column but ``id``, in table order: the keys of a row :func:`rulings` returns.
COLUMNS = tuple(c.name for c in ledger.columns if c.name != "id")


def record_ruling(engine: Engine, row: Mapping[str, Any]) -> None:
    """Append one ruling (``kind="verdict"``), override (``kind="override"``) or refused
    call (``kind="refusal"``).

    :raise KeyError: A required key (:data:`REQUIRED`) is missing.
    :raise ValueError: ``kind`` is none of :data:`KINDS`, or ``run_id`` is empty or too
        long.
    """
    missing = [key for key in REQUIRED if key not in row]
    if missing:
        raise KeyError(f"a ledger row needs {', '.join(missing)}")
    kind, run_id = str(row["kind"]), str(row["run_id"])
    if kind not in KINDS:
        raise ValueError(f"a ledger row's kind is one of {', '.join(KINDS)}, not {kind!r}")
    if not 0 < len(run_id) <= 64:
        raise ValueError(f"a ledger row's run_id must be 1 to 64 characters: {run_id!r}")
    session_id = row.get("session_id")
    values = {
        "run_id": run_id,
        "workspace": _text(row["workspace"])[:KEY_LENGTH],
        "host": _text(row["host"])[:255],
        "step": _text(row["step"])[:255],
        "round": int(row["round"]),
        "kind": kind,
        "state": _text(row["state"] or "")[:32],
        "reason": _text(row.get("reason") or ""),
        "failed": _strings(row.get("failed")),
        "cost_usd": float(row.get("cost_usd") or 0.0),
        "session_id": _text(session_id)[:128] if session_id else None,
        "said": _text(row.get("said") or ""),
        "at": float(row.get("at") or time.time()),
    }
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        conn.execute(ledger.insert().values(**values))


def rulings(engine: Engine, run_id: str | None = None) -> list[dict[str, Any]]:
    """The ledger's rows (every column but ``id``) in the order they were recorded: run
    ``run_id``'s, or every run's when it is ``None``."""
    query = sa.select(*(ledger.c[name] for name in COLUMNS)).order_by(ledger.c.id)
    if run_id is not None:
        query = query.where(ledger.c.run_id == run_id)
    with engine.connect() as conn:
        found = [dict(row._mapping) for row in conn.execute(query)]
    for row in found:
        row["failed"] = list(row["failed"] or [])
    return found


def _text(value: Any) -> str:
    """``value`` as text every backend stores: Postgres refuses NUL and half a surrogate
    pair (a judge's reason is model output, cut anywhere), so they go."""
    text = str(value).replace("\x00", "")
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def _strings(value: Any) -> list[str]:
    """The failed checks as a list of strings: one string is one check, ``None`` none."""
    if value is None:
        return []
    items: Iterable[Any] = [value] if isinstance(value, str) else value
    return [_text(item) for item in items]
