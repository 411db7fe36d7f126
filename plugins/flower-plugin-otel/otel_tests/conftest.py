"""The plugin's tests: offline like flower's own, never silently skipped in CI.

Every test starts offline (flower.testing's ``offline`` fixture: the model endpoint on a
closed loopback port, ``HOME`` in a temp dir, ``OTEL_SDK_DISABLED=true``). ``traced``
turns the plugin back on in this process with in-memory exporters; the end-to-end test
runs real ``flower`` processes against a real backend (:mod:`otel_tests.backend`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from flower.testing import need

PLUGIN = importlib.util.find_spec("flower_plugin_otel") is not None
NOT_INSTALLED = "flower-plugin-otel is not installed: pip install -e './plugins/flower-plugin-otel'"


@pytest.fixture(autouse=True)
def _offline(offline: dict[str, str]) -> None:
    """Every test starts offline (flower.testing's ``offline`` fixture)."""


@dataclass
class Traced:
    """The plugin on, in this process: what it exported and measured."""

    tracer: Any
    spans: Any
    reader: Any

    def finished(self) -> list[Any]:
        """Every span, the run ended (what is still open is ended as at exit)."""
        self.tracer.close()
        return self.flushed()

    def flushed(self) -> list[Any]:
        """The spans ended so far, the run still going."""
        from flower_plugin_otel.plugin import STATE

        STATE.pipeline.tracer_provider.force_flush()
        return list(self.spans.get_finished_spans())

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        data = self.reader.get_metrics_data()
        for rm in data.resource_metrics if data else []:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    points = [(dict(p.attributes), p.value) for p in metric.data.data_points]
                    out[metric.name] = points
        return out


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[Traced]:
    need(PLUGIN, NOT_INSTALLED)
    from flower_plugin_otel.plugin import STATE
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer = STATE.install(span_exporter=spans, metric_reader=reader)
    try:
        yield Traced(tracer, spans, reader)
    finally:
        STATE.reset()
        STATE.broken = True  # back to what the offline environment says: off
