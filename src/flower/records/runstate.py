"""A run's state beyond its folder: the lineage in the shared store, the id in the workbench.

``runs/lineage.json`` is where a run continues from, but ``runs/`` is machine-local: a
``git clone`` of the project, or a copy made without it, arrives with the brief and the
goal (the workbench, ``.flower/``) and no lineage, and would start the work over. So:

- every lineage write is mirrored to the session store (``lineages`` table, by run id),
  where every machine using the same ``FLOWER_STORE_URL`` can read it;
- the run's id is kept in the workbench too (``run.json``), which travels with the brief;
- a flower that finds that id and no lineage file takes the lineage from the store and
  writes it back to ``runs/``; the run then continues like any moved run (its sessions
  re-keyed to the new folder, the wake line says so).

The files under ``runs/`` stay the readable local record. Nothing here raises: a store
that cannot be written or read costs the mirror, never the run.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flower.kernel.files import atomic_write
from flower.records.filelock import locked
from flower.records.lineage import LINEAGE_NAME, set_aside_corrupt

__all__ = ["MARKER_NAME", "marked_run", "mirror_for", "restore"]

#: The run id file in the workbench root.
MARKER_NAME = "run.json"


def marked_run(workbench_root: Path | None) -> str:
    """The run id the workbench names, "" when it names none."""
    if workbench_root is None:
        return ""
    try:
        data = json.loads((Path(workbench_root) / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    run = data.get("run") if isinstance(data, dict) else None
    return run if isinstance(run, str) and 0 < len(run) <= 64 else ""


def mirror_for(store: Any, workbench_root: Path | None) -> Callable[[dict[str, Any]], None]:
    """What a lineage calls after each write: the id into the workbench (when it changed),
    the document into the store (when the store keeps lineages)."""
    save = getattr(store, "save_lineage", None)
    host = socket.gethostname()

    def mirror(data: dict[str, Any]) -> None:
        run = str(data.get("run") or "")
        if not run:
            return
        if workbench_root is not None and marked_run(workbench_root) != run:
            root = Path(workbench_root)
            try:
                root.mkdir(parents=True, exist_ok=True)
                atomic_write(root / MARKER_NAME, json.dumps({"run": run}) + "\n")
            except OSError as exc:
                print(f"flower: could not write the run id to {root}: {exc}", file=sys.stderr)
        if callable(save):
            try:
                save(run, host, data)
            except Exception as exc:  # the local file is the record; the mirror a copy
                print(f"flower: could not keep the lineage in the store: {exc}", file=sys.stderr)

    return mirror


def restore(run_dir: Path, workbench_root: Path | None, store: Any) -> str:
    """Bring back ``run_dir/lineage.json`` from the store when it is missing and the
    workbench names a run the store knows; returns the run id restored, else ""."""
    path = Path(run_dir) / LINEAGE_NAME
    load = getattr(store, "load_lineage", None)
    run = marked_run(workbench_root)
    if not run or not callable(load):
        return ""
    set_aside_corrupt(path)  # an unreadable file is restored like a missing one, kept aside
    if path.exists():
        return ""
    try:
        data = load(run)
    except Exception as exc:
        print(f"flower: could not read the lineage from the store: {exc}", file=sys.stderr)
        return ""
    if not isinstance(data, dict) or not isinstance(data.get("workspace"), str):
        return ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path):
            if path.exists():  # another flower got here first
                return ""
            atomic_write(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    except OSError as exc:
        print(f"flower: could not restore {path}: {exc}", file=sys.stderr)
        return ""
    return run
