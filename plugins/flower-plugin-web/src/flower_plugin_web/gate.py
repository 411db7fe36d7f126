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
  shown the token (one that never sent a byte first), rather than being refused: a
  flood of idle sockets then only displaces itself, and the owner, whose request
  arrives at once, gets through.
  Connections that showed the token (the owner's pages) are never evicted.
- What a newcomer has already sent is looked at (``MSG_PEEK``) the moment it is
  accepted: a whole request head with the token is the owner's and trusted at once; a
  whole head without it (the page's shell), or nothing yet, may evict even a young
  connection still sending its head. Only a newcomer that is itself a head half sent
  is closed when every other connection is young. A flood of connections that each
  send a request's first line and stall (hundreds a second, from another local user)
  once filled the budget with connections too young to evict and turned away most of
  the owner's requests; now it only displaces itself.
- A connection that has not shown the token within ``UNTRUSTED_SECONDS`` is closed
  (silent and slow-header connections); uvicorn closes idle keep-alive connections
  after ``timeout_keep_alive``; a page that stops reading its stream is dropped
  (``stream.py``).
- At start the soft descriptor limit is raised toward the hard one (to 8,192 at most),
  so the run itself has room to spare.
"""

from __future__ import annotations

import asyncio
import fcntl
import resource
import socket
import struct
import termios
import time
from collections.abc import Callable, MutableMapping
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.utils import get_remote_addr

from flower_plugin_web.guard import HEAD_BYTES  # what is peeked at accept, at most

#: Connections asyncio accepts in one go, and the kernel's queue of those not accepted
#: yet: a longer queue only makes the owner's connection wait behind a flood's (measured:
#: 1,024 took a reconnecting flood's owner from 50 to 400 ms).
BACKLOG = 32
#: Seconds a connection may stay without having shown the token.
UNTRUSTED_SECONDS = 10.0
#: Seconds a request head may take to arrive before its connection may be evicted.
PARTIAL_SECONDS = 1.0
#: Seconds a connection accepted before its first byte counts as young, not silent
#: (the owner's request follows its connection by microseconds; an idle flood's never).
SILENT_GRACE = 0.05
#: The soft descriptor limit ``flower web`` raises the process's to, if the hard allows.
FD_TARGET = 8192


def raise_fd_limit(most: int = FD_TARGET) -> int:
    """Raise the soft descriptor limit toward the hard one, to ``most`` at most (the
    agents' commands inherit it, and some old tools walk every possible descriptor);
    returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = most if hard == resource.RLIM_INFINITY else min(hard, most)
    if target > soft:
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
    (``accept()`` and the protocols run there), so it needs no lock.

    Who goes first when the budget is full, oldest first within each kind:

    1. a connection that never sent a byte in ``SILENT_GRACE`` (nothing waits in the
       kernel for it either);
    2. one whose request, without the token, was answered in full (the page's shell,
       or a 401/421) and now idles;
    3. one still sending its request head, or still being answered, after
       ``PARTIAL_SECONDS`` (slow headers, a body that never comes);
    4. for a newcomer that is not itself a half-sent head (see :func:`arrival`), one
       still sending its head however young: the owner's request comes whole with its
       connection, a stalling flood's never does.

    A connection that showed the token is never evicted, nor for its first
    ``PARTIAL_SECONDS`` one whose answer is being written (``serving``, or bytes of it
    still buffered): a page opened during a flood once lost its shell that way, reset
    between its request and the answer, and Chromium showed its own error page.

    When nobody may go, a
    newcomer waits in the kernel's queue for the loop's next turn (the evicted are
    still closing) or, when every slot is the token's (or a young head and the
    newcomer is one too), is closed at once.
    """

    def __init__(self, budget: int, untrusted_seconds: float = UNTRUSTED_SECONDS) -> None:
        self.budget = budget
        self.untrusted_seconds = untrusted_seconds
        self.open = 0  # accepted and not yet lost (the descriptors the page holds)
        self.conns: dict[Any, GatedProtocol] = {}  # by peer address, oldest first
        self.evicting = 0  # aborted, closing on the loop's next turn
        self.heard: dict[Any, str] = {}  # peer -> what had arrived at accept (arrival())
        self.vouch: Callable[[list[tuple[bytes, bytes]]], bool] = lambda _: False
        self.refused = 0
        self.evicted = 0

    @property
    def trusted(self) -> set[Any]:
        return {client for client, proto in self.conns.items() if proto.trusted}

    def room(self) -> str:
        """Whether a connection waiting to be accepted may come in now, decided before
        it is taken from the kernel: ``"free"``, ``"evict"`` (someone must go),
        ``"later"`` (leave it queued for the loop's next turn) or ``"full"`` (close it)."""
        if self.open >= self.budget + 2 * BACKLOG:  # a safety net, never the rule
            return "later"
        if self.open - self.evicting < self.budget:
            return "free"
        if any(not p.trusted and not p.evicted for p in self.conns.values()):
            return "evict"  # someone may go: which, admit() decides once it sees the newcomer
        settling = self.evicting or self.open > len(self.conns)  # closing, or not set up
        return "later" if settling else "full"

    def admit(self, room: str, kind: str = "silent") -> bool:
        """A connection was just accepted with ``room``, having sent ``kind`` so far
        (:func:`arrival`): count it, evicting one if needed; ``False``: it must be closed."""
        if room == "evict":
            victim = self._victim(eager=kind != "partial")
            if victim is None:
                self.refused += 1
                return False
            victim.evict()
            self.evicting += 1
            self.evicted += 1
        elif room != "free":
            self.refused += 1
            return False
        self.open += 1
        return True

    def _victim(self, eager: bool = False) -> GatedProtocol | None:
        """Who goes, in the order of the class's docstring; ``eager``: a young head too."""
        now = time.monotonic()
        answered = partial = young = None
        for proto in self.conns.values():
            if proto.trusted or proto.evicted:
                continue
            if proto.state == "silent":
                sock = proto.transport.get_extra_info("socket")
                if sock is None or not waiting(sock.fileno()):
                    if now - proto.since > SILENT_GRACE:
                        return proto
                    young = young or proto  # just accepted: its request may be on its way
                    continue
                kind = peeked(sock, self.vouch)  # its request arrived, not yet read
                if kind == "vouched":
                    continue  # the owner's, about to be trusted
                proto.state = "serving" if kind == "head" else "partial"
                proto.since = now
            writing = proto.state == "serving" or proto.transport.get_write_buffer_size() > 0
            if proto.state == "answered" and not writing:
                answered = answered or proto
            elif now - proto.since > PARTIAL_SECONDS:
                partial = partial or proto
            elif not writing:  # being answered: let the answer go out first
                young = young or proto
        return answered or partial or (young if eager else None)

    def made(self, proto: GatedProtocol) -> None:
        self.conns[proto.client] = proto
        kind = self.heard.pop(proto.client, None)
        if kind is not None:
            proto.state = "partial"  # its request is arriving
            proto.trusted = kind == "vouched"  # a whole head with the token: the owner's

    def lost(self, proto: GatedProtocol) -> None:
        self.open -= 1
        if proto.evicted:
            self.evicting -= 1
        if self.conns.get(proto.client) is proto:
            del self.conns[proto.client]

    def trust(self, scope: MutableMapping[str, Any]) -> None:
        """The connection behind ``scope`` showed the token."""
        client = scope.get("client")
        proto = self.conns.get(tuple(client)) if client is not None else None
        if proto is not None:
            proto.trusted = True

    def abort(self, scope: MutableMapping[str, Any]) -> bool:
        """Close the connection behind ``scope`` at once (a page that stopped reading)."""
        client = scope.get("client")
        proto = self.conns.get(tuple(client)) if client is not None else None
        if proto is None:
            return False
        proto.transport.abort()
        return True


class GatedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, counted by the gate and timed out until trusted.

    ``state``: ``silent`` (no byte yet), ``partial`` (a request head arriving),
    ``serving`` (a request without the token read, its answer not yet written whole),
    ``answered`` (that answer written; the connection idles). ``trusted``: a request carried
    the token, checked the moment its head is parsed (``gate.vouch``) and again by
    the app.
    """

    gate: Gate

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.client = get_remote_addr(transport)
        self.state = "silent"
        self.since = time.monotonic()
        self.trusted = False
        self.evicted = False
        self.gate.made(self)
        self._deadline = self.loop.call_later(self.gate.untrusted_seconds, self._expire)

    def data_received(self, data: bytes) -> None:
        if self.state == "silent":
            self.state, self.since = "partial", time.monotonic()
        self.headers = None  # type: ignore[assignment]
        super().data_received(data)
        if self.headers is not None and not self.trusted:  # a request head was parsed
            self.trusted = self.gate.vouch(self.headers)
            if not self.trusted:
                self.state, self.since = "serving", time.monotonic()

    def on_response_complete(self) -> None:
        if self.state == "serving":
            self.state = "answered"
        super().on_response_complete()

    def evict(self) -> None:
        self.evicted = True
        self.transport.abort()

    def _expire(self) -> None:
        if not self.trusted and not self.transport.is_closing():
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadline.cancel()
        self.gate.lost(self)
        super().connection_lost(exc)


def protocol_for(gate: Gate) -> type[GatedProtocol]:
    """The protocol class uvicorn instantiates, bound to ``gate``."""
    return type("GatedProtocol", (GatedProtocol,), {"gate": gate})


def waiting(fd: int) -> bool:
    """Whether bytes wait to be read on socket ``fd`` (the kernel's count, FIONREAD)."""
    try:
        count = fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0")
    except OSError:
        return False
    return struct.unpack("i", count)[0] > 0


def arrival(conn: socket.socket, vouch: Callable[[list[tuple[bytes, bytes]]], bool]) -> str:
    """What a connection just accepted has sent so far, looked at without taking it
    (``MSG_PEEK``): ``"silent"`` (nothing yet), ``"partial"`` (part of a request head),
    ``"head"`` (a whole head, without the token) or ``"vouched"`` (a whole head with it)."""
    try:
        data = conn.recv(HEAD_BYTES + 4, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:  # BlockingIOError: nothing yet; a reset: it is going anyway
        return "silent"
    if not data:
        return "silent"
    head, end, _ = data.partition(b"\r\n\r\n")
    if not end:
        return "partial"
    raw = []
    for line in head.split(b"\r\n")[1:]:
        name, colon, value = line.partition(b":")
        if colon:
            raw.append((name.strip().lower(), value.strip()))
    return "vouched" if vouch(raw) else "head"


def peeked(sock: Any, vouch: Callable[[list[tuple[bytes, bytes]]], bool]) -> str:
    """:func:`arrival` for a socket asyncio holds (its wrapper has no ``recv``: a duplicate
    descriptor is looked through, closed at once; ``"partial"`` when none is to be had)."""
    try:
        with sock.dup() as peer:
            return arrival(peer, vouch)
    except OSError:
        return "partial"


class GatedSocket(socket.socket):
    """The listening socket: ``accept()`` asks the gate, and a connection it turns away
    is closed right here, before asyncio ever builds a transport for it. What a
    connection has already sent is noted (:func:`arrival`): a browser sends its whole
    request right after connecting, an idle flood nothing, a stalling flood half a head."""

    gate: Gate

    def accept(self) -> tuple[socket.socket, Any]:
        while True:
            room = self.gate.room()
            if room == "later":  # asyncio takes this as "none waiting": next turn
                raise BlockingIOError
            conn, address = super().accept()  # BlockingIOError when none is waiting
            kind = arrival(conn, self.gate.vouch)
            if self.gate.admit(room, kind):
                if kind != "silent":
                    self.gate.heard[tuple(address[:2])] = kind
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
