"""Engines for the session store, set up for many writers and one-line errors.

SQLite is opened in WAL mode with a busy timeout, and every write transaction starts
with ``BEGIN IMMEDIATE``: writers from several processes queue on the file lock instead
of failing with "database is locked" halfway through a read-then-write. Reads start a
deferred transaction, so a load sees one consistent snapshot while others write.
"""

from __future__ import annotations

import json
import re
from functools import partial
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine

from flower.stores.errors import StoreError
from flower.stores.url import display, is_postgres, sqlite_path

#: Milliseconds a SQLite writer waits for another process's transaction to finish.
BUSY_TIMEOUT_MS = 60_000

#: Execution option that makes a SQLite transaction take the write lock at BEGIN.
WRITE = {"flower_write": True}

_utf8_dumps = partial(json.dumps, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_ascii_dumps = partial(json.dumps, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
_SURROGATE = re.compile("[\ud800-\udfff]")
#: JSON's own types only: a datetime or a dataclass is refused as the standard library
#: refuses it, not quietly turned into a string.
_STRICT = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_NON_STR_KEYS
)


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def _fast_dumps(value: Any) -> str | None:
    """orjson's compact UTF-8, or ``None`` when it cannot say it (half a surrogate pair,
    an integer beyond 64 bits, a type JSON has no word for)."""
    try:
        return orjson.dumps(value, option=_STRICT).decode("utf-8")
    except orjson.JSONEncodeError:
        return None


def dumps(value: Any) -> str:
    """Compact UTF-8 JSON, encoded by orjson (the store's append is mostly encoding:
    about seven times faster than the standard library here).

    NaN and Infinity are written as ``null``, as JavaScript's ``JSON.stringify`` writes
    them: the CLI that produced the transcript cannot produce either, and a batch is
    never refused for one. A string may hold half a surrogate pair (valid JSON as
    ``\\ud83d``; the CLI's strings are UTF-16, and text cut at a length can split an
    emoji). That is not UTF-8, so such a value, and anything else orjson cannot encode,
    goes to the standard library: ASCII escapes that load back to the same string, or
    the ``TypeError``/``ValueError`` that names what is not JSON.
    """
    text = _fast_dumps(value)
    if text is not None:
        return text
    text = _utf8_dumps(value)
    return _ascii_dumps(value) if _has_surrogate(text) else text


#: What Postgres JSONB cannot hold: U+0000 (a tool's output may contain it) and half a
#: surrogate pair. On Postgres they are stored as ``_ESC + "0"`` and ``_ESC + "s" + four
#: hex digits`` (``_ESC`` itself doubled), and restored on load.
_ESC = "\ue000"
_ESCAPED = re.compile("\ue000(\ue000|0|s[0-9a-f]{4})")


def _map_strings(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(k): _map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, change) for v in value]
    return value


def _escape(text: str) -> str:
    text = text.replace(_ESC, _ESC + _ESC).replace("\x00", _ESC + "0")
    return _SURROGATE.sub(lambda m: f"{_ESC}s{ord(m.group()):04x}", text)


def _unescape_one(match: re.Match[str]) -> str:
    code = match.group(1)
    if code == "0":
        return "\x00"
    return _ESC if code == _ESC else chr(int(code[1:], 16))


def _unescape(text: str) -> str:
    return _ESCAPED.sub(_unescape_one, text)


