"""The session-store schema at the newest revision, as SQLAlchemy Core tables.

The seed's three transcript tables, each keyed ``project_key/session_id[/subpath]``
(``subpath`` is ``""`` for a main transcript, so the key columns can be NOT NULL and
unique constraints behave the same on every database), and run tables keyed by run id:

``entries``
    One row per transcript line, in append order (``id``). ``uuid`` is the SDK's
    idempotency key: unique per key when present, absent for titles, tags and markers.
    ``entry`` is the line itself, as written (JSON; Postgres's ``json``, which keeps the
    text, not JSONB, which reorders keys: revision 0009).
``meta``
    One row per key: the storage write time (``mtime``, strictly increasing per key)
    and the context size of the latest model reply (``context_tokens``), which the
    wake-up line shows without reading the transcript.
``summaries``
    One row per main session: the SDK's opaque ``fold_session_summary`` state.
``steps``
    One row per finished step of a run (its manifest row, by run id, workspace and
    host): what ``flower status --all`` shows from any machine using the store.
``ledger``
    One row per judge ruling on a guarded step (``kind`` ``"verdict"``: its ``state``,
    ``reason``, ``failed`` checks, cost and session) and per human override of one
    (``kind`` ``"override"``: ``accept``, ``change_goal`` or ``misjudged``, with the
    human's words or the new goal in ``said``), by run id, in order (``id``).
``lineages``
    One row per run: its lineage document (``lineage.json``: step -> session id, wake
    count, the workspace it was last in), so another machine with a clone of the
    workspace continues the run without ``runs/``.
``spend``
    One row per model session of a run that cost something (its step, session and
    cost), by run id, from every process and machine: what the run has spent.
``budgets``
    One row per run with a budget: its cap in USD (``NULL``: none), so a wake without
    ``--budget`` keeps it and ``flower status`` shows spent / cap anywhere.
``documents``
    One row per frozen document of a run (the brief, the goal: by file name) with the
    text as flower froze it and its SHA-256, so a file changed or removed behind
    flower's back is restored from here and reported (:mod:`flower.stores.documents`).
``view_marks``
    One row per session key a load reshaped: how far its mask and expiry boundaries
    went (the ``tool_use_id`` of the newest result below each, and their count), so the
    next load never draws them nearer (:mod:`flower.stores.marks`).

The tables here describe the head revision for queries and for ``alembic
revision --autogenerate``; the migrations in ``migrations/versions`` create them.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

metadata = sa.MetaData()

#: JSON everywhere, JSONB on Postgres (indexable, compact, validated by the server).
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
#: A transcript line as the CLI wrote it, byte for byte: Postgres's ``json`` keeps the text
#: (JSONB reorders keys, so a resume would send other bytes than from SQLite; 0009).
VerbatimJson = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
#: A 64-bit autoincrement key that is SQLite's rowid alias there (INTEGER PRIMARY KEY).
RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

KEY_LENGTH = 512

entries = sa.Table(
    "entries",
    metadata,
    sa.Column("id", RowId, primary_key=True, autoincrement=True),
    sa.Column("project_key", sa.String(KEY_LENGTH), nullable=False),
    sa.Column("session_id", sa.String(KEY_LENGTH), nullable=False),
    sa.Column("subpath", sa.String(KEY_LENGTH), nullable=False, server_default=""),
    sa.Column("uuid", sa.String(128), nullable=True),
    sa.Column("entry", VerbatimJson, nullable=False),
    sa.UniqueConstraint("project_key", "session_id", "subpath", "uuid", name="uq_entries_uuid"),
    sa.Index("ix_entries_key", "project_key", "session_id", "subpath", "id"),
)

meta = sa.Table(
    "meta",
    metadata,
    sa.Column("project_key", sa.String(KEY_LENGTH), primary_key=True),
    sa.Column("session_id", sa.String(KEY_LENGTH), primary_key=True),
    sa.Column("subpath", sa.String(KEY_LENGTH), primary_key=True, server_default=""),
    sa.Column("mtime", sa.BigInteger, nullable=False),
    sa.Column("context_tokens", sa.BigInteger, nullable=True),
)

summaries = sa.Table(
    "summaries",
    metadata,
    sa.Column("project_key", sa.String(KEY_LENGTH), primary_key=True),
    sa.Column("session_id", sa.String(KEY_LENGTH), primary_key=True),
    sa.Column("mtime", sa.BigInteger, nullable=False),
    sa.Column("data", Json, nullable=False),
)

steps = sa.Table(
    "steps",
    metadata,
    sa.Column("id", RowId, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("workspace", sa.String(KEY_LENGTH), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("step", sa.String(255), nullable=False),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("cost_usd", sa.Float, nullable=False),
    sa.Column("ended_at", sa.Float, nullable=False),
    sa.Column("row", Json, nullable=False),
    sa.Index("ix_steps_run", "run_id", "id"),
)

ledger = sa.Table(
    "ledger",
    metadata,
    sa.Column("id", RowId, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("workspace", sa.String(KEY_LENGTH), nullable=False),
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
    sa.Index("ix_ledger_run", "run_id", "id"),
)

lineages = sa.Table(
    "lineages",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("workspace", sa.String(KEY_LENGTH), nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("data", Json, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

spend = sa.Table(
    "spend",
    metadata,
    sa.Column("id", RowId, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("step", sa.String(255), nullable=False),
    sa.Column("session_id", sa.String(128), nullable=True),
    sa.Column("cost_usd", sa.Float, nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Index("ix_spend_run", "run_id"),
)

budgets = sa.Table(
    "budgets",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("cap_usd", sa.Float, nullable=True),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

documents = sa.Table(
    "documents",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(255), primary_key=True),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

view_marks = sa.Table(
    "view_marks",
    metadata,
    sa.Column("project_key", sa.String(KEY_LENGTH), primary_key=True),
    sa.Column("session_id", sa.String(KEY_LENGTH), primary_key=True),
    sa.Column("subpath", sa.String(KEY_LENGTH), primary_key=True, server_default=""),
    sa.Column("mask", Json, nullable=True),
    sa.Column("expiry", Json, nullable=True),
    sa.Column("updated_at", sa.Float, nullable=False),
)

TABLES = (
    "entries", "meta", "summaries", "steps", "ledger", "lineages", "spend", "budgets",
    "documents", "view_marks",
)  # fmt: skip

#: Where alembic keeps flower's schema revision. Not alembic's default
#: ``alembic_version``: a store pointed at an application's own database must neither
#: read the application's revision as flower's nor move it.
VERSION_TABLE = "flower_schema_version"
#: The newest revision in ``migrations/versions``. A database already there is opened
#: without loading alembic at all (a tenth of a second at every start); anything else
#: goes through alembic. tests/stores/test_migrations.py keeps it equal to alembic's head.
SCHEMA_REVISION = "0009"
