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

This module is the emulator's face: :class:`ScriptedModel` (its lifecycle, its
configuration, the queries tests assert with, the routing of a request to a turn). What
a request was is :mod:`flower.testing.recorded`, the wire is :mod:`flower.testing.handler`,
the replies' shapes :mod:`flower.testing.replies`; every name once defined here still
imports from here.
"""

from __future__ import annotations

import threading
from typing import Any

from .handler import UNBILLED as UNBILLED
from .handler import ModelHandler, ModelServer
from .recorded import AGENT_HEADER as AGENT_HEADER
from .recorded import CLI_PLACEHOLDER as CLI_PLACEHOLDER
from .recorded import RecordedRequest, message_text, turn_in
from .recorded import model_turns as model_turns
from .replies import MODEL_NAME as MODEL_NAME
from .replies import OVERFLOW_MESSAGE as OVERFLOW_MESSAGE
from .script import Conversation, Fault, Script, Turn, load_script
from .usage import Clock, PromptCache

#: Kept under the names they had here before the split (``benchmarks/chaos`` subclasses
#: the handler as ``server._Handler``).
_Handler = ModelHandler
_Server = ModelServer
_turn_in = turn_in


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
        self._httpd: ModelServer | None = None
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
        httpd = ModelServer((self._host, self._port), handler)
        httpd.model = self
        self._port = httpd.server_address[1]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self.base_url

    def _handler_class(self) -> type[ModelHandler]:
        """What :meth:`start` serves with; a subclass may answer otherwise (benchmarks/chaos)."""
        return ModelHandler

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
            rec.turn = turn_in(conv, messages)
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
