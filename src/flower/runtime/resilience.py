"""Waiting out the network instead of failing a step that took hours to reach.

A long run meets an outage sooner or later. The Runtime's answer has three parts, and
this module holds the first two (the third, keeping the storm's errors out of the
resumed context, is the pruning session store's job):

1. **A probe that costs nothing.** :func:`reachable` does one DNS lookup and one TCP
   handshake with the endpoint the CLI talks to (:func:`endpoint`, which follows
   ``ANTHROPIC_BASE_URL``): no HTTP, no credentials, no tokens. With a gateway it is
   the gateway that must answer, not ``api.anthropic.com``.
2. **Telling what is worth waiting for from what is not.** :func:`classify` asks the
   ``flower_classify_error`` hook; the default plugin checks fatal patterns before
   transient ones (a 401 text often mentions "connection", and the other order would
   wait forever on a bad key).

How flower's waiting composes with the CLI's own retries
---------------------------------------------------------
The Claude Code CLI already retries 429s, 5xx and dropped connections inside one
call: 10 times over about three minutes by default (``CLAUDE_CODE_MAX_RETRIES`` sets
the count). flower leaves that ladder in place by default and sits *above* it:

- Blips shorter than the CLI's ladder never reach flower: the turn goes on in the same
  process, which is the cheapest possible recovery (no new process, no resume).
- When the CLI gives up, flower takes over with what the CLI lacks: it probes the
  network every ``probe_interval`` seconds for up to ``max_offline_wait`` (an hour),
  then backs off ``delay_for(attempt)`` and resumes the same session with the
  detail-free :attr:`Resilience.resume_prompt`, up to ``max_attempts`` attempts.

So the worst case before flower stops is about ``max_attempts`` × (the CLI's three
minutes + an hour offline + the back-off), which is what an unattended overnight run
wants. ``Resilience(cli_retries=N)`` sets ``CLAUDE_CODE_MAX_RETRIES`` for the sessions
a Runtime starts (a value the agent's own ``env`` sets wins): lower it to hand outages
to flower's network-aware wait sooner; tests use 0 so a scripted fault surfaces at once.
"""

from __future__ import annotations

import os
import random
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from flower.kernel.lang import localized
from flower.runtime.resume_texts import RESUME_PROMPT_EN

if TYPE_CHECKING:
    from flower.plugin_types import ErrorClass

DEFAULT_BASE_URL = "https://api.anthropic.com"

#: What a resumed session is told after a failed attempt. It names no error on purpose:
#: the model needs "you were cut off, carry on", not whether it was ENOTFOUND or a 503,
#: which it would otherwise start discussing.
RESUME_PROMPT = (
    "上一轮在中途被打断了,没有做完。先看看工作台上已经落盘的东西,从断点接着做,不要从头开始。"
)

#: Called while offline with (seconds waited so far, seconds until the next probe).
OfflineCallback = Callable[[float, float], None]


def endpoint(env: Mapping[str, str] | None = None) -> tuple[str, int]:
    """The (host, port) the CLI will talk to, so the probe tests the right machine.

    Follows ``ANTHROPIC_BASE_URL`` (default ``https://api.anthropic.com``; port 443, or
    80 for ``http``). With ``CLAUDE_CODE_USE_BEDROCK`` / ``CLAUDE_CODE_USE_VERTEX`` it is
    the cloud endpoint (``ANTHROPIC_BEDROCK_BASE_URL`` / ``ANTHROPIC_VERTEX_BASE_URL``
    when set, else the regional host).
    """
    env = os.environ if env is None else env
    if _truthy(env.get("CLAUDE_CODE_USE_BEDROCK")):
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        url = (
            env.get("ANTHROPIC_BEDROCK_BASE_URL")
            or f"https://bedrock-runtime.{region}.amazonaws.com"
        )
    elif _truthy(env.get("CLAUDE_CODE_USE_VERTEX")):
        region = env.get("CLOUD_ML_REGION") or "us-east5"
        host = (
            "aiplatform.googleapis.com"
            if region == "global"
            else f"{region}-aiplatform.googleapis.com"
        )
        url = env.get("ANTHROPIC_VERTEX_BASE_URL") or f"https://{host}"
    else:
        url = env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
    parts = urlsplit(url if "://" in url else f"https://{url}")
    host = parts.hostname or urlsplit(DEFAULT_BASE_URL).hostname or "api.anthropic.com"
    try:
        port = parts.port
    except ValueError:
        port = None
    return host, port or (80 if parts.scheme == "http" else 443)


