"""meta.context_tokens: the context size of each transcript's latest model reply.

The wake-up line shows how full the last round's context was ("干活上下文 80.2K");
keeping the figure per key spares reading a whole transcript to find it. Existing
rows are filled from their entries; a downgrade drops the column and keeps all data.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("meta") as batch:
        batch.add_column(sa.Column("context_tokens", sa.BigInteger, nullable=True))
    _backfill()


def _backfill() -> None:
    entries = sa.table(
        "entries",
        sa.column("id", sa.BigInteger),
        sa.column("project_key", sa.String),
        sa.column("session_id", sa.String),
        sa.column("subpath", sa.String),
        sa.column("entry", Json),
    )
    meta = sa.table(
        "meta",
        sa.column("project_key", sa.String),
        sa.column("session_id", sa.String),
        sa.column("subpath", sa.String),
        sa.column("context_tokens", sa.BigInteger),
    )
    bind = op.get_bind()
    latest: dict[tuple[str, str, str], int] = {}
    rows = bind.execute(
        sa.select(entries.c.project_key, entries.c.session_id, entries.c.subpath, entries.c.entry)
        .where(sa.cast(entries.c.entry, sa.Text).like('%"usage"%'))
        .order_by(entries.c.id)
    )
    for project_key, session_id, subpath, entry in rows:
        tokens = context_tokens(entry) if isinstance(entry, dict) else None
        if tokens is not None:
            latest[(project_key, session_id, subpath)] = tokens
    for (project_key, session_id, subpath), tokens in latest.items():
        bind.execute(
            meta.update()
            .where(
                meta.c.project_key == project_key,
                meta.c.session_id == session_id,
                meta.c.subpath == subpath,
            )
            .values(context_tokens=tokens)
        )


def context_tokens(entry: dict) -> int | None:
    """The context size when the model wrote this reply, as flower counted it in 0002.

    Frozen here on purpose: a migration must keep doing what it did when it was
    written, whatever later versions of flower's own code do.
    """
    if entry.get("type") != "assistant" or entry.get("isApiErrorMessage") is True:
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("model") == "<synthetic>":
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    total = 0
    for field in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        value = usage.get(field)
        if isinstance(value, int) and not isinstance(value, bool):
            total += value
    return total or None


def downgrade() -> None:
    with op.batch_alter_table("meta") as batch:
        batch.drop_column("context_tokens")
