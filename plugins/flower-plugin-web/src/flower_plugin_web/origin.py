"""Where the page listens: unless told otherwise, an origin nobody can have served before.

A browser keeps what pages leave behind per origin (scheme, host and port): service
workers, cached responses, storage. Any local user may listen on a loopback port while
no run holds it, and if the owner's browser loads anything from it then (an old tab
reloading, a bookmark), what that user left runs the next time the browser opens that
origin, before the page's own script: a service worker sees the navigation's URL, the
fragment and its token included, and every request's headers; a cached page reads the
fragment. Nothing the real page does can undo that, since its first load is not its own.

So by default every run gets a new origin: a random address of 127.0.0.0/8 (on Linux
every one of them is this machine's loopback; 127.0.x.x, where 127.0.0.1 and the
resolvers' addresses live, is left out) on a port the kernel picks. That is 16 million
addresses times thousands of ports: no one can have had the browser load, let alone
poison, the one a run gets. Where only 127.0.0.1 can be bound (macOS), the port alone
changes. An explicit ``--host``/``--port`` is honoured as given (an SSH forward needs a
known one).

The URL printed names the address bound, never a name: ``localhost`` is 127.0.0.1 *and*
::1, and a browser may try either first (Chromium tries ::1), where another user may be
listening; so ``--host localhost`` is refused, and any other name is printed as the
address it resolved to.
"""

from __future__ import annotations

import errno
import secrets

from flower_plugin_web.gate import Gate, GatedSocket, listening
from flower_plugin_web.guard import wildcard

AMBIGUOUS = (
    "--host localhost names two addresses (127.0.0.1 and ::1) and a browser may try the"
    " other one, where another user could listen: give --host 127.0.0.1 or --host ::1,"
    " or leave --host out (a fresh loopback address for every run)"
)
#: Where a fresh address cannot be bound (only 127.0.0.1 is loopback there).
FALLBACK = "127.0.0.1"
#: The default ``--host``, in what ``--help`` and an error say.
FRESH = "a fresh loopback address"


class Ambiguous(ValueError):
    """A ``--host`` that names more than one address."""


def fresh_loopback() -> str:
    """A random address of 127.0.0.0/8 outside 127.0.x.x (127.0.0.1, 127.0.0.53, 127.0.1.1)."""
    octets = (secrets.randbelow(254) + 1, secrets.randbelow(256), secrets.randbelow(254) + 1)
    return "127.{}.{}.{}".format(*octets)


def listen(host: str | None, port: int, gate: Gate) -> tuple[GatedSocket, str]:
    """The bound socket for ``host`` (``None``: a fresh loopback address) and the address
    to print: the one bound (``[::1]`` bracketed), or ``""`` for a wildcard bind."""
    if host is not None and host.strip().lower().rstrip(".") == "localhost":
        raise Ambiguous(AMBIGUOUS)
    if host is not None:
        sock = listening(host, port, gate)
    else:
        sock = _fresh(port, gate)
    if host is not None and wildcard(host):
        return sock, ""
    address = str(sock.getsockname()[0])
    return sock, f"[{address}]" if ":" in address else address


def _fresh(port: int, gate: Gate, tries: int = 8) -> GatedSocket:
    for _ in range(tries):
        try:
            return listening(fresh_loopback(), port, gate)
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL:  # not Linux: 127.0.0.1 only
                return listening(FALLBACK, port, gate)
            if exc.errno != errno.EADDRINUSE:
                raise
    return listening(fresh_loopback(), port, gate)  # the last try's error is the one said
