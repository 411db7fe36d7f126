"""The variables that make the bundled Claude Code CLI export to the same collector.

Measured with the CLI bundled in claude-agent-sdk (2.1.33x): with
``CLAUDE_CODE_ENABLE_TELEMETRY=1`` it exports metrics (``claude_code.token.usage``,
``claude_code.cost.usage``, ``claude_code.session.count``, ...) and, with
``CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`` and ``OTEL_TRACES_EXPORTER=otlp``, spans
(``claude_code.interaction`` > ``claude_code.llm_request``, ``claude_code.tool`` >
``claude_code.tool.execution``). Its interaction span takes its parent from
``TRACEPARENT`` (``parent.source: env``), which the SDK sets from the span active when
it starts the CLI: the session's span (:meth:`RunTracer.session`). ``DISABLE_TELEMETRY``
and ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` do not stop it. Prompts are
``<REDACTED>`` and tool output absent unless ``OTEL_LOG_*`` say otherwise.

Every variable here is set only when neither the process environment nor the agent's
own ``env`` has it: what the user set wins. The one exception is
``OTEL_RESOURCE_ATTRIBUTES``, to which ``flower.run.id`` and ``flower.step`` are
appended (the user's keys kept): the CLI's metrics carry no trace context, and these
attributes are how they are found again for a run and a step.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from urllib.parse import quote

from flower_plugin_otel.config import Settings

CONTENT_SWITCHES = (
    "OTEL_LOG_USER_PROMPTS",
    "OTEL_LOG_ASSISTANT_RESPONSES",
    "OTEL_LOG_TOOL_DETAILS",
    "OTEL_LOG_TOOL_CONTENT",
)


def defaults(settings: Settings) -> dict[str, str]:
    """What the CLI needs to export where flower does, before the user's say."""
    wanted: dict[str, str] = {"CLAUDE_CODE_ENABLE_TELEMETRY": "1"}
    if settings.traces:
        wanted["CLAUDE_CODE_ENHANCED_TELEMETRY_BETA"] = "1"
        wanted["OTEL_TRACES_EXPORTER"] = "otlp"
    else:
        wanted["OTEL_TRACES_EXPORTER"] = "none"
    wanted["OTEL_METRICS_EXPORTER"] = "otlp" if settings.metrics else "none"
    wanted["OTEL_EXPORTER_OTLP_PROTOCOL"] = settings.protocol
    wanted["OTEL_EXPORTER_OTLP_ENDPOINT"] = settings.endpoint
    if settings.content:
        wanted.update(dict.fromkeys(CONTENT_SWITCHES, "1"))
        wanted["CLAUDE_CODE_OTEL_CONTENT_MAX_LENGTH"] = str(settings.content_max)
    return wanted


def apply(
    env: MutableMapping[str, str],
    settings: Settings,
    *,
    run_id: str,
    step: str,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Add the CLI's telemetry variables to a session's ``env`` (see the module)."""
    outer = os.environ if environ is None else environ
    for name, value in defaults(settings).items():
        if name not in env and name not in outer:
            env[name] = value
    ours = [f"flower.step={quote(step, safe='')}"]
    if run_id:
        ours.insert(0, f"flower.run.id={quote(run_id, safe='')}")
    theirs = env.get("OTEL_RESOURCE_ATTRIBUTES", outer.get("OTEL_RESOURCE_ATTRIBUTES", ""))
    kept = [part for part in theirs.split(",") if part.strip()]
    names = {part.split("=", 1)[0].strip() for part in kept}
    kept += [pair for pair in ours if pair.split("=", 1)[0] not in names]
    env["OTEL_RESOURCE_ATTRIBUTES"] = ",".join(kept)


def traces_tools(env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> bool:
    """Whether the CLI will trace its own tool calls with this environment."""
    outer = os.environ if environ is None else environ

    def get(name: str) -> str:
        return str(env.get(name, outer.get(name, ""))).strip().lower()

    return (
        get("CLAUDE_CODE_ENABLE_TELEMETRY") in ("1", "true")
        and get("CLAUDE_CODE_ENHANCED_TELEMETRY_BETA") in ("1", "true")
        and "otlp" in get("OTEL_TRACES_EXPORTER")
    )