def reachable(host: str, port: int, timeout: float = 5.0) -> bool:
    """Whether ``host:port`` resolves and accepts a TCP connection within ``timeout``.

    One ``getaddrinfo`` and one handshake, nothing else: free, no credentials. Any
    exception counts as unreachable.
    """
    deadline = time.monotonic() + timeout
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        for family, kind, proto, _name, address in infos:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                with socket.socket(family, kind, proto) as sock:
                    sock.settimeout(left)
                    sock.connect(address)
                    return True
            except OSError:
                continue
        return False
    except Exception:
        return False


def classify(text: str) -> ErrorClass:
    """``"transient"``, ``"fatal"`` or ``"unknown"`` for an error text, by the plugins.

    The first plugin with an opinion wins; the default plugin (fatal before transient)
    answers last, and no answer at all counts as ``"unknown"``.
    """
    from flower.plugins import get_plugin_manager

    verdict = get_plugin_manager().hook.flower_classify_error(text=text)
    return verdict if verdict in ("transient", "fatal", "unknown") else "unknown"


@dataclass
class Resilience:
    """How a Runtime rides out outages; ``Runtime(resilience=False)`` turns it off.

    Attributes:
        enabled: Retry failed attempts at all.
        max_attempts: Attempts per step, the first included.
        base_delay: Back-off before the second attempt, doubled after each failure.
        max_delay: Cap of the back-off.
        probe_timeout: Seconds one probe may take.
        probe_interval: Seconds between probes while offline.
        max_offline_wait: Give up waiting for the network after this many seconds.
        retry_unknown: Retry errors the classifier cannot place.
        resume_prompt: Sent when a failed attempt's session is resumed (the default: the
            seed's Chinese, or its English when the language in effect is English).
        cli_retries: ``CLAUDE_CODE_MAX_RETRIES`` for the CLI, or ``None`` to leave the
            CLI's own default (10) alone; see the module docstring.
    """

    enabled: bool = True
    max_attempts: int = 6
    base_delay: float = 4.0
    max_delay: float = 120.0
    probe_timeout: float = 5.0
    probe_interval: float = 15.0
    max_offline_wait: float = 3600.0
    retry_unknown: bool = True
    resume_prompt: str = RESUME_PROMPT
    cli_retries: int | None = None

    def __post_init__(self) -> None:
        # The seed's default follows the language in effect when the policy is made (the
        # command chooses the language before any Runtime exists); a text given is kept.
        self.resume_prompt = localized(self.resume_prompt, RESUME_PROMPT, RESUME_PROMPT_EN)

    def delay_for(self, attempt: int) -> float:
        """Back-off after failed attempt ``attempt`` (1-based), with ±25% jitter.

        ``min(base_delay * 2**(attempt-1), max_delay)``, jittered so that several flower
        processes behind one gateway do not come back in lockstep.
        """
        # The exponent is capped: past 2**64 the cap has long won, and a float power
        # of a huge attempt number would overflow instead of returning max_delay.
        base = min(self.base_delay * 2.0 ** min(max(0, attempt - 1), 64), self.max_delay)
        return max(0.0, base * random.uniform(0.75, 1.25))

    def retries(self, verdict: ErrorClass) -> bool:
        """Whether an error the classifier placed as ``verdict`` is worth another attempt."""
        return verdict == "transient" or (verdict == "unknown" and self.retry_unknown)

    def retryable(self, text: str) -> bool:
        """Whether an attempt that failed with ``text`` is worth another one."""
        return self.retries(classify(text))

    async def wait_online(
        self,
        env: Mapping[str, str] | None = None,
        *,
        on_offline: OfflineCallback | None = None,
        sleep: Callable[[float], Awaitable[object]] | None = None,
    ) -> bool:
        """Hang until the endpoint answers a probe; ``False`` after ``max_offline_wait``.

        Probes run in a worker thread so the event loop (and the human's Ctrl-C) stays
        responsive; a cancelled wait leaves a hanging probe to finish on its own rather
        than waiting for it. ``on_offline(waited, next_in)`` is called before each pause,
        which is what a terminal countdown needs.
        """
        import anyio

        host, port = endpoint(env)
        pause = sleep or anyio.sleep
        started = time.monotonic()
        while True:
            probe = anyio.to_thread.run_sync(
                reachable, host, port, self.probe_timeout, abandon_on_cancel=True
            )
            if await probe:
                return True
            waited = time.monotonic() - started
            if waited >= self.max_offline_wait:
                return False
            step = min(self.probe_interval, max(0.0, self.max_offline_wait - waited))
            if on_offline is not None:
                on_offline(waited, step)
            await pause(step)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() not in ("", "0", "false", "no", "off")
