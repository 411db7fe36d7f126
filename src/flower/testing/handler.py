"""The scripted model's HTTP side: the threading server and the request handler that
reads a request, asks the model what to do with it, and answers (a reply, streamed or
whole, or a fault: an error status, a dropped connection, a stream cut mid-way).

Split from :mod:`flower.testing.server` because the wire (headers, server-sent events,
socket resets) changes for other reasons than the model's lifecycle and routing; the
handler knows the model only through :class:`Served`, so it does not import the server.
A subclass of :class:`ModelHandler` may answer otherwise (``benchmarks/chaos``), given
through ``ScriptedModel._handler_class``.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from .recorded import RecordedRequest
from .replies import OVERFLOW_MESSAGE, error_body, message_for, stream_events
from .script import Conversation, Fault, Turn
from .usage import Clock, PromptCache, cache_rules_broken

__all__ = ["UNBILLED", "ModelHandler", "ModelServer", "Served"]


class Served(Protocol):
    """What the handler asks of the model it serves (:class:`~flower.testing.ScriptedModel`)."""

    clock: Clock
    cache: PromptCache
    errors: list[str]
    _quiet: bool

    def _record(self, rec: RecordedRequest) -> None: ...

    def _decide(
        self, rec: RecordedRequest
    ) -> tuple[Conversation | None, Turn | None, Fault | None]: ...


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64
    model: Served | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-request or mid-reply (the CLI cancelling a turn, a
        test dropping its socket) is normal traffic here, not a traceback on stderr; a
        quiet model keeps any other error as a line of its own."""
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        if self.model is not None and self.model._quiet:
            self.model.errors.append(f"{type(exc).__name__}: {exc}")
            return
        super().handle_error(request, client_address)


#: The usage of a reply no conversation scripted: nothing (a side question the script has
#: no answer for must not show a cost).
UNBILLED = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}


class ModelHandler(BaseHTTPRequestHandler):
    model: Served
    protocol_version = "HTTP/1.1"
    server_version = "flower-scripted-model/1"

    def log_message(self, format: str, *args: Any) -> None:
        """No access log: BaseHTTPRequestHandler would print a line per request to stderr,
        over the run view of whoever drives the model (the demo's terminal, a test's)."""

    def do_HEAD(self) -> None:
        self._json(200, {})

    def do_GET(self) -> None:
        self._json(
            404,
            error_body(404, f"the scripted model only serves POST /v1/messages, not {self.path}"),
        )

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        rec = RecordedRequest(
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body if isinstance(body, dict) else {},
        )
        if not self.path.startswith("/v1/messages") or self.path.startswith(
            "/v1/messages/count_tokens"
        ):
            rec.outcome = "not-served"
            self.model._record(rec)
            self._json(404, error_body(404, f"not served by the scripted model: {self.path}"))
            return
        broken = cache_rules_broken(rec.body)
        if broken is not None:  # the API refuses it before any model sees it
            rec.outcome = "refused"
            self.model._record(rec)
            self._json(400, error_body(400, broken))
            return
        conv, turn, fault = self.model._decide(rec)
        if turn is not None and turn.delay:
            time.sleep(turn.delay)
        stream = bool(rec.body.get("stream"))
        if conv is None:  # not the model's answer: nothing is billed for it
            turn = Turn(text="(no scripted conversation matches this request)")
            self._reply(message_for(turn, rec, conv, usage=UNBILLED), stream)
        elif turn is None:
            self._reply(
                message_for(Turn(text=conv.after_end), rec, conv, billed=self._bill(rec)), stream
            )
        elif fault is None:
            if turn.elapse:
                self.model.clock.advance(turn.elapse)
            billed = self._bill(rec)
            self._reply(message_for(turn, rec, conv, usage=turn.usage, billed=billed), stream)
        else:
            self._fault(fault, message_for(turn, rec, conv, usage=turn.usage), stream)

    def _bill(self, rec: RecordedRequest) -> dict[str, Any]:
        """The request through the emulated prompt cache (only a served reply is billed)."""
        return self.model.cache.account(rec.body)

    # --- responses --------------------------------------------------------------------------

    def _json(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:20]}")
        self.send_header("connection", "close")
        if status in (429, 529):
            self.send_header("retry-after", "0")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _reply(self, message: dict[str, Any], stream: bool) -> None:
        if not stream:
            self._json(200, message)
            return
        self._start_stream()
        for event, data in stream_events(message):
            self._event(event, data)
        self.wfile.flush()
        self.close_connection = True

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:20]}")
        self.send_header("connection", "close")
        self.end_headers()

    def _event(self, event: str, data: Mapping[str, Any]) -> None:
        self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())

    def _fault(self, fault: Fault, message: dict[str, Any], stream: bool) -> None:
        if fault == "overflow":
            self._json(400, error_body(400, OVERFLOW_MESSAGE))
        elif fault == "drop":
            self._abort()
        elif fault == "cut":
            if not stream:
                self._abort()
                return
            self._start_stream()
            events = stream_events(message)
            for event, data in events[:3]:  # message_start, a block start, one delta
                self._event(event, data)
            self.wfile.flush()
            self._abort()
        else:
            assert isinstance(fault, int)
            self._json(fault, error_body(fault))

    def _abort(self) -> None:
        """Close the socket with a reset so the client sees a dropped connection."""
        self.close_connection = True
        try:
            self.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
