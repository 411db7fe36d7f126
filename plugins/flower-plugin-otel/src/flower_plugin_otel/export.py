"""Where spans and metrics go, built so that exporting can never slow or break a run.

- Spans are queued by the SDK's batch processor (a bounded queue, 2,048 spans unless
  ``OTEL_BSP_MAX_QUEUE_SIZE`` says otherwise; past it spans are dropped) and sent from
  its own thread: ending a span costs the run an append to a queue.
- Every exporter is wrapped in :class:`Breaker`: after a failed export it stops trying
  for a while (5 s, doubling up to 5 minutes), so a dead collector costs one refused
  connection now and then, never a retry storm, and the first failure prints **one**
  line on stderr (:class:`Warning`), whatever the signal and however long it stays down.
  The SDK's own loggers for export errors are quietened for the same reason.
- Until a collector has taken one export, each export first checks that something
  listens there (a TCP connect, a quarter of a second at most): the OTLP exporter
  retries a refused connection with back-off for up to its whole timeout (10 s), which
  at exit would hold a short ``flower`` process for all of ``FLOWER_OTEL_EXIT_WAIT``.
- At exit, what is left is flushed for at most ``FLOWER_OTEL_EXIT_WAIT`` seconds in a
  daemon thread (:func:`Pipeline.shutdown`): a collector that accepts connections and
  never answers cannot hold the process.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricReader,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

from flower_plugin_otel.config import Settings

#: Loggers through which the SDK reports each failed export (one line per batch).
NOISY_LOGGERS = (
    "opentelemetry.exporter",
    "opentelemetry.sdk._shared_internal",
    "opentelemetry.sdk.trace.export",
    "opentelemetry.sdk.metrics._internal.export",
    "opentelemetry.sdk.metrics._internal",
)
FIRST_PAUSE, LONGEST_PAUSE = 5.0, 300.0
PROBE_TIMEOUT = 0.25


def listening(endpoint: str) -> bool:
    """Whether something accepts a TCP connection at ``endpoint`` (a URL or host:port)."""
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    default = 443 if parts.scheme == "https" else 4318
    try:
        port = parts.port or default
    except ValueError:
        return True  # let the exporter say what is wrong with it
    try:
        with socket.create_connection((parts.hostname or "localhost", port), PROBE_TIMEOUT):
            return True
    except OSError:
        return False


class Warning:
    """Prints the first export failure of the process, once, and nothing after."""

    def __init__(self, endpoint: str, write: Callable[[str], object] | None = None) -> None:
        self.endpoint = endpoint
        self.said = False
        self._write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self._lock = threading.Lock()

    def failed(self, signal: str) -> None:
        with self._lock:
            if self.said:
                return
            self.said = True
        self._write(
            f"flower-otel: the collector at {self.endpoint} did not take {signal};"
            " the run goes on, telemetry is dropped while it is away"
            " (set OTEL_EXPORTER_OTLP_ENDPOINT, or OTEL_SDK_DISABLED=true to stop trying)"
        )


@dataclass
class Breaker:
    """Skips exports for a while after one failed, doubling the pause each time."""

    signal: str
    warning: Warning
    clock: Callable[[], float] = time.monotonic
    #: Where the exporter sends (probed until one export went through), or "".
    endpoint: str = ""
    failures: int = 0
    closed_until: float = 0.0
    skipped: int = field(default=0)
    proven: bool = False

    def allowed(self) -> bool:
        if self.clock() < self.closed_until:
            self.skipped += 1
            return False
        if self.endpoint and not self.proven and not listening(self.endpoint):
            self.record(False)
            return False
        return True

    def record(self, ok: bool) -> None:
        if ok:
            self.failures, self.proven = 0, True
            return
        self.failures += 1
        pause = min(LONGEST_PAUSE, FIRST_PAUSE * 2 ** (self.failures - 1))
        self.closed_until = self.clock() + pause
        self.warning.failed(self.signal)


class GuardedSpans(SpanExporter):
    """A span exporter behind a :class:`Breaker`; never raises."""

    def __init__(self, inner: SpanExporter, breaker: Breaker) -> None:
        self.inner, self.breaker = inner, breaker

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not self.breaker.allowed():
            return SpanExportResult.FAILURE
        try:
            result = self.inner.export(spans)
        except Exception:  # an exporter bug must not reach the batch thread
            result = SpanExportResult.FAILURE
        self.breaker.record(result is SpanExportResult.SUCCESS)
        return result

    def shutdown(self) -> None:
        try:
            self.inner.shutdown()
        except Exception:
            pass

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class GuardedMetrics(MetricExporter):
    """A metric exporter behind a :class:`Breaker`; never raises."""

    def __init__(self, inner: MetricExporter, breaker: Breaker) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self.inner, self.breaker = inner, breaker

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        if not self.breaker.allowed():
            return MetricExportResult.FAILURE
        try:
            result = self.inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        except Exception:
            result = MetricExportResult.FAILURE
        self.breaker.record(result is MetricExportResult.SUCCESS)
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        try:
            self.inner.shutdown(timeout_millis=timeout_millis, **kwargs)
        except Exception:
            pass


def _span_exporter(settings: Settings) -> SpanExporter:
    if settings.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpans,
        )

        grpc_spans: SpanExporter = GrpcSpans()
        return grpc_spans
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _metric_exporter(settings: Settings) -> MetricExporter:
    if settings.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetrics,
        )

        grpc_metrics: MetricExporter = GrpcMetrics()
        return grpc_metrics
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


def _endpoint_of(exporter: Any) -> str:
    """The URL an OTLP exporter sends to (its private ``_endpoint``), or "" (no probe)."""
    found = getattr(exporter, "_endpoint", "")
    return found if isinstance(found, str) else ""


class Pipeline:
    """The process's tracer and meter providers, their exporters and their shutdown.

    Providers of its own, never the global ones: an application that embeds flower
    keeps its own OpenTelemetry setup, and flower's spans still parent under whatever
    span that application had active (the context is global, the providers are not).
    ``span_exporter`` / ``metric_reader`` replace the OTLP ones (tests, benchmarks).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        span_exporter: SpanExporter | None = None,
        metric_reader: MetricReader | None = None,
        warning: Warning | None = None,
    ) -> None:
        for name in NOISY_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)
        self.settings = settings
        self.warning = warning or Warning(settings.endpoint)
        from flower import __version__

        resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
        ours: dict[str, str] = {}
        if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
            ours["service.name"] = "flower"
        if "service.version" not in resource.attributes:
            ours["service.version"] = __version__
        resource = resource.merge(Resource(ours))
        self.tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.spans = span_exporter
        if self.spans is None and settings.traces:
            inner = _span_exporter(settings)
            breaker = Breaker("spans", self.warning, endpoint=_endpoint_of(inner))
            self.spans = GuardedSpans(inner, breaker)
        if self.spans is not None:
            self.tracer_provider.add_span_processor(BatchSpanProcessor(self.spans))
        readers: list[MetricReader] = []
        if metric_reader is not None:
            readers.append(metric_reader)
        elif settings.metrics:
            metrics = _metric_exporter(settings)
            breaker = Breaker("metrics", self.warning, endpoint=_endpoint_of(metrics))
            exporter = GuardedMetrics(metrics, breaker)
            readers.append(PeriodicExportingMetricReader(exporter))
        self.meter_provider = MeterProvider(
            resource=resource, metric_readers=readers, shutdown_on_exit=False
        )
        self._closed = False

    def shutdown(self, wait: float | None = None) -> bool:
        """Flush and stop both providers within ``wait`` seconds (the settings' exit wait);
        ``True`` when they finished in time. Safe to call twice."""
        if self._closed:
            return True
        self._closed = True
        done = threading.Event()

        def close() -> None:
            for provider in (self.tracer_provider, self.meter_provider):
                try:
                    provider.shutdown()
                except Exception:
                    pass
            done.set()

        threading.Thread(target=close, name="flower-otel-exit", daemon=True).start()
        return done.wait(self.settings.exit_wait if wait is None else wait)
