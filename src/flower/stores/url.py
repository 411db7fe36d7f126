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


def unknown_scheme(target: str) -> StoreError:
    return StoreError(
        f"unknown session store URL {display(target)!r} (scheme {scheme_of(target)!r}): "
        "use a file path, sqlite:///path/to/sessions.db or postgresql+psycopg://user@host/db "
        "in FLOWER_STORE_URL, or install a flower plugin that serves this scheme"
    )
