"""The session store: entries, meta, summaries.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the column types (a migration must not change when schema.py does).
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Key = sa.String(512)


def upgrade() -> None:
    op.create_table(
        "entries",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("project_key", Key, nullable=False),
        sa.Column("session_id", Key, nullable=False),
        sa.Column("subpath", Key, nullable=False, server_default=""),
        sa.Column("uuid", sa.String(128), nullable=True),
        sa.Column("entry", Json, nullable=False),
        sa.UniqueConstraint("project_key", "session_id", "subpath", "uuid", name="uq_entries_uuid"),
    )
    op.create_index("ix_entries_key", "entries", ["project_key", "session_id", "subpath", "id"])
    op.create_table(
        "meta",
        sa.Column("project_key", Key, primary_key=True),
        sa.Column("session_id", Key, primary_key=True),
        sa.Column("subpath", Key, primary_key=True, server_default=""),
        sa.Column("mtime", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "summaries",
        sa.Column("project_key", Key, primary_key=True),
        sa.Column("session_id", Key, primary_key=True),
        sa.Column("mtime", sa.BigInteger, nullable=False),
        sa.Column("data", Json, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("summaries")
    op.drop_table("meta")
    op.drop_index("ix_entries_key", table_name="entries")
    op.drop_table("entries")
