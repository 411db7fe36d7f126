"""Who may talk to the page: the ``Host`` it answers to, the origin a change comes from,
the token, and the headers every response carries.

Why each check exists:

- ``Host``: a page on ``evil.example`` whose name the attacker re-points at 127.0.0.1
  (DNS rebinding) is, to the browser, the same origin as the page's server, so it may
  read every answer. Its requests still say ``Host: evil.example``: the server answers
  only to the names its address goes by (421 otherwise), never to whatever a request
  says it is.
- The token: any local user, and anyone a forwarded port reaches, can connect to a
  loopback port. So a token is always required, loopback included (as Jupyter does).
  The page keeps it for its own tab (``sessionStorage``), never in a cookie: a cookie
  ignores ports, so it would be sent to every other service on the host and two
  ``flower web`` on one host would overwrite each other's.
  The page sends it as a header, which no other site can make a browser send.
- ``Origin``: compared with the names above, never with the request's own ``Host``
  (which an attacker chooses). Every change must carry an allowed ``Origin`` (else
  ``Referer``); any request whose ``Origin`` is foreign is refused.
- Headers: the same on every route, errors included: the CSP allows no inline script,
  no base tag, no form to elsewhere, no framing; nothing is cached; no ``Referer`` ever
  leaves the page.
- A request head over :data:`HEAD_BYTES` is refused (431). uvicorn's ``h11`` limit only
  applies to a head still arriving: one that came whole in a read (64 KB and more) was
  accepted.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from flower_plugin_web.allow import DEFAULT_PORTS, parse_allowed

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HEADER = "x-flower-token"
NO_TOKEN = "this page needs its token: open the URL flower web printed"
WRONG_HOST = "this page answers only to {names}: open the URL flower web printed"
FOREIGN = "cross-origin request refused"
#: Bytes of a request head at most: its line and its headers.
HEAD_BYTES = 16 * 1024
TOO_LARGE = "the request's head is too large ({size} bytes; at most 16 KiB)"
#: Requests that carry no data of the run: the page's shell and its script.
PUBLIC = ("/", "/page.js")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self';"
    " connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
#: On every response, errors included.
HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CSP.encode()),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def loopback(host: str) -> bool:
    """Whether ``host`` is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def wildcard(host: str) -> bool:
    return host.strip("[]") in ("", "0.0.0.0", "::")


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip("[]").split("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        return ip.ipv4_mapped
    return ip


@dataclass(frozen=True)
class Guard:
    """The page's names and token.

    Attributes:
        token: What every request but the page's shell must carry.
        port: The port the page is bound to (a ``Host`` with another port is refused).
        names: Host names and IP addresses (lowercase, no brackets) it answers to.
        local_ips: Also answer to an IP address when it is the one the connection came
            in on (a wildcard bind: the machine's addresses are not known in advance,
            and an address cannot be re-pointed the way a name can).
        hostports: ``name:port`` pairs answered to whatever the bound port (a proxy,
            an SSH forward from another local port).
        origins: ``(scheme, name, port)`` of a proxy in front (``--allow-host
            https://NAME``, ``allow.py``): its ``Host`` (the port unsaid when it is the
            scheme's) and its ``Origin``, https included.
    """

    token: str
    port: int
    names: frozenset[str] = field(default_factory=frozenset)
    local_ips: bool = False
    hostports: frozenset[str] = field(default_factory=frozenset)
    origins: frozenset[tuple[str, str, int]] = field(default_factory=frozenset)

    @classmethod
    def bound(cls, host: str, port: int, token: str, *, extra: Iterable[str] = ()) -> Guard:
        """The guard of a page bound to ``host:port``: the loopback names and the address
        itself always; this machine's names and the connection's own IP address when
        bound elsewhere; plus ``extra`` (``--allow-host``)."""
        names = {"127.0.0.1", "localhost", "::1"}
        hostports, origins = set(), set()
        for allowed in map(parse_allowed, extra):  # ValueError: not a name (allow.py)
            if allowed.scheme is not None and allowed.port is not None:
                origins.add((allowed.scheme, allowed.host, allowed.port))
            elif allowed.port is not None:
                hostports.add(f"{allowed.host}:{allowed.port}")
            else:
                names.add(allowed.host)
        if not wildcard(host):
            names.add(host.lower().strip("[]"))  # the address bound: a fresh 127.x.y.z too
        if not loopback(host):
            for name in (socket.gethostname(), socket.getfqdn()):
                if name:
                    names.update((name.lower(), name.split(".")[0].lower()))
        return cls(
            token=token,
            port=port,
            names=frozenset(names),
            local_ips=not loopback(host),
            hostports=frozenset(hostports),
            origins=frozenset(origins),
        )

    def shown(self) -> str:
        """The names, for a refusal."""
        names = [f"[{n}]:{self.port}" if ":" in n else f"{n}:{self.port}" for n in self.names]
        proxies = [f"{scheme}://{name}:{port}" for scheme, name, port in self.origins]
        return ", ".join(sorted([*names, *self.hostports, *proxies]))

    def host_ok(self, hostport: str, local: str | None, scheme: str | None = None) -> bool:
        """Whether ``host[:port]`` (a ``Host`` header, or an origin's of ``scheme``)
        names this page; ``local`` is the address the connection came in on."""
        try:
            parts = urlsplit("//" + hostport)
            name, given = (parts.hostname or ""), parts.port
        except ValueError:
            return False
        if not name or parts.username or parts.password:
            return False
        for kind, proxy, at in self.origins:  # a proxy's: the port unsaid is the scheme's
            if name == proxy and (scheme is None or scheme == kind):
                if (given or DEFAULT_PORTS[kind]) == at:
                    return True
        if scheme == "https":
            return False  # the page itself speaks http only
        port = given or 80
        if f"{name}:{port}" in self.hostports:
            return True
        if port != self.port:
            return False
        if name in self.names:
            return True
        if self.local_ips and local:
            ip = _ip(name)
            return ip is not None and ip == _ip(local)
        return False

    def origin_ok(self, origin: str, local: str | None) -> bool:
        """Whether ``origin`` (an ``Origin`` or ``Referer``) is this page's own."""
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        scheme = parts.scheme.lower()
        return scheme in DEFAULT_PORTS and self.host_ok(parts.netloc, local, scheme)

    def token_ok(self, offered: str | None) -> bool:
        """Compared in constant time."""
        if not offered:
            return False
        return hmac.compare_digest(offered.encode(), self.token.encode())


def offered_token(headers: dict[str, str]) -> str | None:
    """The token a request carries: ``X-Flower-Token`` or ``Authorization: Bearer``."""
    if headers.get(HEADER):
        return headers[HEADER]
    kind, _, value = headers.get("authorization", "").partition(" ")
    return value.strip() if kind.lower() == "bearer" else None


def vouches(guard: Guard, raw: list[tuple[bytes, bytes]]) -> bool:
    """Whether raw request headers carry the token (for the connection gate)."""
    return guard.token_ok(offered_token({k.decode("latin-1"): v.decode("latin-1") for k, v in raw}))


class Guarded:
    """ASGI middleware: the security headers on every response, then ``Host``,
    ``Origin`` and the token, before the app sees the request.

    ``trust(scope)`` is told of every request that carried the token: the connection
    gate (``gate.py``) never evicts such a connection to make room for a newcomer.
    """

    def __init__(
        self, app: ASGIApp, guard: Guard, *, trust: Callable[[Scope], None] | None = None
    ) -> None:
        self.app = app
        self.guard = guard
        self.trust = trust

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        secured = _with_headers(send)
        refused = self.check(scope)
        if refused is not None:
            status, message = refused
            await _json(secured, status, {"ok": False, "error": message})
            return
        await self.app(scope, receive, secured)

    def check(self, scope: Scope) -> tuple[int, str] | None:
        """``(status, why)`` when the request is refused."""
        guard = self.guard
        size = head_size(scope)
        if size > HEAD_BYTES:
            return 431, TOO_LARGE.format(size=size)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        server = scope.get("server")
        local = server[0] if server else None
        if not guard.host_ok(headers.get("host", ""), local):
            return 421, WRONG_HOST.format(names=guard.shown())
        origin = headers.get("origin")
        if origin is not None and not guard.origin_ok(origin, local):
            return 403, FOREIGN
        if scope["method"] in ("GET", "HEAD") and scope["path"] in PUBLIC:
            return None
        if not guard.token_ok(offered_token(headers)):
            return 401, NO_TOKEN
        if self.trust is not None:
            self.trust(scope)
        if scope["method"] not in ("GET", "HEAD"):
            source = origin or headers.get("referer") or ""
            if not guard.origin_ok(source, local):
                return 403, FOREIGN
        return None


def head_size(scope: Scope) -> int:
    """The bytes of a request's head as parsed: its line and its headers (the wire's
    less the spaces around each value, which h11 strips)."""
    line = len(scope["method"]) + len(scope.get("raw_path") or b"") + len(" HTTP/1.1\r\n") + 1
    if scope.get("query_string"):
        line += len(scope["query_string"]) + 1
    return line + sum(len(k) + len(v) + 4 for k, v in scope["headers"]) + 2


def _with_headers(send: Send) -> Send:
    async def secured(message: Message) -> None:
        if message["type"] == "http.response.start":
            given = list(message.get("headers", []))
            names = {name.lower() for name, _ in given}
            given += [(name, value) for name, value in HEADERS if name not in names]
            message = {**message, "headers": given}
        await send(message)

    return secured


async def _json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body, ensure_ascii=False).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
