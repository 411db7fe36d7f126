"""The store's SQL, built once: each append runs the same few statements, only the
parameters change; the transcript-line INSERT is plain driver SQL (see :func:`insert_sql`)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from claude_agent_sdk.types import SessionKey, SessionListSubkeysKey

from flower.stores.schema import entries as entries_t
from flower.stores.schema import meta as meta_t
from flower.stores.schema import summaries as summaries_t


def bind(name: str) -> sa.BindParameter[Any]:
    return sa.bindparam(name)


def meta_key() -> tuple[sa.ColumnElement[bool], ...]:
    return (
        meta_t.c.project_key == bind("pk"),
        meta_t.c.session_id == bind("sid"),
        meta_t.c.subpath == bind("sub"),
    )


# Statements built once: each append runs the same six, only the parameters change.
META = sa.select(meta_t.c.mtime).where(*meta_key())
LOCK_META = META.with_for_update()
INSERT_META = meta_t.insert().values(
    project_key=bind("pk"),
    session_id=bind("sid"),
    subpath=bind("sub"),
    mtime=bind("mtime"),
    context_tokens=bind("tokens"),
)
UPDATE_META = (
    meta_t.update()
    .where(*meta_key())
    .values(
        mtime=bind("mtime"),
        context_tokens=sa.func.coalesce(bind("tokens"), meta_t.c.context_tokens),
    )
)
PRESENT = sa.select(entries_t.c.uuid).where(
    entries_t.c.project_key == bind("pk"),
    entries_t.c.session_id == bind("sid"),
    entries_t.c.subpath == bind("sub"),
    entries_t.c.uuid.in_(sa.bindparam("uuids", expanding=True)),
)
SUMMARY_KEY = (
    summaries_t.c.project_key == bind("pk"),
    summaries_t.c.session_id == bind("sid"),
)
SUMMARY = sa.select(summaries_t.c.mtime, summaries_t.c.data).where(*SUMMARY_KEY)
INSERT_SUMMARY = summaries_t.insert().values(
    project_key=bind("pk"), session_id=bind("sid"), mtime=bind("mtime"), data=bind("data")
)
UPDATE_SUMMARY = (
    summaries_t.update().where(*SUMMARY_KEY).values(mtime=bind("mtime"), data=bind("data"))
)


def insert_sql(dialect: sa.Dialect, *, ignore_duplicates: bool) -> str:
    """The driver-level INSERT of one transcript line, in the driver's parameter style.

    ``ON CONFLICT DO NOTHING`` (SQLite and Postgres) lets a replayed uuid pass without an
    error, and the row count tells how many lines were new; the line is encoded JSON
    text, cast to ``json`` on Postgres (kept as written, key order included).
    """
    mark = "?" if dialect.paramstyle == "qmark" else "%s"
    entry = f"CAST({mark} AS JSON)" if dialect.name == "postgresql" else mark
    columns = "project_key, session_id, subpath, uuid, entry"
    values = ", ".join([mark] * 4 + [entry])
    sql = f"INSERT INTO {entries_t.name} ({columns}) VALUES ({values})"
    return sql + (" ON CONFLICT DO NOTHING" if ignore_duplicates else "")


def key_of(key: SessionKey | SessionListSubkeysKey) -> tuple[str, str, str]:
    return key["project_key"], key["session_id"], key.get("subpath") or ""  # type: ignore[return-value]


def key_filter(table: sa.Table, key: SessionKey) -> tuple[sa.ColumnElement[bool], ...]:
    project_key, session_id, subpath = key_of(key)
    return (
        table.c.project_key == project_key,
        table.c.session_id == session_id,
        table.c.subpath == subpath,
    )
