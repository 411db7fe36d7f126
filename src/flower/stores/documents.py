"""Each run's frozen documents in the store, with their hash.

The brief and the goal are files in the workbench, and a file is only as safe as the
folder it is in: any process of the machine's user can change it between two flowers.
So when flower freezes one it also keeps the text here, keyed by run id and file name,
with its SHA-256; the next load compares the file with this copy
(:mod:`flower.records.frozen_copy`) and puts the frozen text back when they differ.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from flower.stores.engine import WRITE
from flower.stores.schema import documents

__all__ = ["digest", "load_document", "save_document"]


def digest(text: str) -> str:
    """The SHA-256 a document is kept under (of its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def save_document(engine: Engine, run_id: str, name: str, text: str, host: str) -> str:
    """Keep ``text`` as run ``run_id``'s frozen ``name``; the newest write wins. Returns
    its hash."""
    if not run_id or len(run_id) > 64:
        raise ValueError(f"a document needs a run id of 1 to 64 characters, not {run_id!r}")
    values = {"sha256": digest(text), "text": text, "host": host[:255], "updated_at": time.time()}
    where = (documents.c.run_id == run_id) & (documents.c.name == name)
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        if not conn.execute(documents.update().where(where).values(**values)).rowcount:
            conn.execute(documents.insert().values(run_id=run_id, name=name, **values))
    return str(values["sha256"])


def load_document(engine: Engine, run_id: str, name: str) -> dict[str, Any] | None:
    """Run ``run_id``'s frozen ``name`` (``text``, ``sha256``, ``updated_at``), or ``None``."""
    query = sa.select(documents.c.text, documents.c.sha256, documents.c.updated_at).where(
        (documents.c.run_id == run_id) & (documents.c.name == name)
    )
    with engine.connect() as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    return {"text": row[0], "sha256": row[1], "updated_at": row[2]}
