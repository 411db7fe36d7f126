"""budget: what each run spent (one row per paid session) and its cap, by run id.

A run's budget must hold across processes, wakes and machines: the spend of every
session (work, judge, goal, clarify, handoff rounds, side questions, the bequest) is a
row here, and the cap the run was given is kept beside it, so a wake without
``--budget`` keeps the cap and ``flower status`` shows spent / cap from any machine
sharing the store. A downgrade drops both tables.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "spend",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("step", sa.String(255), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=True),
        sa.Column("cost_usd", sa.Float, nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("ix_spend_run", "spend", ["run_id"])
    op.create_table(
        "budgets",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("cap_usd", sa.Float, nullable=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("budgets")
    op.drop_index("ix_spend_run", table_name="spend")
    op.drop_table("spend")
