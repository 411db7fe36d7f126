"""view_marks: how far each session's mask and expiry boundaries went at its last load.

A load draws the boundaries below which old tool results are masked or expired; drawn
again from timestamps alone, a later load could draw them nearer and show the model
whole again what the last request sent masked, which costs a rewrite of the prompt
cache. One row per session key keeps the furthest mark (:mod:`flower.stores.marks`).
A downgrade drops the table: loads then draw the boundaries from the lines alone.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY_LENGTH = 512
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "view_marks",
        sa.Column("project_key", sa.String(KEY_LENGTH), primary_key=True),
        sa.Column("session_id", sa.String(KEY_LENGTH), primary_key=True),
        sa.Column("subpath", sa.String(KEY_LENGTH), primary_key=True, server_default=""),
        sa.Column("mask", Json, nullable=True),
        sa.Column("expiry", Json, nullable=True),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("view_marks")
