"""Exporting can never slow or break a run: a dead collector costs one warning line and no
retry storm, a collector that never answers cannot hold the exit; the standard OTEL_*
variables configure flower and the CLI alike, and what the user set wins."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_otel import cli_env  # noqa: E402
from flower_plugin_otel.config import Settings, read  # noqa: E402
from flower_plugin_otel.export import Breaker, GuardedSpans, Pipeline, Warning  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult  # noqa: E402


@pytest.fixture(autouse=True)
def _sdk_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline environment turns the SDK off (OTEL_SDK_DISABLED): on for these."""
    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent_collector() -> Iterator[int]:
    """A port that accepts connections and never answers (a hung collector)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    try:
        yield int(server.getsockname()[1])
    finally:
        server.close()


def some_spans(pipeline: Pipeline, n: int = 5) -> None:
    tracer = pipeline.tracer_provider.get_tracer("test")
    for i in range(n):
        tracer.start_span(f"s{i}").end()


def test_a_dead_collector_costs_one_warning_line_and_then_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    lines: list[str] = []
    settings = read()
    pipeline = Pipeline(settings, warning=Warning(settings.endpoint, lines.append))
    try:
        for _ in range(5):
            some_spans(pipeline)
            pipeline.tracer_provider.force_flush(5_000)
        pipeline.meter_provider.get_meter("t").create_counter("c").add(1)
        pipeline.meter_provider.force_flush(5_000)
    finally:
        started = time.monotonic()
        pipeline.shutdown()
        assert time.monotonic() - started < settings.exit_wait + 1
    assert len(lines) == 1, lines
    assert "did not take spans" in lines[0] and settings.endpoint in lines[0]


def test_a_collector_that_never_answers_cannot_hold_the_exit(
    silent_collector: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{silent_collector}")
    monkeypatch.setenv("FLOWER_OTEL_EXIT_WAIT", "0.5")
    settings = read()
    pipeline = Pipeline(settings, warning=Warning(settings.endpoint, lambda line: None))
    some_spans(pipeline, 50)
    started = time.monotonic()
    finished = pipeline.shutdown()
    took = time.monotonic() - started
    assert not finished and took < 1.5, took  # the export still hangs; the exit does not


class Counting(SpanExporter):
    def __init__(self) -> None:
        self.calls = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.calls += 1
        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        pass


def test_after_a_failure_exports_pause_and_the_pause_doubles() -> None:
    now = [0.0]
    said: list[str] = []
    inner = Counting()
    guarded = GuardedSpans(inner, Breaker("spans", Warning("x", said.append), clock=lambda: now[0]))
    for _ in range(100):  # a burst: one try, then nothing until the pause is over
        guarded.export([])
    assert inner.calls == 1 and guarded.breaker.skipped == 99
    now[0] = 5.1
    guarded.export([])
    assert inner.calls == 2 and guarded.breaker.closed_until == pytest.approx(15.1)
    assert len(said) == 1


def test_the_standard_variables_configure_both_sides(monkeypatch: pytest.MonkeyPatch) -> None:
    assert read({}) == Settings()  # nothing to configure for a local collector
    grpc = read({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert grpc.endpoint == "http://localhost:4317"
    off = read({"OTEL_SDK_DISABLED": "true", "OTEL_METRICS_EXPORTER": "none"})
    assert not off.enabled and not off.metrics and off.traces
    env: dict[str, str] = {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}  # the agent's own
    outer = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example:4318",
        "OTEL_RESOURCE_ATTRIBUTES": "team=infra,flower.step=mine",
        "OTEL_METRICS_EXPORTER": "prometheus",
    }
    cli_env.apply(env, read(outer), run_id="r1", step="干活#round2", environ=outer)
    assert env["OTEL_EXPORTER_OTLP_PROTOCOL"] == "http/json"  # kept
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in env  # inherited by the CLI as it is
    assert "OTEL_METRICS_EXPORTER" not in env
    assert env["CLAUDE_CODE_ENABLE_TELEMETRY"] == "1" and env["OTEL_TRACES_EXPORTER"] == "otlp"
    assert env["OTEL_RESOURCE_ATTRIBUTES"] == "team=infra,flower.step=mine,flower.run.id=r1"
    assert not any(name in env for name in cli_env.CONTENT_SWITCHES)
    opted: dict[str, Any] = {}
    cli_env.apply(opted, read({"FLOWER_OTEL_CONTENT": "1"}), run_id="", step="s", environ={})
    assert all(opted[name] == "1" for name in cli_env.CONTENT_SWITCHES)
    assert opted["CLAUDE_CODE_OTEL_CONTENT_MAX_LENGTH"] == "2000"
