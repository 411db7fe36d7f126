"""The hooks: every event and every CLI session of a flower process, as OpenTelemetry.

- ``flower_event``: each event moves the run's span tree (:class:`RunTracer`).
- ``flower_session_scope``: each CLI session gets a span that is the active one while
  the SDK starts the CLI, which passes it on as ``TRACEPARENT``; the CLI is told to
  export to the same collector (:mod:`flower_plugin_otel.cli_env`).

Nothing is built until the first event or session (``flower --help`` and ``flower
status`` load plugins, and pay nothing here); at exit the open spans are ended and what
is left is sent within ``FLOWER_OTEL_EXIT_WAIT`` seconds.
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

from flower import hookimpl
from flower_plugin_otel import cli_env
from flower_plugin_otel.config import Settings, read


class State:
    """The process's pipeline and tracer, built on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.settings: Settings | None = None
        self.pipeline: Any = None
        self.tracer: Any = None
        self.broken = False

    def get(self) -> Any:
        """The :class:`RunTracer`, or ``None`` when the plugin is off or could not start."""
        if self.tracer is not None or self.broken:
            return self.tracer
        with self.lock:
            if self.tracer is None and not self.broken:
                self._build()
        return self.tracer

    def _build(self, **pipeline_kw: Any) -> None:
        settings = self.settings = read()
        if not settings.enabled:
            self.broken = True
            return
        try:
            from flower_plugin_otel.export import Pipeline
            from flower_plugin_otel.metrics import Meters
            from flower_plugin_otel.tracer import RunTracer

            self.pipeline = Pipeline(settings, **pipeline_kw)
            tracer = self.pipeline.tracer_provider.get_tracer("flower", _version())
            meter = self.pipeline.meter_provider.get_meter("flower", _version())
            self.tracer = RunTracer(tracer, Meters(meter), settings)
        except Exception as exc:  # telemetry must never stop a run
            self.broken = True
            print(f"flower-otel: telemetry is off: {exc!r}", file=sys.stderr)
            return
        atexit.register(self.shutdown)

    def install(self, **pipeline_kw: Any) -> Any:
        """Build with the given exporter or reader (tests, benchmarks); the tracer."""
        self.reset()
        with self.lock:
            self._build(**pipeline_kw)
        return self.tracer

    def shutdown(self) -> None:
        tracer, pipeline = self.tracer, self.pipeline
        if tracer is not None:
            with contextlib.suppress(Exception):
                tracer.close()
        if pipeline is not None:
            pipeline.shutdown()

    def reset(self) -> None:
        """End and forget the current pipeline (the next use builds a new one)."""
        self.shutdown()
        with contextlib.suppress(Exception):
            atexit.unregister(self.shutdown)
        self.settings = self.pipeline = self.tracer = None
        self.broken = False


STATE = State()


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("flower-plugin-otel")
    except Exception:
        return "0"


@hookimpl
def flower_event(event: Any) -> None:
    tracer = STATE.get()
    if tracer is not None:
        tracer.event(event)


@hookimpl
def flower_session_scope(session: Any) -> Any:
    tracer = STATE.get()
    if tracer is None:
        return None
    return _scope(tracer, session)


@contextlib.contextmanager
def _scope(tracer: Any, session: Any) -> Iterator[None]:
    settings = STATE.settings
    with tracer.session(session):
        if settings is not None and settings.cli:
            cli_env.apply(session.env, settings, run_id=tracer.run_id, step=session.step)
        tracer.tool_spans = not cli_env.traces_tools(session.env)
        yield
