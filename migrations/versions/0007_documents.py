"""documents: each run's frozen documents (the brief, the goal) with their hash.

A frozen document is a file in the workbench that any process on the machine can write.
The text flower froze is kept here too, keyed by run id and file name with its SHA-256,
so every load compares the file with it and a changed or missing file is restored and
reported: the judge never rules on a goal nobody froze. A downgrade drops the table.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "documents",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("documents")
