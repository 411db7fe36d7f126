"""steps: every finished step of every run, in the store all machines share.

``runs/manifest.json`` stays the readable local record; this table mirrors it by run id,
so ``flower status --all`` on any machine using the same store sees every run. A
downgrade drops the table (the manifests keep everything it held).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Key = sa.String(512)


def upgrade() -> None:
    op.create_table(
        "steps",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("workspace", Key, nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("step", sa.String(255), nullable=False),
        sa.Column("ok", sa.Boolean, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=False),
        sa.Column("ended_at", sa.Float, nullable=False),
        sa.Column("row", Json, nullable=False),
    )
    op.create_index("ix_steps_run", "steps", ["run_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_steps_run", table_name="steps")
    op.drop_table("steps")
