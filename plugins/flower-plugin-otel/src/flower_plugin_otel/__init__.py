"""flower-plugin-otel: a flower run as OpenTelemetry traces and metrics.

Installed next to flower, it needs nothing to start: spans and metrics go by OTLP to
``OTEL_EXPORTER_OTLP_ENDPOINT`` (a local collector on ``http://localhost:4318`` by
default), and the Claude Code CLI's own spans nest under flower's. See the README.
"""

__version__ = "0.1.0"
