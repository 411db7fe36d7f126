"""entries.entry keeps each line's bytes on Postgres: JSON, not JSONB.

JSONB normalises what it stores: it sorts an object's keys (by length, then bytes) and
drops whitespace. A transcript line read back from it comes out with its keys in another
order than the CLI wrote them (56 of 3,133 real lines kept theirs), so a resume from
Postgres sent other bytes than the same resume from SQLite, and the API's exact-prefix
prompt cache read nothing (from the second resume even the tool definitions moved).
Postgres's ``json`` type validates the text and keeps it as written. Lines stored
before this revision keep the order JSONB gave them (what was lost is not in the
database any more); every line written from here on is kept byte for byte. SQLite
already keeps the text: nothing changes there. A downgrade turns the column back into
JSONB.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE entries ALTER COLUMN entry TYPE JSON USING entry::json")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE entries ALTER COLUMN entry TYPE JSONB USING entry::jsonb")
