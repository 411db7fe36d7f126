"""``manifest.json``: one row per finished step, shared by every flower in a run directory.

Each row is every field of a ``StepResult`` plus ``duration_s`` and ``run`` (the id of
the process that wrote it, ``YYYYmmdd-HHMMSS-<6 hex>``). Writing appends rather than
overwrites: at every write the file is re-read, this process's rows are replaced by
fresh ones and everyone else's are kept. Two flower processes in one ``run_dir`` are
therefore safe, and a lock file (:mod:`flower.records.filelock`, shared with
``lineage.json``) serialises their read-modify-write so neither can drop the other's
rows in the gap between reading and replacing. The file is always
written to ``.tmp`` first and then swapped in, so a killed process never leaves half a
file.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from flower.kernel.files import atomic_write
from flower.records.filelock import locked, move_aside

MANIFEST_NAME = "manifest.json"


def new_run_id(now: float | None = None) -> str:
    """``YYYYmmdd-HHMMSS-<6 hex>``: sortable by start time, unique across processes."""
    return f"{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}-{secrets.token_hex(3)}"


def manifest_row(result: Any, run: str) -> dict[str, Any]:
    """A result as a manifest row: its fields, plus ``duration_s`` (a property, which
    ``asdict`` misses) and ``run``."""
    row = asdict(result) if is_dataclass(result) and not isinstance(result, type) else dict(result)
    row["duration_s"] = round(float(getattr(result, "duration_s", row.get("duration_s", 0.0))), 3)
    row["run"] = run
    return row


class Manifest:
    """The manifest of one run directory, as written by one process (``run``)."""

    def __init__(self, run_dir: str | Path, run: str | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.run = run or new_run_id()
        self.path = self.run_dir / MANIFEST_NAME

    def read(self) -> list[dict[str, Any]]:
        """Every row on disk; an unreadable file reads as empty (see :meth:`write`)."""
        rows, _ = self._load()
        return rows

    def write(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Make this process's rows on disk exactly ``rows``; keep every other process's.

        A manifest that is not valid JSON, or valid JSON but not a list of rows (an
        object, a number, a list holding anything but objects), is moved aside to
        ``manifest.json.corrupt-<time>`` rather than overwritten, so nothing anyone wrote
        is lost.
        """
        mine = [{**row, "run": self.run} for row in rows]
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with locked(self.path):
            current, corrupt = self._load()
            if corrupt:
                aside = move_aside(self.path, "corrupt")
                print(
                    f"flower: {self.path} was not valid JSON or not a list of rows;"
                    f" kept it as {aside.name}",
                    file=sys.stderr,
                )
            others = [row for row in current if row.get("run") != self.run]
            merged = sorted(others + mine, key=_started)
            atomic_write(self.path, json.dumps(merged, ensure_ascii=False, indent=2) + "\n")

    def restore(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Add the rows of ``rows`` the file lacks (other processes' rows only: this
        process writes its own); how many were added. For rows the store kept while the
        file could not be written (a full disk)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with locked(self.path):
            current, corrupt = self._load()
            if corrupt:
                return 0  # write() sets a corrupt file aside; nothing to merge into
            have = {_key(row) for row in current}
            missing = [
                dict(row) for row in rows if row.get("run") != self.run and _key(row) not in have
            ]
            if missing:
                merged = sorted(current + missing, key=_started)
                atomic_write(self.path, json.dumps(merged, ensure_ascii=False, indent=2) + "\n")
            return len(missing)

    def _load(self) -> tuple[list[dict[str, Any]], bool]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return [], False
        try:  # not UTF-8 is as corrupt as not JSON (UnicodeDecodeError is a ValueError)
            data = json.loads(raw.decode("utf-8")) if raw.strip() else []
        except ValueError:
            return [], True
        if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
            return [], True  # valid JSON, but not rows: as unusable as a torn file
        return data, False


def _key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """What tells two manifest rows apart: the process, the step, when it started."""
    return (str(row.get("run")), str(row.get("step")), str(row.get("started_at")))


def _started(row: Mapping[str, Any]) -> float:
    """Sort key: a row's ``started_at``; a hand-edited value that is no number sorts first."""
    try:
        return float(row.get("started_at") or 0.0)
    except (TypeError, ValueError):
        return 0.0


def mirror_step(runtime: Any, row: Mapping[str, Any]) -> None:
    """Append a finished step to the store's run list too (``flower status --all``), when
    the store keeps one and the run has an id (a workflow with a lineage); never raises:
    the local manifest is the record, the mirror a view of it."""
    recorder = getattr(runtime.store, "record_step", None)
    if recorder is None:
        return
    from flower.records.lineage import continuing_run

    try:
        run = continuing_run(runtime.run_dir, runtime.workspace)
        if run:
            import socket

            recorder(run, str(runtime.workspace), socket.gethostname(), row)
            _reconcile(runtime, run, socket.gethostname())
    except Exception as exc:  # a view must not fail a step
        print(f"flower: could not add the step to the store's run list: {exc}", file=sys.stderr)


def _reconcile(runtime: Any, run: str, host: str) -> None:
    """Make the file and the store agree on the run's rows, both ways: a row the store
    kept while the file could not be written (a full disk) goes into ``manifest.json``;
    a row of this process the file has and the store missed (its connection cut as an
    earlier step ended) goes into the store. Without it the two differed for good
    (found by benchmarks/chaos)."""
    reader = getattr(runtime.store, "step_rows", None)
    if reader is None:
        return
    stored = reader(run)
    try:
        runtime.manifest.restore(stored)
    except OSError as exc:  # still full: the next step tries again
        print(f"flower: could not write {runtime.manifest.path}: {exc}", file=sys.stderr)
    have = {_key(row) for row in stored}
    mine = runtime.manifest.run  # (another process's rows may belong to another run id)
    for row in runtime.manifest.read():
        if row.get("run") == mine and _key(row) not in have:
            runtime.store.record_step(run, str(runtime.workspace), host, row)