def loads(text: str | bytes) -> Any:
    """The value of the JSON ``text``, exactly as :func:`json.loads` reads it, parsed by
    orjson where that reads the same (a load's parse in about half the CPU time, for
    texts of a few dozen kilobytes).

    orjson reads an integer past 64 bits as a float, silently, where the standard library
    keeps it exact, and refuses what the standard library reads (half a surrogate pair,
    NaN, the infinities). So orjson's value counts only if orjson writes it back as the
    very same text: its writing is one text per value, and the text of a float orjson
    made of a long integer has an exponent, so a text it writes back is read the same by
    either parser. The store writes its rows with orjson (``dumps``), so they come back
    as written; any other text (a row the standard library wrote, an older flower's)
    goes to the standard library, which also names what is not JSON. Writing back costs
    a third of the parse; a scan for long runs of digits cost as much at 2.7 KB lines and
    half again at 8 KB.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(text)
    return value if orjson.dumps(value) == data else json.loads(text)


#: orjson sizes an object's dict for its key count up front, which past eight keys takes
#: more room than a dict grown key by key (352 bytes for nine keys, not 272; 632 for
#: eleven, not 464): a transcript line has nine to twelve, a tenth of a 1 KB line.
_PRESIZED_KEYS = 8


def compact_lines(lines: list[Any]) -> list[Any]:
    """``lines`` (parsed by :func:`loads`, in place) with each line's dict rebuilt key by
    key where that is smaller (the same keys, order and values; nested dicts have fewer
    keys and stay)."""
    for n, line in enumerate(lines):
        if line.__class__ is dict and len(line) > _PRESIZED_KEYS:
            lines[n] = dict(line.items())
    return lines


def pg_dumps(value: Any) -> str:
    """:func:`dumps`, with what JSONB refuses escaped (only when there is any)."""
    text = _fast_dumps(value)
    if text is None:  # half a surrogate pair, or not JSON at all (raised below)
        text = _utf8_dumps(value)
    if "\\u0000" in text or _ESC in text or _has_surrogate(text):
        escaped = _map_strings(value, _escape)
        text = _fast_dumps(escaped) or _utf8_dumps(escaped)
    return text


def pg_loads(text: str | bytes) -> Any:
    value = loads(text)
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    return _map_strings(value, _unescape) if _ESC in text else value


def make_engine(url: str) -> Engine:
    """An engine for ``url``; for SQLite the parent folder is created first."""
    kwargs: dict[str, Any] = {"json_serializer": dumps, "json_deserializer": json.loads}
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
    elif is_postgres(url):
        kwargs["pool_pre_ping"] = True
        kwargs["connect_args"] = {"connect_timeout": 10}
        kwargs.update(json_serializer=pg_dumps, json_deserializer=pg_loads)
    try:
        engine = sa.create_engine(url, **kwargs)
    except sa.exc.NoSuchModuleError:
        from flower.stores.url import unknown_scheme

        raise unknown_scheme(url) from None
    except ModuleNotFoundError as exc:
        raise missing_driver(url, exc) from None
    except sa.exc.ArgumentError as exc:
        raise StoreError(f"bad session store URL {display(url)!r}: {first_line(exc)}") from None
    if engine.dialect.name == "sqlite":
        _tune_sqlite(engine)
    return engine


#: How much of a SQLite store's file reads map rather than copy (``PRAGMA mmap_size``).
MMAP_BYTES = 1 << 30


def _tune_sqlite(engine: Engine) -> None:
    on_disk = sqlite_path(str(engine.url)) is not None

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions are begun below, explicitly
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if on_disk:
                cursor.execute("PRAGMA journal_mode=WAL")
                # reads map the file instead of copying each page through the page cache:
                # a load reads the whole transcript, and the copies were a quarter of
                # parsing it (issue 23); address space, not memory
                cursor.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: sa.Connection) -> None:
        write = connection.get_execution_options().get("flower_write")
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def missing_driver(url: str, exc: BaseException) -> StoreError:
    if is_postgres(url):
        return StoreError(
            f"the Postgres driver is not installed ({first_line(exc)}): "
            "run pip install 'flower[postgres]'"
        )
    return StoreError(f"the database driver for {display(url)!r} is missing: {first_line(exc)}")


def first_line(exc: BaseException) -> str:
    """The first meaningful line of a driver error, without SQLAlchemy's background links."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("(Background on this error"):
            return line
    return type(exc).__name__


def describe(exc: BaseException, url: str) -> StoreError:
    """Turn a driver error into a one-line :class:`StoreError` naming the database."""
    where = display(url)
    reason = first_line(exc)
    lowered = reason.lower()
    path = sqlite_path(url)
    if path is not None:
        if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
            return StoreError(
                f"{path} is not a usable SQLite database ({reason}): "
                "move it aside or choose another run_dir"
            )
        if "unable to open" in lowered or "readonly" in lowered or "read-only" in lowered:
            return StoreError(
                f"cannot write the session store {path} ({reason}): check permissions"
            )
        return StoreError(f"session store {path} failed: {reason}")
    if is_postgres(url) and isinstance(exc, sa.exc.OperationalError):
        return StoreError(
            f"cannot reach the session database {where} ({reason}): "
            "is the server running and is FLOWER_STORE_URL right?"
        )
    return StoreError(f"session database {where} failed: {reason}")
