"""What the plugin does, read from the environment once per process.

The standard ``OTEL_*`` variables configure everything a user already knows how to
configure (endpoint, headers, protocol, sampler, resource attributes, timeouts): the
OpenTelemetry SDK reads most of them itself, and the bundled Claude Code CLI reads the
same ones, so one setting points both at one collector. Nothing is needed for a local
collector on the default port (``http://localhost:4318``, OTLP over HTTP).

flower's own switches are few, and all off the safe way by default:

- ``FLOWER_OTEL_CONTENT=1``: put prompts, replies, tool input and output, questions and
  answers, the judge's reasons on spans (each capped at ``FLOWER_OTEL_CONTENT_MAX``
  characters, 2,000 by default, known secrets masked) and let the CLI log its own.
- ``FLOWER_OTEL_WORKSPACE_PATH=1``: the workspace's path as it is, instead of a hash.
- ``FLOWER_OTEL_CLI=0``: leave the CLI's own telemetry alone (no variables set for it).
- ``FLOWER_OTEL_EXIT_WAIT``: seconds the process may spend sending what is left when it
  exits (default 2): a collector that does not answer never holds up the exit longer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

#: The OTLP endpoints a collector listens on by default, by protocol.
DEFAULT_ENDPOINTS = {"http/protobuf": "http://localhost:4318", "grpc": "http://localhost:4317"}
TRUE = frozenset({"1", "true", "yes", "on"})
N = TypeVar("N", int, float)


@dataclass(frozen=True)
class Settings:
    """The plugin's configuration; :func:`read` builds it from the environment."""

    #: False under ``OTEL_SDK_DISABLED=true``: no spans, no metrics, nothing for the CLI.
    enabled: bool = True
    #: ``http/protobuf`` (default) or ``grpc``.
    protocol: str = "http/protobuf"
    #: The base endpoint both flower and the CLI export to.
    endpoint: str = DEFAULT_ENDPOINTS["http/protobuf"]
    traces: bool = True
    metrics: bool = True
    content: bool = False
    content_max: int = 2000
    workspace_path: bool = False
    cli: bool = True
    exit_wait: float = 2.0


def read(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings in ``environ`` (the process environment by default)."""
    env = os.environ if environ is None else environ
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol not in DEFAULT_ENDPOINTS:
        protocol = "http/protobuf"
    endpoint = (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_ENDPOINTS[protocol]).strip()
    return Settings(
        enabled=env.get("OTEL_SDK_DISABLED", "").strip().lower() not in TRUE,
        protocol=protocol,
        endpoint=endpoint.rstrip("/"),
        traces=_exporter(env, "OTEL_TRACES_EXPORTER"),
        metrics=_exporter(env, "OTEL_METRICS_EXPORTER"),
        content=env.get("FLOWER_OTEL_CONTENT", "").strip().lower() in TRUE,
        content_max=_number(env.get("FLOWER_OTEL_CONTENT_MAX"), 2000, int),
        workspace_path=env.get("FLOWER_OTEL_WORKSPACE_PATH", "").strip().lower() in TRUE,
        cli=env.get("FLOWER_OTEL_CLI", "1").strip().lower() in TRUE,
        exit_wait=_number(env.get("FLOWER_OTEL_EXIT_WAIT"), 2.0, float),
    )


def _exporter(env: Mapping[str, str], name: str) -> bool:
    """Whether a signal is exported: ``OTEL_<SIGNAL>_EXPORTER`` unset or naming ``otlp``."""
    value = env.get(name, "otlp").strip().lower()
    return "otlp" in {part.strip() for part in value.split(",")}


def _number(raw: str | None, default: N, kind: type[N]) -> N:
    try:
        value = kind(raw) if raw else default
    except ValueError:
        return default
    return value if value >= 0 else default
