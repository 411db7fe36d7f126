"""SqliteSessionStore: the SDK's ``SessionStore`` on SQLAlchemy (SQLite, Postgres, ...).

The seed calls it the SQLite store because SQLite is the embedded default
(``run_dir/sessions.db``), but the same class works on any SQLAlchemy URL: give it a
path for SQLite or a URL such as ``postgresql+psycopg://user@host/db`` (JSON is then
stored as JSONB). The schema is managed by alembic (:mod:`flower.stores.migrate`):
opening a store checks it, creates it in a new database and upgrades an embedded one.

Why the database work runs in a worker thread: the SDK calls ``append`` from the event
loop that also reads the CLI's output stream, so a write that waits for another
process's lock must not freeze that loop. An async engine would need two more drivers
(``aiosqlite``, ``greenlet``) for the same effect; ``anyio.to_thread`` costs tens of
microseconds a call, next to milliseconds for a committed batch.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
import sqlalchemy as sa
from claude_agent_sdk import fold_session_summary
from claude_agent_sdk.types import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
)

from flower.stores import migrate
from flower.stores.engine import WRITE, describe, dumps, make_engine
from flower.stores.errors import StoreError
from flower.stores.schema import entries as entries_t
from flower.stores.schema import meta as meta_t
from flower.stores.schema import summaries as summaries_t
from flower.stores.transcript import latest_context_tokens
from flower.stores.url import display, is_postgres, sqlite_path, to_url

T = TypeVar("T")

#: Rows fetched per round trip when loading; bounds the driver's buffer on Postgres.
LOAD_CHUNK = 2000
#: Attempts at a write transaction that lost a race to create the same key.
WRITE_ATTEMPTS = 3


class SqliteSessionStore(SessionStore):
    """Transcripts in three tables (entries / meta / summaries), keyed
    ``project_key/session_id[/subpath]``.

    :param path: A file path for SQLite (parent folders are created), or any SQLAlchemy
        URL. A corrupt file, an unknown scheme, an unreachable server or a schema that
        needs ``flower db upgrade`` raise :class:`~flower.stores.errors.StoreError`
        here, at construction, rather than inside the SDK's mirror (which only logs).

    Guarantees beyond the protocol's required two methods:

    - ``append`` is one transaction per batch (all lines or none) and idempotent by
      ``uuid`` per key; lines without ``uuid`` are always appended.
    - the session summary is folded inside that transaction, under the key's ``meta``
      row lock, so racing appends to one session never lose a fold;
    - ``mtime`` comes from :meth:`_next_mtime`, strictly increasing in this process, and
      is bumped past the stored value, so it also increases per key across processes;
      ``list_sessions`` and the summaries report the same value;
    - deleting a main key deletes its subagent transcripts and summary.
    """

    def __init__(self, path: str | Path) -> None:
        self.url = to_url(path)
        self.path: Path | None = sqlite_path(self.url)
        self._last_mtime = 0
        self._clock = threading.Lock()
        self._engine = make_engine(self.url)
        try:
            migrate.ensure_schema(self._engine, upgrade_old=not is_postgres(self.url))
        except BaseException:
            self._engine.dispose()
            raise

    def __repr__(self) -> str:
        return f"{type(self).__name__}({display(self.url)!r})"

    def close(self) -> None:
        """Release pooled connections (the store reopens them if used again)."""
        self._engine.dispose()

    # --- the clock --------------------------------------------------------------------

    def _next_mtime(self) -> int:
        """Storage write time in epoch milliseconds, strictly increasing per process.

        The SDK's fast staleness check compares a summary's ``mtime`` with the session's
        ``list_sessions`` ``mtime``; two appends in the same millisecond must still get
        different values or a fresh summary would look stale (or a stale one fresh).
        """
        with self._clock:
            now = max(int(time.time() * 1000), self._last_mtime + 1)
            self._last_mtime = now
            return now

    # --- the protocol -----------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        if entries:
            await self._in_thread(self._append, key, list(entries))

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        return await self._in_thread(self._load, key)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        query = sa.select(meta_t.c.session_id, meta_t.c.mtime).where(
            meta_t.c.project_key == project_key, meta_t.c.subpath == ""
        )
        rows = await self._in_thread(self._read, query)
        return [{"session_id": sid, "mtime": int(mtime)} for sid, mtime in rows]

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        query = sa.select(summaries_t.c.session_id, summaries_t.c.mtime, summaries_t.c.data).where(
            summaries_t.c.project_key == project_key
        )
        rows = await self._in_thread(self._read, query)
        return [{"session_id": sid, "mtime": int(mtime), "data": data} for sid, mtime, data in rows]

    async def delete(self, key: SessionKey) -> None:
        await self._in_thread(self._delete, key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        query = (
            sa.select(meta_t.c.subpath)
            .where(
                meta_t.c.project_key == key["project_key"],
                meta_t.c.session_id == key["session_id"],
                meta_t.c.subpath != "",
            )
            .order_by(meta_t.c.subpath)
        )
        return [subpath for (subpath,) in await self._in_thread(self._read, query)]

    # --- flower's additions -----------------------------------------------------------

    async def context_tokens(self, key: SessionKey) -> int | None:
        """Context size of the newest real model reply in ``key``'s transcript, if known.

        What the wake-up line shows as "干活上下文 80.2K", without loading the transcript.
        """
        query = sa.select(meta_t.c.context_tokens).where(*_key_filter(meta_t, key))
        rows = await self._in_thread(self._read, query)
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    # --- the work, in a worker thread -----------------------------------------------

    async def _in_thread(self, work: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(work, *args)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except StoreError:
            raise
        except sa.exc.SQLAlchemyError as exc:
            raise describe(exc, self.url) from None

    def _read(self, query: sa.Select[Any]) -> list[Any]:
        with self._errors(), self._engine.connect() as connection:
            return list(connection.execute(query).all())

    def _append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        _check_objects(key, entries)
        fresh: list[SessionStoreEntry] = []
        seen: set[str] = set()
        for entry in entries:  # a uuid repeated inside one batch counts once, like across batches
            uid = entry.get("uuid")
            if isinstance(uid, str):
                if uid in seen:
                    continue
                seen.add(uid)
            fresh.append(entry)
        tokens = latest_context_tokens(fresh)  # type: ignore[arg-type]
        for attempt in range(WRITE_ATTEMPTS):
            with self._errors():
                try:
                    with self._engine.connect().execution_options(**WRITE) as conn, conn.begin():
                        self._write(conn, key, fresh, seen, tokens)
                except sa.exc.IntegrityError:
                    if attempt + 1 < WRITE_ATTEMPTS:
                        continue  # another process created this key first: redo against its row
                    raise
                except sa.exc.StatementError as exc:
                    if isinstance(exc.orig, TypeError | ValueError):
                        _find_bad_json(key, fresh)  # the transaction rolled back: nothing stored
                    raise
            return

    def _write(
        self,
        conn: sa.Connection,
        key: SessionKey,
        entries: list[SessionStoreEntry],
        uuids: set[str],
        tokens: int | None,
    ) -> None:
        project_key, session_id, subpath = _key_of(key)
        where = _key_filter(meta_t, key)
        # Lock the key's meta row first: concurrent appends to one key (other processes,
        # Postgres) queue here, so the uuid check and the summary fold below are serial.
        stored = conn.execute(sa.select(meta_t.c.mtime).where(*where).with_for_update()).first()
        mtime = self._next_mtime()
        if stored is None:
            conn.execute(
                meta_t.insert().values(
                    project_key=project_key,
                    session_id=session_id,
                    subpath=subpath,
                    mtime=mtime,
                    context_tokens=tokens,
                )
            )
        else:
            mtime = max(mtime, int(stored[0]) + 1)
            values: dict[str, Any] = {"mtime": mtime}
            if tokens is not None:
                values["context_tokens"] = tokens
            conn.execute(meta_t.update().where(*where).values(**values))
        if stored is not None and uuids:
            present = set(
                conn.execute(
                    sa.select(entries_t.c.uuid).where(
                        *_key_filter(entries_t, key), entries_t.c.uuid.in_(uuids)
                    )
                ).scalars()
            )
            if present:
                entries = [e for e in entries if e.get("uuid") not in present]
        if entries:
            conn.execute(
                entries_t.insert(),
                [
                    {
                        "project_key": project_key,
                        "session_id": session_id,
                        "subpath": subpath,
                        "uuid": e.get("uuid") if isinstance(e.get("uuid"), str) else None,
                        "entry": e,
                    }
                    for e in entries
                ],
            )
        if not subpath:  # subagent transcripts never feed the main session's summary
            self._fold(conn, key, entries, mtime)

    def _fold(
        self, conn: sa.Connection, key: SessionKey, entries: list[SessionStoreEntry], mtime: int
    ) -> None:
        where = (
            summaries_t.c.project_key == key["project_key"],
            summaries_t.c.session_id == key["session_id"],
        )
        row = conn.execute(sa.select(summaries_t.c.mtime, summaries_t.c.data).where(*where)).first()
        prev: SessionSummaryEntry | None = (
            None
            if row is None
            else {"session_id": key["session_id"], "mtime": int(row[0]), "data": row[1]}
        )
        folded = fold_session_summary(prev, key, entries)
        if row is None:
            conn.execute(
                summaries_t.insert().values(
                    project_key=key["project_key"],
                    session_id=key["session_id"],
                    mtime=mtime,
                    data=folded["data"],
                )
            )
        else:
            conn.execute(
                summaries_t.update().where(*where).values(mtime=mtime, data=folded["data"])
            )

    def _load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        with self._errors(), self._engine.connect() as conn:
            if (
                conn.execute(sa.select(meta_t.c.mtime).where(*_key_filter(meta_t, key))).first()
                is None
            ):
                return None
            query = (
                sa.select(entries_t.c.entry)
                .where(*_key_filter(entries_t, key))
                .order_by(entries_t.c.id)
                .execution_options(yield_per=LOAD_CHUNK)
            )
            return [entry for (entry,) in conn.execute(query)]

    def _delete(self, key: SessionKey) -> None:
        project_key, session_id, subpath = _key_of(key)
        with (
            self._errors(),
            self._engine.connect().execution_options(**WRITE) as conn,
            conn.begin(),
        ):
            if subpath:
                conn.execute(entries_t.delete().where(*_key_filter(entries_t, key)))
                conn.execute(meta_t.delete().where(*_key_filter(meta_t, key)))
                return
            for table in (entries_t, meta_t, summaries_t):
                conn.execute(
                    table.delete().where(
                        table.c.project_key == project_key, table.c.session_id == session_id
                    )
                )


def _key_of(key: SessionKey | SessionListSubkeysKey) -> tuple[str, str, str]:
    return key["project_key"], key["session_id"], key.get("subpath") or ""  # type: ignore[return-value]


def _key_filter(table: sa.Table, key: SessionKey) -> tuple[sa.ColumnElement[bool], ...]:
    project_key, session_id, subpath = _key_of(key)
    return (
        table.c.project_key == project_key,
        table.c.session_id == session_id,
        table.c.subpath == subpath,
    )


def _check_objects(key: SessionKey, entries: list[SessionStoreEntry]) -> None:
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise StoreError(
                _not_json(key, index, f"it is a {type(entry).__name__}, not an object")
            )


def _find_bad_json(key: SessionKey, entries: list[SessionStoreEntry]) -> None:
    """Name the line that could not be serialised (only called after an insert failed:
    checking every batch up front would serialise every line twice)."""
    for index, entry in enumerate(entries):
        try:
            dumps(entry)
        except (TypeError, ValueError) as exc:
            raise StoreError(_not_json(key, index, str(exc))) from None


def _not_json(key: SessionKey, index: int, why: str) -> str:
    where = "/".join(p for p in _key_of(key) if p)
    return (
        f"transcript line {index} for {where} is not JSON ({why}): "
        "nothing from this batch was stored"
    )
