"""A loopback emulator of the Anthropic Messages API that plays a :class:`Script`.

The bundled Claude Code CLI talks to whatever ``ANTHROPIC_BASE_URL`` names.
Pointing it here lets the real CLI run real tools, fire real hooks, start
subagents and mirror transcripts to a session store, fully offline and for
free. The server speaks just enough of the API for that: ``POST /v1/messages``
streamed as server-sent events (or as one JSON body when ``stream`` is false,
which the CLI uses after a cut stream), and the error bodies the real API
sends.

It runs in a daemon thread so synchronous tests, async tests and a standalone
process can all use it, and it can be stopped and restarted on the same port
to simulate a network outage.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .replies import MODEL_NAME as MODEL_NAME
from .replies import OVERFLOW_MESSAGE, error_body, message_for, stream_events
from .script import Conversation, Fault, Script, Turn, load_script
from .usage import Clock, PromptCache

AGENT_HEADER = "x-claude-code-agent-id"


@dataclass
class RecordedRequest:
    """One request as the server saw it, and what it did with it.

    Attributes:
        path: Request path including the query string.
        headers: Lower-cased header names.
        body: The parsed JSON body (``{}`` if it was not JSON).
        conversation: Name of the conversation that answered, or ``None``.
        turn: Index of the turn chosen: the number of model replies already in the
            request (CLI placeholders such as "No response requested." not counted).
        attempt: 1-based attempt number at that (conversation, turn).
        outcome: ``"reply"``, ``"unscripted"``, ``"unmatched"``, or the
            fault served (``"529"``, ``"drop"``, ``"cut"``, ``"overflow"``).
        at: ``time.time()`` when it arrived.
        usage: The ``usage`` the reply reported (``{}`` for a fault): emulated from the
            request and the prompt cache (:mod:`flower.testing.usage`), or the turn's own.
    """

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    conversation: str | None = None
    turn: int = 0
    attempt: int = 1
    outcome: str = ""
    at: float = field(default_factory=time.time)
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def is_subagent(self) -> bool:
        return AGENT_HEADER in self.headers

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def system_text(self) -> str:
        return _system_text(self.body)

    def text(self) -> str:
        """All text the request carries (system prompt and messages), for substring checks."""
        return self.system_text + "\n" + "\n".join(message_text(m) for m in self.messages)

    def tool_names(self) -> list[str]:
        """Names of the tools the request advertises in full (deferred tools are absent:
        the CLI lists those by name only, in a reminder inside the messages)."""
        return [str(t.get("name")) for t in self.body.get("tools") or [] if isinstance(t, dict)]

    def tool_results(self) -> dict[str, str]:
        """``tool_use_id`` -> result text for every tool_result in the request."""
        out: dict[str, str] = {}
        for msg in self.messages:
            content = msg.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out[str(block.get("tool_use_id"))] = _block_text(block.get("content"))
        return out


def message_text(message: Mapping[str, Any]) -> str:
    """Text of one API message: text blocks and tool_result contents, joined."""
    return _block_text(message.get("content"))


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_block_text(block.get("content")))
    return "\n".join(parts)


def _system_text(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return ""


#: The assistant message the CLI writes itself, on resume, after a transcript that ends
#: without a model reply (a failed or interrupted turn). The model never said it.
CLI_PLACEHOLDER = "No response requested."


def model_turns(messages: list[dict[str, Any]]) -> int:
    """How many replies the model has given in ``messages``: the turn to play next.

    CLI placeholders are not counted, so a resume after a failed turn gets the reply
    the failed turn never delivered, exactly as a retry would.
    """
    return sum(
        1
        for m in messages
        if m.get("role") == "assistant" and message_text(m).strip() != CLI_PLACEHOLDER
    )


def _turn_in(conv: Conversation, messages: list[dict[str, Any]]) -> int:
    """The turn ``conv`` plays next: model replies so far, or since its ``after_user`` text."""
    marker = conv.match.after_user
    if marker is not None:
        starts = [
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and marker in message_text(m)
        ]
        if starts:
            messages = messages[starts[-1] + 1 :]
    return model_turns(messages)


class ScriptedModel:
    """Serve a :class:`Script` on ``127.0.0.1`` for the Claude Code CLI.

    Example::

        from flower.testing import ScriptedModel, conversation, bash, text

        with ScriptedModel([conversation("main", bash("ls"), text("done"))]) as model:
            options = ClaudeAgentOptions(env=model.env(home=tmp_path), ...)
            ...
            assert model.requests[-1].tool_results()

    ``quiet=True`` keeps the server off stderr entirely: an unexpected error in a request
    handler is kept in :attr:`errors` (one line each) instead of printed as a traceback,
    for a server that shares its terminal with a run view (``flower demo``).

    Usage is reported the way the API counts it (:mod:`flower.testing.usage`): input tokens
    from the request, the prompt cache emulated from the request's ``cache_control``
    breakpoints (read, written, and fresh input apart), output tokens from the reply, so
    the cost the CLI reports is what the API would bill. A turn's own ``usage`` wins.
    ``model.clock.advance(seconds)`` lets cache entries expire without waiting.

    Attributes:
        requests: Every request received, in arrival order.
        errors: With ``quiet``, one line per unexpected handler error.
        clock: The emulated cache's time.
        cache: The emulated prompt cache (``cache.clear()`` forgets every entry).
    """

    def __init__(
        self,
        script: Any = (),
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        quiet: bool = False,
        clock: Clock | None = None,
    ) -> None:
        self._script = load_script(script)
        self.clock = clock if clock is not None else Clock()
        self.cache = PromptCache(self.clock)
        self._host = host
        self._port = port
        self._quiet = quiet
        self.errors: list[str] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._attempts: dict[tuple[str, int], int] = {}
        self._restart_timer: threading.Timer | None = None
        self.requests: list[RecordedRequest] = []

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> str:
        """Start serving (on the previous port after a :meth:`stop`) and return the base URL."""
        if self._httpd is not None:
            return self.base_url
        handler = type("_BoundHandler", (self._handler_class(),), {"model": self})
        httpd = _Server((self._host, self._port), handler)
        httpd.model = self
        self._port = httpd.server_address[1]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self.base_url

    def _handler_class(self) -> type[_Handler]:
        """What :meth:`start` serves with; a subclass may answer otherwise (benchmarks/chaos)."""
        return _Handler

    def stop(self) -> None:
        """Stop serving; connections are refused until :meth:`start` (same port).

        Also cancels a pending :meth:`restart`, so a stopped model stays stopped.
        """
        timer, self._restart_timer = self._restart_timer, None
        if timer is not None:
            timer.cancel()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def restart(self, *, after: float = 0.0) -> None:
        """Stop now and start again on the same port, ``after`` seconds later (non-blocking)."""
        self.stop()
        if after <= 0:
            self.start()
            return
        timer = threading.Timer(after, self.start)
        timer.daemon = True
        self._restart_timer = timer
        timer.start()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def alive(self) -> bool:
        """Started and its serving thread still running (``running`` only says started)."""
        return self._httpd is not None and self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> ScriptedModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- configuration --------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self._port}"

    @property
    def script(self) -> Script:
        return self._script

    def play(self, script: Any) -> None:
        """Replace the script and forget fault counters (recorded requests are kept)."""
        with self._lock:
            self._script = load_script(script)
            self._attempts.clear()

    def reset(self) -> None:
        """Forget recorded requests and fault counters."""
        with self._lock:
            self.requests.clear()
            self._attempts.clear()

    def env(self, *, home: Any, max_retries: int = 0, **extra: str) -> dict[str, str]:
        """Environment for ``ClaudeAgentOptions.env`` pointing the CLI at this server."""
        from .env import offline_env

        return offline_env(self.base_url, home=home, max_retries=max_retries, **extra)

    # --- queries for assertions -------------------------------------------------------------

    def requests_for(self, conversation: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.conversation == conversation]

    def last(self, conversation: str | None = None) -> RecordedRequest:
        pool = self.requests if conversation is None else self.requests_for(conversation)
        if not pool:
            raise AssertionError(f"no request recorded for {conversation or 'any conversation'}")
        return pool[-1]

    # --- request handling (called from handler threads) -----------------------------------

    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(rec)

    def _decide(
        self, rec: RecordedRequest
    ) -> tuple[Conversation | None, Turn | None, Fault | None]:
        messages = rec.messages
        user_texts = tuple(message_text(m) for m in messages if m.get("role") == "user")
        with self._lock:
            self.requests.append(rec)
            conv = self._script.route(
                first_user=user_texts[0] if user_texts else "",
                last_user=user_texts[-1] if user_texts else "",
                system=rec.system_text,
                is_subagent=rec.is_subagent,
                user_texts=user_texts,
            )
            if conv is None:
                rec.outcome = "unmatched"
                return None, None, None
            rec.conversation = conv.name
            rec.turn = _turn_in(conv, messages)
            if rec.turn >= len(conv.turns):
                rec.outcome = "unscripted"
                return conv, None, None
            turn = conv.turns[rec.turn]
            key = (conv.name, rec.turn)
            self._attempts[key] = rec.attempt = self._attempts.get(key, 0) + 1
            fault: Fault | None = turn.fail_always
            if fault is None and rec.attempt <= len(turn.faults):
                fault = turn.faults[rec.attempt - 1]
            rec.outcome = str(fault) if fault is not None else "reply"
            return conv, turn, fault


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64
    model: ScriptedModel | None = None

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


class _Handler(BaseHTTPRequestHandler):
    model: ScriptedModel
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
