"""What the latest load did to a resumed context, in one line (:func:`trim_report`)."""

from __future__ import annotations

from typing import Any

__all__ = ["trim_report"]

#: ``last_report`` key -> how :func:`trim_report` words it (``{n}`` is the count).
_REPORT_WORDS = (
    ("masked", "{n} old tool result(s) masked (kept whole in spill files)"),
    ("trimmed", "{n} large tool result(s) replaced by pointers to files"),
    ("expired", "{n} stale one-off result(s) marked expired"),
    ("api_errors", "{n} retry-storm error line(s) left out"),
    ("denials", "{n} old refused call(s) left out"),
    ("interrupted", "{n} interrupted result(s) neutralised"),
    ("orphans", "{n} unfinished tool call(s) closed"),
    ("spill_failed", "{n} large result(s) kept whole (the spill file could not be written)"),
)


def trim_report(store: Any) -> str:
    """One line for a log or a wake banner: what the latest ``load()`` of ``store`` did to
    the context it handed back (``"nothing trimmed"`` when it did nothing).

    Works with any store that has ``last_report`` (the trimming and pruning stores).
    """
    report: dict[str, int] = getattr(store, "last_report", None) or {}
    parts = [words.format(n=report[key]) for key, words in _REPORT_WORDS if report.get(key)]
    saved = report.get("trimmed_chars", 0) // 4
    if saved and parts and report.get("trimmed"):
        parts[0] += f" (~{saved:,} tokens saved)"
    return "; ".join(parts) or "nothing trimmed"
