"""What matters of a run, kept outside the workspace, so a lost store is never a silent reset.

The run's store (``runs/sessions.db`` by default) lives in the workspace: a command run
without the sandbox, a ``git clean -xdf`` or a careless ``rm -r runs`` takes it, and with
it the budget the run was given and spent, every verdict and refusal, and the frozen
brief and goal. So flower keeps a copy of exactly those (not the conversations) in the
user's state folder, one file per run:
``${XDG_STATE_HOME:-~/.local/state}/flower/runs/<run id>/state.json`` (mode 0600, written
whole or not at all, secrets redacted like every file flower writes). It is rewritten
after every ruling, every paid session and every document kept.

A flower that finds the run's id in the workbench but its store gone stops in one line
and points at this file (:func:`missing_store`); ``flower --recover`` carries the run on
from it (:func:`recover`): the budget, the ledger and the documents go into a new store,
the conversations start over. Nothing here raises.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["load_state", "recover", "save_state", "state_dir", "state_path"]

STATE_NAME = "state.json"


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``${XDG_STATE_HOME:-~/.local/state}/flower/runs``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local/state")
    return Path(base).expanduser() / "flower" / "runs"


def state_path(run: str) -> Path:
    """Where run ``run``'s copy is kept (a run id is 1 to 64 safe characters)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run)[:64] or "_"
    return state_dir() / safe / STATE_NAME


def load_state(run: str) -> dict[str, Any]:
    """Run ``run``'s copy, ``{}`` when there is none or it cannot be read."""
    if not run:
        return {}
    try:
        data = json.loads(state_path(run).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(runtime: Any, run: str, **documents: str) -> None:
    """Rewrite run ``run``'s copy from the store (its budget and ledger) and the frozen
    documents kept so far (``documents``: name -> text, added to them). Never raises."""
    if not run:
        return
    store = getattr(runtime, "store", None)
    data = load_state(run)
    data.update(run=run, workspace=str(getattr(runtime, "workspace", "") or ""))
    docs = dict(data.get("documents") or {})
    loader = getattr(store, "load_document", None)
    for name in list(docs):
        try:
            found = loader(run, name) if callable(loader) else None
        except Exception:
            found = None
        if found is not None:
            docs[name] = found["text"]
    docs.update(documents)
    data["documents"] = docs
    for key, method in (("rulings", "rulings"), ("budget", "budget")):
        reader = getattr(store, method, None)
        if callable(reader):
            try:
                data[key] = reader(run)
            except Exception:  # the store cannot say now: the last copy stands
                pass
    try:
        from flower.kernel.files import atomic_write

        path = state_path(run)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1, default=str) + "\n")
        os.chmod(path, 0o600)
    except (OSError, ValueError) as exc:
        print(
            f"flower: could not keep the run's state outside the workspace: {exc}", file=sys.stderr
        )


def recover(store: Any, run: str) -> int:
    """Put run ``run``'s copy into ``store`` (a new one): the cap, what was spent, every
    ruling and refusal, the frozen documents. How many rows went in."""
    import socket

    data = load_state(run)
    host = socket.gethostname()
    put = 0
    budget = data.get("budget") or {}
    if "cap" in budget and callable(getattr(store, "set_cap", None)):
        store.set_cap(run, budget.get("cap"), host)
        put += 1
    spent = float(budget.get("spent") or 0.0)
    if spent > 0 and callable(getattr(store, "record_spend", None)):
        row = {"run_id": run, "step": "(recovered)", "session_id": None, "cost_usd": spent}
        store.record_spend({**row, "host": host})
        put += 1
    for row in data.get("rulings") or []:
        if isinstance(row, dict) and callable(getattr(store, "record_ruling", None)):
            store.record_ruling({**row, "run_id": run})
            put += 1
    for name, text in (data.get("documents") or {}).items():
        if isinstance(text, str) and callable(getattr(store, "save_document", None)):
            store.save_document(run, name, text, host)
            put += 1
    return put
