"""lineages: each run's lineage (step -> session id, wake count), by run id.

``runs/lineage.json`` is where a run continues from on its machine; this row is the same
document in the store every machine shares, so a clone of the workspace on another
machine (the run id travels in the workbench's ``run.json``) finds the run without the
``runs/`` folder. A downgrade drops the table.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Key = sa.String(512)


def upgrade() -> None:
    op.create_table(
        "lineages",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("workspace", Key, nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("data", Json, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("lineages")
