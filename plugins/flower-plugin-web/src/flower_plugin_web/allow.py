"""What ``--allow-host`` accepts: another name the page answers to, and from which origin.

Three forms, each checked before anything starts (a bad one is one line, exit 2):

- ``NAME``: the page's port under another name (``proxy.lan``: ``http://proxy.lan:PORT``);
- ``NAME:PORT``: another port too (an SSH forward from another local port,
  ``localhost:9000``);
- ``http://NAME[:PORT]`` or ``https://NAME[:PORT]``: the origin a proxy in front serves
  the page at, as the browser's address bar shows it. A TLS proxy is the one case where
  the browser's origin is not ``http``: its pages send ``Origin: https://NAME`` and
  ``Host: NAME`` (port 443, unsaid), which only an ``https://`` entry admits. (The
  README once said "``--allow-host`` its name": that gave 403 for the origin and 421 for
  the port.)

A name is letters, digits, dots and dashes, or an IP address; nothing else is taken for
one (``http://x`` was once read as the name ``http``).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
_NAME = re.compile(
    r"(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?"
)
USAGE = "give NAME, NAME:PORT or the proxy's origin (https://NAME[:PORT]), with no path or user"


@dataclass(frozen=True)
class Allowed:
    """One ``--allow-host``: ``scheme`` is ``None`` for a bare ``NAME[:PORT]`` (plain
    http), ``port`` ``None`` for "the page's own port"."""

    host: str
    port: int | None = None
    scheme: str | None = None


def parse_allowed(text: str) -> Allowed:
    """``text`` as an :class:`Allowed`; ``ValueError`` with the one line to show."""
    given = text.strip()
    scheme = None
    if "://" in given:
        scheme = given.split("://", 1)[0].lower()
        if scheme not in DEFAULT_PORTS:
            raise ValueError(f"{text!r}: only http:// or https:// origins; {USAGE}")
        parts = urlsplit(given)
        rest_ok = parts.path in ("", "/") and not parts.query and not parts.fragment
    else:
        parts = urlsplit("//" + given)
        rest_ok = not parts.path and not parts.query and not parts.fragment
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{text!r}: the port must be a number from 1 to 65535") from None
    host = (parts.hostname or "").lower()
    if not rest_ok or "@" in parts.netloc or not _is_name(host) or port == 0:
        raise ValueError(f"{text!r} is not a host name; {USAGE}")
    if scheme is not None and port is None:
        port = DEFAULT_PORTS[scheme]
    return Allowed(host=host, port=port, scheme=scheme)


def _is_name(host: str) -> bool:
    if not host:
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return _NAME.fullmatch(host) is not None
