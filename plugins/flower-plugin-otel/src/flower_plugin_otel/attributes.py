"""Attribute names and the rules for what may be exported.

Names follow the OpenTelemetry GenAI semantic conventions (``gen_ai.*``) so any backend
that reads them (Grafana, Datadog, Honeycomb, Langfuse...) shows tokens and tools, and
OpenInference's (``openinference.span.kind``, ``llm.token_count.*``, ``llm.cost.total``,
``input.value``) where Arize Phoenix needs them to show kinds, token totals and sessions.
Everything else flower knows is under ``flower.*``.

Content (prompts, replies, tool input and output, questions and answers, the judge's
reasons, failed checks' text) leaves the process only through :meth:`Content.text`:
``None`` unless ``FLOWER_OTEL_CONTENT=1``, and then with known secrets masked
(``flower.kernel.redact``) and cut to ``FLOWER_OTEL_CONTENT_MAX`` characters.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flower_plugin_otel.config import Settings

RUN_ID = "flower.run.id"
STEP = "flower.step"
KIND = "flower.kind"
SPAN_KIND = "openinference.span.kind"
#: Cut an error text to this many characters (API errors, not content, but unbounded).
ERROR_MAX = 300

#: The session's usage keys (as the CLI reports them) -> GenAI and OpenInference names.
USAGE = {
    "input_tokens": ("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
    "output_tokens": ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
    "cache_read_input_tokens": (
        "gen_ai.usage.cache_read.input_tokens",
        "llm.token_count.prompt_details.cache_read",
    ),
    "cache_creation_input_tokens": (
        "gen_ai.usage.cache_creation.input_tokens",
        "llm.token_count.prompt_details.cache_write",
    ),
}
#: The usage keys -> ``gen_ai.token.type`` of the token metric.
TOKEN_TYPES = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_input_tokens": "cache_read",
    "cache_creation_input_tokens": "cache_creation",
}


def workspace(path: Any, settings: Settings) -> dict[str, str]:
    """The workspace as an attribute: a hash of its path unless the user opts in, since
    a path names people and projects (``/home/alice/acme-payroll``)."""
    if path is None:
        return {}
    text = str(path)
    if settings.workspace_path:
        return {"flower.workspace.path": text}
    return {"flower.workspace.hash": hashlib.sha256(text.encode()).hexdigest()[:16]}


def usage(numbers: dict[str, Any] | None) -> dict[str, int]:
    """A session's token usage as GenAI and OpenInference attributes."""
    found: dict[str, int] = {}
    total = 0
    for key, names in USAGE.items():
        value = (numbers or {}).get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            for name in names:
                found[name] = value
            total += value
    if found:
        found["llm.token_count.total"] = total
    return found


def error(text: Any) -> str:
    """An error text fit for an attribute: secrets masked, one line, cut short."""
    from flower.kernel.redact import redact

    line = " ".join(str(text or "").split())
    line = redact(line)
    return line if len(line) <= ERROR_MAX else line[: ERROR_MAX - 1] + "…"


def step_of(label: str) -> str:
    """The workflow step a Runtime label belongs to: ``干活#round2`` -> ``干活``,
    ``干活·判定#1`` -> ``干活`` (what metrics are keyed by: labels grow with rounds)."""
    return label.split("#", 1)[0].split("·", 1)[0]


class Content:
    """The one door through which content may reach an attribute."""

    def __init__(self, settings: Settings) -> None:
        self.on = settings.content
        self.cap = settings.content_max

    def text(self, value: Any) -> str | None:
        if not self.on or value is None:
            return None
        from flower.kernel.redact import redact

        if not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False, default=str)
        said: str = redact(value)
        if len(said) > self.cap:
            said = said[: self.cap] + f"…[{len(said) - self.cap} more characters cut]"
        return said

    def put(self, attrs: dict[str, Any], name: str, value: Any) -> None:
        text = self.text(value)
        if text is not None:
            attrs[name] = text


def numbers(p: dict[str, Any], *keys: str) -> dict[str, float]:
    """The payload's numeric ``keys`` as ``flower.<key>`` floats (booleans and missing left out)."""
    out: dict[str, float] = {}
    for key in keys:
        value = p.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[f"flower.{key}"] = float(value)
    return out
