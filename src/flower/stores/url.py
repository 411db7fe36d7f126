"""Where a session store lives: a path or a SQLAlchemy URL.

Kept free of heavy imports: the command line and the store plugins call it before
they decide whether SQLAlchemy is needed at all.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from flower.stores.errors import StoreError

#: The variable that swaps the storage backend without touching code.
URL_VARIABLE = "FLOWER_STORE_URL"

#: Where ``flower db`` looks when neither an argument nor ``FLOWER_STORE_URL`` is given.
DEFAULT_PATH = Path("runs") / "sessions.db"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_PASSWORD = re.compile(r"^([^:/]+://[^:/@]*):[^@]*@")


def scheme_of(target: str | Path) -> str | None:
    """The URL scheme (``"sqlite"``, ``"postgresql+psycopg"``), or ``None`` for a path."""
    if isinstance(target, Path):
        return None
    found = _SCHEME.match(target)
    return found.group(1).lower() if found else None


def is_sqlite(target: str | Path) -> bool:
    scheme = scheme_of(target)
    return scheme is None or scheme.split("+")[0] == "sqlite"


def is_postgres(target: str | Path) -> bool:
    scheme = scheme_of(target)
    return scheme is not None and scheme.split("+")[0] in ("postgres", "postgresql")


def to_url(target: str | Path) -> str:
    """A SQLAlchemy URL for ``target``: paths become ``sqlite:///<absolute path>``.

    ``postgres://`` and ``postgresql://`` are pointed at psycopg 3, the driver the
    ``postgres`` extra installs (SQLAlchemy's own default would be psycopg2). In a path,
    ``%`` and ``?`` are escaped: SQLAlchemy decodes the one and starts a query at the other.
    """
    scheme = scheme_of(target)
    if scheme is None:
        path = str(Path(target).expanduser().resolve())
        return "sqlite:///" + path.replace("%", "%25").replace("?", "%3F")
    text = str(target)
    if scheme in ("postgres", "postgresql"):
        return "postgresql+psycopg://" + text.split("://", 1)[1]
    return text


def sqlite_path(url: str) -> Path | None:
    """The file behind a ``sqlite:///`` URL, or ``None`` for memory or other databases."""
    if not is_sqlite(url):
        return None
    rest = url.split("://", 1)[1] if "://" in url else url
    rest = rest[1:] if rest.startswith("/") else rest
    rest = unquote(rest.split("?", 1)[0])  # the file SQLAlchemy opens: %xx decoded
    if not rest or rest == ":memory:":
        return None
    return Path(rest)


def display(target: str | Path) -> str:
    """``target`` fit for a message: a path as given, a URL with its password hidden."""
    if scheme_of(target) is None:
        return str(target)
    return _PASSWORD.sub(r"\1:***@", str(target))


def default_target() -> str:
    """``FLOWER_STORE_URL``, else ``./runs/sessions.db`` (what ``flower db`` works on)."""
    return os.environ.get(URL_VARIABLE) or str(DEFAULT_PATH)


def configured_url(url: str | None) -> str | None:
    """The store URL a Runtime asked for: ``url`` if given, else ``FLOWER_STORE_URL``."""
    return url or os.environ.get(URL_VARIABLE) or None


#: What a message offers as a value that works (an absolute SQLite file).
EXAMPLE = "sqlite:////srv/flower/sessions.db"
#: The schemes flower itself serves (``+driver`` suffixes aside).
KNOWN_SCHEMES = ("sqlite", "postgres", "postgresql")


def store_url_problem(value: str, *, plugin_schemes: bool = False) -> str | None:
    """Why ``FLOWER_STORE_URL=value`` cannot be used, in one line naming the variable
    and a value that works; ``None`` when it can (or may: see ``plugin_schemes``).

    Checked before anything is created, because opening a store creates it: a bare word
    (``garbage``) became a SQLite file of that name in whatever folder flower was started
    from, and a path under a missing folder created the folder (``/nonexistent/dir``).
    So a value without a scheme must look like a path (``./sessions.db``, ``/srv/x.db``,
    ``~/x.db``), and a SQLite file's folder must already exist. ``plugin_schemes``: an
    installed plugin may serve schemes flower does not know, so they are left to it.
    """
    value = value.strip()
    if not value:
        return None
    scheme = scheme_of(value)
    shown = display(value)
    if scheme is None and not _looks_like_path(value):
        return (
            f"{URL_VARIABLE}={shown!r} is neither a database URL nor a path to a file:"
            f" use e.g. {URL_VARIABLE}={EXAMPLE} (or ./{value} for a file here)"
        )
    if scheme is not None and scheme.split("+")[0] not in KNOWN_SCHEMES:
        return None if plugin_schemes else str(unknown_scheme(value))
    if not is_sqlite(value):
        return _server_problem(value, shown)
    path = sqlite_path(to_url(value))
    if path is None:  # in memory
        return None
    folder = path.parent
    if path.is_dir():
        return (
            f"{URL_VARIABLE}={shown!r} names the folder {path}, not a database file:"
            f" use e.g. {URL_VARIABLE}=sqlite:///{path / 'sessions.db'}"
        )
    if not folder.is_dir():
        missing = "is not a folder" if folder.exists() else "does not exist"
        return (
            f"{URL_VARIABLE}={shown!r}: {folder} {missing} (flower creates no folder for it):"
            f" create it, or use e.g. {URL_VARIABLE}={EXAMPLE}"
        )
    return None


def _server_problem(value: str, shown: str) -> str | None:
    """A server URL must name its database: ``postgresql://`` alone reached the server's
    default database over the local socket and created flower's tables there. (The
    host may be left out: the local socket is a fine place to meet a server.)"""
    from urllib.parse import urlsplit

    if urlsplit(value).path.lstrip("/"):
        return None
    return (
        f"{URL_VARIABLE}={shown!r} names no database (flower would create its tables in the"
        f" server's default one): name it, e.g. {URL_VARIABLE}=postgresql://user@host/flower"
    )


def _looks_like_path(value: str) -> bool:
    """``./x.db``, ``/srv/x.db``, ``~/x.db``, ``runs/x.db``: not a bare word."""
    return value.startswith("~") or "/" in value or os.sep in value


def unknown_scheme(target: str) -> StoreError:
    return StoreError(
        f"unknown session store URL {display(target)!r} (scheme {scheme_of(target)!r}): "
        "use a file path, sqlite:///path/to/sessions.db or postgresql+psycopg://user@host/db "
        "in FLOWER_STORE_URL, or install a flower plugin that serves this scheme"
    )
