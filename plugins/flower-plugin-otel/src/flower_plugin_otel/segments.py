"""One run, many traces: what ties the processes of a run together.

A run that wakes five times is five traces, one per ``flower`` process: a trace cannot
stay open across a process that may never come back, and a span is only exported once
it ends. Two things join them:

- **the shared attribute** ``flower.run.id`` (the lineage's id, the same in every wake)
  on every span flower exports, and as a resource attribute on the CLI's. This is the
  one that works everywhere: every backend searches attributes (Phoenix:
  ``flower.run.id:<id>``; Jaeger, Tempo: a tag query), and it costs nothing to keep.
- **a span link** from each segment's root to the previous segment's root (kept in
  ``<run_dir>/otel.json``), for backends that follow links. Not enough alone: a link
  needs the previous trace at hand, and some backends drop links on ingest (Arize
  Phoenix 20 does), so the previous trace's id is on the root as an attribute too
  (``flower.run.previous_trace_id``).

Not ``session.id``: the CLI's own spans carry theirs (the CLI session), and a backend
that groups traces by it (Phoenix) would take either.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from opentelemetry.trace import Span, SpanContext, TraceFlags

#: The file in a run's folder that remembers each segment's root span (for links).
SEGMENTS_FILE = "otel.json"
KEEP_SEGMENTS = 20


def lasting_run_id(rt: Any) -> str:
    """The run's id across wakes (the lineage's), else the process's own."""
    run_dir, workspace = getattr(rt, "run_dir", None), getattr(rt, "workspace", None)
    lasting = ""
    if run_dir is not None and workspace is not None:
        from flower.records.lineage import continuing_run

        try:
            lasting = continuing_run(run_dir, workspace)
        except Exception:
            lasting = ""
    return lasting or str(getattr(rt, "run_id", "") or "")


def link(run_dir: Path, run_id: str, root: Span) -> None:
    """Link ``root`` to the run's previous segment and remember it as the latest;
    a missing or unreadable file is a first segment, a file that cannot be written is
    no link next time (never an error)."""
    path = run_dir / SEGMENTS_FILE
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        segments = [s for s in kept.get("segments", []) if s.get("run") == run_id]
    except (OSError, ValueError, AttributeError):
        segments = []
    if segments:
        last = segments[-1]
        try:
            previous = SpanContext(
                trace_id=int(last["trace_id"], 16),
                span_id=int(last["span_id"], 16),
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
            root.add_link(previous, {"flower.link": "previous segment"})
            root.set_attribute("flower.run.previous_trace_id", str(last["trace_id"]))
        except (KeyError, ValueError, TypeError):
            pass
    ctx = root.get_span_context()
    root.set_attribute("flower.run.segment", len(segments) + 1)
    segments.append(
        {
            "run": run_id,
            "trace_id": format(ctx.trace_id, "032x"),
            "span_id": format(ctx.span_id, "016x"),
            "at": time.time(),
        }
    )
    tmp = path.with_name(path.name + ".tmp")
    try:  # atomic: a process killed mid-write leaves the old file
        tmp.write_text(
            json.dumps({"segments": segments[-KEEP_SEGMENTS:]}, indent=1), encoding="utf-8"
        )
        tmp.replace(path)
    except OSError:
        pass
