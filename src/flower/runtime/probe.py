"""One tiny real request that tells whether a key, an endpoint and a model work together.

``check_credentials`` only sees that a variable is set: a mistyped key, an expired token,
a gateway URL missing its path or a model the gateway does not serve all pass it and
fail minutes later, inside the CLI, after the human has answered questions. ``flower
setup`` spends one request of a few tokens to find out now, and sorts the outcome into
what the human should do next:

``auth``
    the endpoint refused the key (401/403, no credit): type another one.
``config``
    the endpoint answered, but not to this request (404, an unknown model, a page that
    is not the Messages API, a URL that is not one): fix the gateway URL or the model.
``network``
    nothing answered, or the service itself failed (5xx/529): the key was not judged,
    so do not change it.
``ok``
    a reply came (a 429 counts: the key was accepted, only the rate was not).

Standard library only (``urllib``): the probe must work where the SDK's own transport
would be the thing being diagnosed, and it costs no import at ``flower --help``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["DEFAULT_PROBE_MODEL", "ProbeResult", "probe", "probe_model"]

Verdict = Literal["ok", "auth", "config", "network"]

#: Used when no model is configured: small, cheap, served by the Anthropic API.
DEFAULT_PROBE_MODEL = "claude-haiku-4-5"
#: A few tokens rather than one: models that must think first answer a 1-token cap
#: slower, not faster, and the cost difference is nil.
PROBE_MAX_TOKENS = 8
#: The CLI's shorthands, which only the CLI expands; the API would call them unknown.
_ALIASES = {"default", "opus", "sonnet", "haiku", "opusplan", "sonnet[1m]", "opus[1m]"}
_OAUTH_BETA = "oauth-2025-04-20"


@dataclass(frozen=True)
class ProbeResult:
    """The verdict, a one-line reason, and what was asked of whom."""

    verdict: Verdict
    detail: str
    endpoint: str
    model: str

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"

    def line(self) -> str:
        """The one-line verdict ``flower setup`` prints."""
        why = f" ({self.detail})" if self.detail else ""
        if self.verdict == "ok":
            return f"ok: {self.endpoint} answered with model {self.model}{why}"
        if self.verdict == "auth":
            return (
                f"auth: {self.endpoint} refused the key{why}; run `flower setup` again"
                " with a valid one"
            )
        if self.verdict == "config":
            return (
                f"config: {self.endpoint} did not serve the request{why}; check the gateway"
                f" URL and the model ({self.model}) with `flower setup`"
            )
        return (
            f"network: no answer from {self.endpoint}{why}; the key was saved but not"
            " judged: check the connection or proxy, then try again"
        )


def probe_model(environ: Mapping[str, str], model: str | None = None) -> str:
    """The model to ask: the one given, else the configured one, else a small default."""
    for name in (
        model,
        environ.get("ANTHROPIC_MODEL"),
        environ.get("ANTHROPIC_DEFAULT_HAIKU_MODEL"),
    ):
        name = (name or "").strip()
        if name and name.lower() not in _ALIASES:
            return name
    return DEFAULT_PROBE_MODEL


def _headers(environ: Mapping[str, str]) -> dict[str, str] | None:
    headers = {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "user-agent": "flower-setup-probe",
    }
    if key := environ.get("ANTHROPIC_API_KEY", "").strip():
        headers["x-api-key"] = key
    elif token := environ.get("ANTHROPIC_AUTH_TOKEN", "").strip():
        headers["authorization"] = f"Bearer {token}"
    elif token := environ.get("CLAUDE_CODE_OAUTH_TOKEN", "").strip():
        headers["authorization"] = f"Bearer {token}"
        headers["anthropic-beta"] = _OAUTH_BETA
    else:
        return None
    return headers


def probe(
    environ: Mapping[str, str] | None = None,
    *,
    model: str | None = None,
    timeout: float = 20.0,
) -> ProbeResult:
    """Send one Messages request with the key in ``environ`` and classify the outcome.

    Never raises for anything the network or the endpoint does: every outcome is a
    verdict.
    """
    environ = os.environ if environ is None else environ
    base = (environ.get("ANTHROPIC_BASE_URL", "").strip() or "https://api.anthropic.com").rstrip(
        "/"
    )
    name = probe_model(environ, model)

    def result(verdict: Verdict, detail: str) -> ProbeResult:
        return ProbeResult(verdict, _one_line(detail), base, name)

    if not re.match(r"https?://[^/\s]", base, re.IGNORECASE):
        return result("config", f"not an http(s) URL: {base!r}")
    headers = _headers(environ)
    if headers is None:
        return result("auth", "no API key or token to try")
    body = json.dumps(
        {
            "model": name,
            "max_tokens": PROBE_MAX_TOKENS,
            "messages": [{"role": "user", "content": "ping"}],
        }
    ).encode()
    try:
        request = urllib.request.Request(
            f"{base}/v1/messages", data=body, headers=headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read(65536)
    except urllib.error.HTTPError as exc:
        return result(*_from_status(exc.code, _error_text(exc)))
    except urllib.error.URLError as exc:
        return result("network", _reason(exc.reason))
    except ValueError as exc:  # a URL urllib cannot parse ("http://host:port-typo")
        return result("config", f"not a usable URL: {exc}")
    except TimeoutError:
        return result("network", f"no answer within {timeout:.0f}s")
    except Exception as exc:  # a dropped connection, a broken TLS stream, ...
        return result("network", f"{type(exc).__name__}: {exc}")
    try:
        reply = json.loads(raw)
    except ValueError:
        return result("config", "the reply is not JSON: is this the Messages API?")
    if not isinstance(reply, dict) or reply.get("type") != "message":
        return result("config", "the reply is not a Messages API message")
    return result("ok", "")


def _from_status(status: int, text: str) -> tuple[Verdict, str]:
    said = f"HTTP {status}" + (f": {text}" if text else "")
    lowered = text.lower()
    if status in (401, 403):
        return "auth", said
    if "credit" in lowered or "billing" in lowered:
        return "auth", said
    if status in (408, 429):
        return "ok", f"{said}; the key was accepted"
    if status >= 500:
        return "network", f"{said}; the service failed, not the key"
    return "config", said  # 400, 404, 405, 413, 422: the endpoint or the model is wrong


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        raw = exc.read(4096)
    except Exception:  # the body is a courtesy; the status says enough
        return ""
    try:
        data = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:120]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(data.get("message"), str):
            return str(data["message"])
    return ""


def _reason(reason: object) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, TimeoutError):
        return "timed out"
    if isinstance(reason, socket.gaierror):
        return f"cannot resolve the host ({reason.strerror})"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason)


_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b.?|[\x00-\x1f\x7f-\x9f]")


def _one_line(text: str, limit: int = 160) -> str:
    """An endpoint's words, flattened: no control characters, no second line."""
    flat = " ".join(_CONTROL.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
