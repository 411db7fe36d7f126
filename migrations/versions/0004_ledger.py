"""ledger: every judge verdict on a guarded step, and every human override of one.

Kept in the store all machines share, by run id, so a judge that rules wrongly is
noticed (its verdicts next to the humans' overrides of them); ``notes/判定记录.md`` in the
workspace stays the readable local mirror. A downgrade drops the table.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Key = sa.String(512)


def upgrade() -> None:
    op.create_table(
        "ledger",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("workspace", Key, nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("step", sa.String(255), nullable=False),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("reason", sa.Text, nullable=False, server_default=""),
        sa.Column("failed", Json, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=False, server_default="0"),
        sa.Column("session_id", sa.String(128), nullable=True),
        sa.Column("said", sa.Text, nullable=False, server_default=""),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("ix_ledger_run", "ledger", ["run_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_ledger_run", table_name="ledger")
    op.drop_table("ledger")
