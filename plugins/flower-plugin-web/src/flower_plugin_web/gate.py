"""The page's connections must never cost the run its file descriptors.

The page's server shares the process with the run: its descriptors, its memory, its
terminal. Plain uvicorn keeps a silent connection forever and accepts as many as come,
so 1,100 idle sockets once exhausted the 1,024 descriptors of a run, which then died
writing its brief. Here:

- A *budget* of connections, well under the process's limit (a quarter of it, at most
  ``Limits.connections``): the listening socket's ``accept()`` is wrapped, so a
  connection beyond the budget is closed the moment it is accepted and never reaches
  the event loop; asyncio accepts at most ``BACKLOG`` at a time.
- When the budget is full, a newcomer evicts the oldest connection that has not yet
  shown the token, rather than being refused: a flood of idle sockets then only
  displaces itself, and the owner, whose request arrives at once, gets through.
  Connections that showed the token (the owner's pages) are never evicted.
- A connection that has not shown the token within ``UNTRUSTED_SECONDS`` is closed
  (silent and slow-header connections); uvicorn closes idle keep-alive connections
  after ``timeout_keep_alive``; a page that stops reading its stream is dropped
  (``stream.py``).
- At start the soft descriptor limit is raised to the hard one, so the run itself has
  the most room the system allows.
- What uvicorn and asyncio would print about broken clients is rate-limited to a line
  now and then, never a traceback per connection on the run's terminal.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import time
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.utils import get_remote_addr

#: Connections asyncio accepts in one go (and the listen queue's length).
BACKLOG = 32
#: Seconds a connection may stay without having shown the token.
UNTRUSTED_SECONDS = 10.0


def raise_fd_limit() -> int:
    """Raise the soft descriptor limit to the hard one; returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def budget_for(most: int) -> int:
    """Connections the page may hold: a quarter of the descriptor limit, at most ``most``."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return most
    return max(8, min(most, soft // 4))


class Gate:
    """Counts the page's connections and decides who stays; lives on the server's loop
    (``accept()`` and the protocols run there), so it needs no lock."""

    def __init__(self, budget: int, untrusted_seconds: float = UNTRUSTED_SECONDS) -> None:
        self.budget = budget
        self.untrusted_seconds = untrusted_seconds
        self.open = 0  # accepted and not yet lost
        self.conns: dict[Any, GatedProtocol] = {}  # by peer address, oldest first
        self.trusted: set[Any] = set()
        self.evicting: set[Any] = set()
        self.refused = 0
        self.evicted = 0

    def admit(self) -> bool:
        """A connection was just accepted: may it stay? Evicts the oldest connection that
        has not shown the token when the budget is full."""
        if self.open - len(self.evicting) >= self.budget:
            keep = self.trusted | self.evicting
            victim = next((p for c, p in self.conns.items() if c not in keep), None)
            if victim is None or self.open >= self.budget + BACKLOG:
                self.refused += 1
                return False
            self.evicting.add(victim.client)
            self.evicted += 1
            victim.transport.abort()
        self.open += 1
        return True

    def made(self, proto: GatedProtocol) -> None:
        self.conns[proto.client] = proto

    def lost(self, proto: GatedProtocol) -> None:
        self.open -= 1
        if self.conns.get(proto.client) is proto:
            del self.conns[proto.client]
        self.trusted.discard(proto.client)
        self.evicting.discard(proto.client)

    def trust(self, scope: dict[str, Any]) -> None:
        """The connection behind ``scope`` showed the token."""
        client = scope.get("client")
        if client is not None and tuple(client) in self.conns:
            self.trusted.add(tuple(client))

    def abort(self, scope: dict[str, Any]) -> bool:
        """Close the connection behind ``scope`` at once (a page that stopped reading)."""
        client = scope.get("client")
        proto = self.conns.get(tuple(client)) if client is not None else None
        if proto is None:
            return False
        proto.transport.abort()
        return True


class GatedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, counted by the gate and timed out until trusted."""

    gate: Gate

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.client = get_remote_addr(transport)
        self.gate.made(self)
        self._deadline = self.loop.call_later(self.gate.untrusted_seconds, self._expire)

    def _expire(self) -> None:
        if self.client not in self.gate.trusted and not self.transport.is_closing():
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadline.cancel()
        self.gate.lost(self)
        super().connection_lost(exc)


def protocol_for(gate: Gate) -> type[GatedProtocol]:
    """The protocol class uvicorn instantiates, bound to ``gate``."""
    return type("GatedProtocol", (GatedProtocol,), {"gate": gate})


class GatedSocket(socket.socket):
    """The listening socket: ``accept()`` asks the gate, and a connection it turns away
    is closed right here, before asyncio ever builds a transport for it."""

    gate: Gate

    def accept(self) -> tuple[socket.socket, Any]:
        while True:
            conn, address = super().accept()  # BlockingIOError when none is waiting
            if self.gate.admit():
                return conn, address
            conn.close()


def listening(host: str, port: int, gate: Gate) -> GatedSocket:
    """A bound socket for ``host:port`` whose accepts go through ``gate``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = GatedSocket(family, socket.SOCK_STREAM)
    sock.gate = gate
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


class Hush(logging.Filter):
    """At most one record per ``every`` seconds for each message, and no traceback:
    a flood of broken clients must not flood the run's terminal."""

    def __init__(self, every: float = 60.0) -> None:
        super().__init__()
        self.every = every
        self.last: dict[str, float] = {}
        self.hushed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        key = str(record.msg)[:80]
        now = time.monotonic()
        if now - self.last.get(key, -self.every) < self.every:
            self.hushed += 1
            return False
        self.last[key] = now
        if len(self.last) > 256:
            self.last.clear()
        record.exc_info = None
        record.exc_text = None
        return True


def quiet_loop(loop: asyncio.AbstractEventLoop, hush: Hush) -> None:
    """asyncio's complaints about the page's sockets (an ``accept()`` out of descriptors,
    a reset) go through ``hush`` too, as one short line."""
    log = logging.getLogger("flower_plugin_web")

    def handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        text = str(context.get("message", "error"))
        if exc is not None:
            text += f" ({type(exc).__name__}: {exc})"
        record = log.makeRecord(log.name, logging.WARNING, __file__, 0, text, (), None)
        if hush.filter(record):
            log.handle(record)

    loop.set_exception_handler(handler)
