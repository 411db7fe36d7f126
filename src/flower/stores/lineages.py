"""Each run's lineage in the shared store, so a run continues on any machine.

``runs/lineage.json`` says which session each step of a run continues; it lives in the
run folder, which a ``git clone`` or a copy of the project does not always carry. Every
time flower writes that file it also puts the same document here, keyed by the run's id
(which travels in the workbench's ``run.json``). A flower that finds the id but no
lineage file takes the document from here, and the run goes on where it was, with the
sessions re-keyed to the new folder like any moved run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from flower.stores.engine import WRITE
from flower.stores.schema import KEY_LENGTH, lineages

__all__ = ["load_lineage", "save_lineage"]


def save_lineage(engine: Engine, run_id: str, host: str, data: Mapping[str, Any]) -> None:
    """Keep ``data`` (a lineage document) as run ``run_id``'s; the newest write wins."""
    if not run_id or len(run_id) > 64:
        raise ValueError(f"a lineage needs a run id of 1 to 64 characters, not {run_id!r}")
    values = {
        "workspace": str(data.get("workspace") or "")[:KEY_LENGTH],
        "host": host[:255],
        "data": json.loads(json.dumps(dict(data), default=str)),
        "updated_at": time.time(),
    }
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        updated = conn.execute(
            lineages.update().where(lineages.c.run_id == run_id).values(**values)
        )
        if not updated.rowcount:
            conn.execute(lineages.insert().values(run_id=run_id, **values))


def load_lineage(engine: Engine, run_id: str) -> dict[str, Any] | None:
    """Run ``run_id``'s lineage document, or ``None`` when the store has none."""
    query = sa.select(lineages.c.data).where(lineages.c.run_id == run_id)
    with engine.connect() as conn:
        row = conn.execute(query).first()
    return dict(row[0]) if row is not None and isinstance(row[0], dict) else None
