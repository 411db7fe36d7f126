"""SqliteSessionStore: the SDK's ``SessionStore`` on SQLAlchemy (SQLite, Postgres, ...).

The seed calls it the SQLite store because SQLite is the embedded default
(``run_dir/sessions.db``), but the same class works on any SQLAlchemy URL: give it a
path for SQLite or a URL such as ``postgresql+psycopg://user@host/db`` (transcript
lines are then kept as ``json``, byte for byte; run tables as JSONB). Opening the
database, its schema and flower's run tables come from
:class:`~flower.stores.database.StoreDatabase`; this module adds the transcripts.

Why the database work runs in a worker thread: the SDK calls ``append`` from the event
loop that also reads the CLI's output stream, so a write that waits for another
process's lock must not freeze that loop. An async engine would need two more drivers
(``aiosqlite``, ``greenlet``) for the same effect. The threads are the store's own
(:mod:`flower.stores.worker`): tens of microseconds a call, where anyio's, started anew
for each root task, cost a quarter of a millisecond (a small load's whole budget).

Every line is redacted before it is stored (:mod:`flower.kernel.redact`): a transcript
holds tool output, and tool output can hold the API key. Only string values change,
never a key, a uuid or the line's shape; a line with nothing to hide (nearly all) costs
a few substring checks on its encoded text.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

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

from flower.kernel.redact import Redactor
from flower.kernel.redact import current as current_redactor
from flower.stores.calls import CallLedger
from flower.stores.database import StoreDatabase
from flower.stores.engine import WRITE, compact_lines, dumps, loads, pg_dumps, pg_loads
from flower.stores.lines import RepeatedStrings, check_objects, find_bad_json
from flower.stores.schema import entries as entries_t
from flower.stores.schema import meta as meta_t
from flower.stores.schema import summaries as summaries_t
from flower.stores.schema import view_marks as marks_t
from flower.stores.statements import (
    INSERT_META,
    INSERT_SUMMARY,
    LOCK_META,
    META,
    PRESENT,
    SUMMARY,
    UPDATE_META,
    UPDATE_SUMMARY,
    bind,
    insert_sql,
    key_filter,
    key_of,
)
from flower.stores.transcript import latest_context_tokens
from flower.stores.worker import Workers

T = TypeVar("T")

#: Rows fetched per round trip when loading; bounds the driver's buffer on Postgres.
LOAD_CHUNK = 500
#: Characters of JSON parsed at once when loading (SQLite): a chunk's raw text is held
#: beside the parsed transcript while it is parsed (500 rows of 64 KB lines held 64 MB
#: of it, 3x the transcript's size at the peak; 1 MB, twice over, was still 0.15x at 1 KB
#: lines); 64 KB still shares each key across dozens of lines, at the same speed.
LOAD_CHARS = 1 << 16
#: Characters of rows parsed by one call (orjson): its parse holds about eleven times the
#: text it reads until it returns (0.23x a 1 KB-line transcript's size at 64 KB, 0.06x at
#: 16 KB, the same speed; orjson shares key strings across calls by itself).
PARSE_CHARS = 1 << 14
#: Below this mean line size (bytes) a parsed part's lines are compacted
#: (``engine.compact_lines``): orjson's presized dicts are a tenth of a 1 KB line, under
#: a twentieth from 2 KB, and rebuilding them costs a microsecond a line.
COMPACT_BELOW = 2048
_SQLITE_LOAD = (
    "SELECT CAST(entry AS BLOB) FROM entries"
    " WHERE project_key = ? AND session_id = ? AND subpath = ? ORDER BY id"
)
_SQLITE_META = "SELECT 1 FROM meta WHERE project_key = ? AND session_id = ? AND subpath = ?"
#: Attempts at a write transaction that lost a race to create the same key.
WRITE_ATTEMPTS = 3
#: Fields of a transcript line that link lines or name them: never redacted, so the
#: chain and the protocol's idempotency by ``uuid`` hold whatever a secret looks like.
LINK_KEYS = frozenset(
    {"uuid", "parentUuid", "logicalParentUuid", "leafUuid", "sessionId", "agentId", "type"}
)


def _array(rows: list[bytes] | list[str]) -> bytes | str:
    """The JSON array of ``rows`` (each a JSON text), bytes for bytes."""
    if rows and rows[0].__class__ is bytes:
        return b"[" + b",".join(rows) + b"]"
    return "[" + ",".join(cast(list[str], rows)) + "]"


class SqliteSessionStore(StoreDatabase, SessionStore):
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
        super().__init__(path)
        self._last_mtime = 0
        self._clock = threading.Lock()
        self._workers = Workers()
        #: Summaries this process wrote last, reused while the key's stored mtime shows
        #: nobody else has written since (saves reading the summary back every batch).
        self._summaries: dict[tuple[str, str], SessionSummaryEntry] = {}
        #: ``INSERT ... ON CONFLICT DO NOTHING`` where the database has it; elsewhere the
        #: uuids already stored are looked up first (under the same row lock).
        postgres = self._engine.dialect.name == "postgresql"
        self._sqlite = self._engine.dialect.name == "sqlite"
        self._insert_new = postgres or self._engine.dialect.name == "sqlite"
        #: Lines go to the driver already encoded, in one ``executemany``: SQLAlchemy's
        #: per-row parameter processing cost as much as encoding them (benchmarks/store.py).
        self.insert_sql = insert_sql(self._engine.dialect, ignore_duplicates=self._insert_new)
        self._encode = pg_dumps if postgres else dumps
        self._loads = pg_loads if postgres else loads
        #: The entries as stored JSON text (cast from ``json`` on Postgres), for :meth:`_load`.
        self._entry_text = (
            sa.select(
                sa.cast(entries_t.c.entry, sa.Text)
                if postgres
                else sa.type_coerce(entries_t.c.entry, sa.Text)
            )
            .where(
                entries_t.c.project_key == bind("pk"),
                entries_t.c.session_id == bind("sid"),
                entries_t.c.subpath == bind("sub"),
            )
            .order_by(entries_t.c.id)
        )

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
            self.calls.saw(list(entries))  # a tool call waiting for its line goes on

    @property
    def calls(self) -> CallLedger:
        """The tool calls this store has taken (:mod:`flower.stores.calls`)."""
        ledger = self.__dict__.get("_calls")
        if ledger is None:
            ledger = self.__dict__["_calls"] = CallLedger()
        return ledger

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

    async def stored(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The lines of ``key`` exactly as stored: what ``load()`` returns before any load
        policy of a subclass reshapes it (the cut-off report reads a worker's real
        history with it, ``runtime/cutoff.py``)."""
        return await self._in_thread(self._load, key)

    async def context_tokens(self, key: SessionKey) -> int | None:
        """Context size of the newest real model reply in ``key``'s transcript, if known.

        What the wake-up line shows as "干活上下文 80.2K", without loading the transcript.
        """
        query = sa.select(meta_t.c.context_tokens).where(*key_filter(meta_t, key))
        rows = await self._in_thread(self._read, query)
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def last_lines(
        self, session_id: str, project_key: str | None = None, *, limit: int = 200
    ) -> list[tuple[str, Any]]:
        """The newest ``limit`` lines of ``session_id``'s main transcript that carry a uuid,
        newest first, as ``(uuid, line)``; under any project key when ``project_key`` is
        ``None`` (a session id is unique). Synchronous and one indexed query: a
        coordinator's history is megabytes, and finding where it can be resumed at
        (``workflow/rewind.py``) needs only its last few rows."""
        query = (
            sa.select(entries_t.c.uuid, entries_t.c.entry)
            .where(
                entries_t.c.session_id == session_id,
                entries_t.c.subpath == "",
                entries_t.c.uuid.is_not(None),
                *([entries_t.c.project_key == project_key] if project_key else []),
            )
            .order_by(entries_t.c.id.desc())
            .limit(limit)
        )
        return [(uid, entry) for uid, entry in self._read(query)]

    async def projects_of(self, session_id: str) -> list[str]:
        """The project keys under which a main transcript ``session_id`` is stored.

        A session id is unique, but resuming looks it up under one project key (the
        workspace's path): this says where it is when the workspace given is another.
        """
        query = (
            sa.select(meta_t.c.project_key)
            .where(meta_t.c.session_id == session_id, meta_t.c.subpath == "")
            .order_by(meta_t.c.project_key)
        )
        return [key for (key,) in await self._in_thread(self._read, query)]

    async def copy_sessions(self, old_project: str, new_project: str, ids: list[str]) -> int:
        """Copy sessions to another project key (a moved workspace); see
        :func:`flower.stores.rekey.copy_sessions`. How many were copied."""
        from flower.stores.rekey import copy_sessions

        def work() -> int:
            with self._errors():
                return copy_sessions(self._engine, old_project, new_project, ids)

        return await self._in_thread(work)

    # --- the work, in a worker thread -----------------------------------------------

    async def _in_thread(self, work: Callable[..., T], *args: Any) -> T:
        return await self._workers.run(work, *args)

    def close(self) -> None:
        """Release pooled connections and the idle worker threads (both come back if the
        store is used again)."""
        self._workers.close()
        super().close()

    def _append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        check_objects(key, entries)
        fresh: list[SessionStoreEntry] = []
        seen: set[str] = set()
        for entry in entries:  # a uuid repeated inside one batch counts once, like across batches
            uid = entry.get("uuid")
            if isinstance(uid, str):
                if uid in seen:
                    continue
                seen.add(uid)
            fresh.append(entry)
        try:  # once, before any transaction: a retried batch is not encoded again
            encoded = [self._encode(entry) for entry in fresh]
        except (TypeError, ValueError):
            find_bad_json(key, fresh)  # names the line; nothing was stored
            raise
        self._redact(current_redactor(), fresh, encoded)
        look_first = not self._insert_new
        races = 0
        while True:
            with self._errors():
                try:
                    with self._engine.connect().execution_options(**_APPEND) as conn:
                        with conn.begin():
                            summary = self._write(conn, key, fresh, encoded, seen, look_first)
                        if summary is not None:  # committed: the fold is now the stored one
                            self._summaries[(key["project_key"], key["session_id"])] = summary
                except _Replayed:
                    look_first = True  # rolled back: redo it, skipping the stored lines first
                    continue
                except sa.exc.IntegrityError:
                    races += 1
                    if races < WRITE_ATTEMPTS:
                        continue  # another process created this key first: redo against its row
                    raise
            return

    def _redact(
        self, redactor: Redactor, entries: list[SessionStoreEntry], encoded: list[str]
    ) -> None:
        """Replace, in place, each line that holds a secret by its redacted copy.

        The check runs on the encoded text (``holds`` also looks for JSON-escaped forms),
        first on the whole batch at once (one substring search per value over the batch:
        half the cost of one per line), then line by line only when the batch holds
        something. A dirty line is redacted as an object (string values only,
        :data:`LINK_KEYS` untouched) and encoded again. The caller's objects are never
        changed.
        """
        if not redactor.holds("\n".join(encoded)):
            return
        for i, text in enumerate(encoded):
            if redactor.holds(text):
                entries[i] = redactor.redact_value(entries[i], LINK_KEYS)
                encoded[i] = self._encode(entries[i])

    def _write(
        self,
        conn: sa.Connection,
        key: SessionKey,
        entries: list[SessionStoreEntry],
        encoded: list[str],
        uuids: set[str],
        look_first: bool,
    ) -> SessionSummaryEntry | None:
        """One batch, inside one transaction; returns the new summary of a main key.

        Only the lines actually stored feed the summary and ``context_tokens``: folding a
        line that was already there (a batch sent twice) would put an older title or
        branch back over a newer one. ``INSERT ... ON CONFLICT DO NOTHING`` counts what it
        added; when that falls short, :class:`_Replayed` rolls the batch back and it is
        redone with ``look_first``, which looks the stored uuids up before inserting.
        """
        project_key, session_id, subpath = key_of(key)
        ids = {"pk": project_key, "sid": session_id, "sub": subpath}
        # Lock the key's meta row first: concurrent appends to one key (other processes,
        # Postgres) queue here, so the uuid check and the summary fold below are serial.
        stored = conn.execute(LOCK_META, ids).first()
        if look_first and uuids:
            present = set(conn.execute(PRESENT, {**ids, "uuids": list(uuids)}).scalars())
            kept = [i for i, e in enumerate(entries) if e.get("uuid") not in present]
            entries, encoded = [entries[i] for i in kept], [encoded[i] for i in kept]
        mtime = self._next_mtime()
        tokens = latest_context_tokens(entries)  # type: ignore[arg-type]
        if stored is None:
            conn.execute(INSERT_META, {**ids, "mtime": mtime, "tokens": tokens})
        else:
            mtime = max(mtime, int(stored[0]) + 1)
            conn.execute(UPDATE_META, {**ids, "mtime": mtime, "tokens": tokens})
        if entries:
            rows = [
                (
                    project_key,
                    session_id,
                    subpath,
                    e.get("uuid") if isinstance(e.get("uuid"), str) else None,
                    text,
                )
                for e, text in zip(entries, encoded, strict=True)
            ]
            added = conn.exec_driver_sql(self.insert_sql, rows).rowcount
            if added != len(rows) and not look_first:
                raise _Replayed
        if subpath:  # subagent transcripts never feed the main session's summary
            return None
        return self._fold(conn, key, entries, mtime, None if stored is None else int(stored[0]))

    def _fold(
        self,
        conn: sa.Connection,
        key: SessionKey,
        entries: list[SessionStoreEntry],
        mtime: int,
        stored_mtime: int | None,
    ) -> SessionSummaryEntry:
        ids = {"pk": key["project_key"], "sid": key["session_id"]}
        prev = self._summaries.get((key["project_key"], key["session_id"]))
        if prev is None or stored_mtime is None or prev["mtime"] != stored_mtime:
            # Someone else wrote since this process last did (or nobody has yet): read it.
            row = conn.execute(SUMMARY, ids).first()
            prev = (
                None
                if row is None
                else {"session_id": key["session_id"], "mtime": int(row[0]), "data": row[1]}
            )
        folded = fold_session_summary(prev, key, entries)
        folded["mtime"] = mtime
        statement = INSERT_SUMMARY if prev is None else UPDATE_SUMMARY
        conn.execute(statement, {**ids, "mtime": mtime, "data": folded["data"]})
        return folded

    def _load(
        self, key: SessionKey, share: RepeatedStrings | None = None
    ) -> list[SessionStoreEntry] | None:
        """Read the transcript as JSON text and parse it a few rows at a time.

        One parse per ``PARSE_CHARS`` of rows (joined into an array) instead of one per
        row: a call per line cost more than its parse, and the raw text of only one
        fetched chunk is held at a time. SQLite hands the rows over as UTF-8 bytes, which
        the parser reads as they are (text would be decoded and encoded again).
        ``share``: the walk each parsed part goes through (a subclass's, doing more on
        the same walk; by default a new :class:`RepeatedStrings`).
        """
        ids = dict(zip(("pk", "sid", "sub"), key_of(key), strict=True))
        loaded: list[SessionStoreEntry] = []
        share = RepeatedStrings() if share is None else share
        chunks_of: Iterator[list[bytes] | None] | Iterator[list[str] | None] = (
            self._sqlite_texts(ids) if self._sqlite else self._server_texts(ids)
        )
        with (
            self._errors(),
            contextlib.closing(cast(Generator[Any, None, None], chunks_of)) as chunks,
        ):
            found = False
            for texts in chunks:
                if texts is None:  # no meta row: no such session
                    return None
                found = True
                if not texts:
                    continue
                start = size = 0
                for end, row in enumerate(texts, 1):
                    size += len(row)
                    if size >= PARSE_CHARS or end == len(texts):
                        lines = self._loads(_array(texts[start:end]))
                        if size < COMPACT_BELOW * (end - start):
                            compact_lines(lines)
                        loaded.extend(share(lines))
                        start = end
                        size = 0
                texts.clear()
        return loaded if found else None

    def _sqlite_texts(self, ids: dict[str, str]) -> Iterator[list[bytes] | None]:
        """The stored lines' JSON text straight from the driver, ``LOAD_CHARS``
        characters or ``LOAD_CHUNK`` rows at a time, after one ``[]`` (the session
        exists) or ``None`` (it does not). A raw pooled connection, not a SQLAlchemy
        one: for a short transcript the Connection's checkout, autobegin and execution
        context cost more than reading and parsing it (a load's fixed cost)."""
        raw = self._engine.raw_connection()
        try:
            cursor = raw.cursor()
            try:
                key = (ids["pk"], ids["sid"], ids["sub"])
                cursor.execute(_SQLITE_META, key)
                if cursor.fetchone() is None:
                    yield None
                    return
                yield []
                cursor.execute(_SQLITE_LOAD, key)
                batch: list[bytes] = []
                size = 0
                while rows := cursor.fetchmany(64):
                    for (text,) in rows:
                        batch.append(text)
                        size += len(text)
                    if size >= LOAD_CHARS or len(batch) >= LOAD_CHUNK:
                        yield batch
                        batch, size = [], 0
                if batch:
                    yield batch
            finally:
                cursor.close()
        finally:
            raw.close()  # back to the pool

    def _server_texts(self, ids: dict[str, str]) -> Iterator[list[str] | None]:
        """The same through SQLAlchemy, whose ``yield_per`` streams from a server-side
        cursor instead of buffering the whole transcript."""
        with self._engine.connect() as conn:
            if conn.execute(META, ids).first() is None:
                yield None
                return
            yield []
            result = conn.execution_options(yield_per=LOAD_CHUNK).execute(self._entry_text, ids)
            for rows in result.partitions():
                yield [text for (text,) in rows]

    def _delete(self, key: SessionKey) -> None:
        project_key, session_id, subpath = key_of(key)
        with (
            self._errors(),
            self._engine.connect().execution_options(**WRITE) as conn,
            conn.begin(),
        ):
            if subpath:
                for table in (entries_t, meta_t, marks_t):
                    conn.execute(table.delete().where(*key_filter(table, key)))
                return
            for table in (entries_t, meta_t, summaries_t, marks_t):
                conn.execute(
                    table.delete().where(
                        table.c.project_key == project_key, table.c.session_id == session_id
                    )
                )
        self._summaries.pop((project_key, session_id), None)


class _Replayed(Exception):
    """Some lines of the batch were stored already (the insert skipped them)."""


#: Execution options of an append: SQLite's write lock at BEGIN, and the number of rows
#: an ``executemany`` inserted (drivers report it only when asked).
_APPEND = {**WRITE, "preserve_rowcount": True}
