"""Frozen means frozen: a frozen document is kept in the run's store and checked at every load.

The brief and the goal are files in the workbench, and a file can be changed by anyone
with the user's rights between two flowers: a worker run with ``--no-sandbox``, a script,
a careless editor. The judge must never rule on a goal the human did not freeze, or amend
through flower. So every write flower makes to a frozen document (the freeze, an
amendment, a changed goal) is followed by :func:`keep`, which puts the text and its
SHA-256 into the run's store (``documents``, :mod:`flower.stores.documents`) and into the
copy outside the workspace (:mod:`flower.records.state_copy`); and every load is preceded by
:func:`check`, which compares the file with that copy and, when it differs or is gone,
puts the frozen text back, records a ``restored`` row in the judge ledger, emits a
``restored`` event and says so on stderr when nobody listens.

A document frozen by a flower that kept no copy is trusted as it is on its first check
and kept from then on. Nothing here raises: a store that cannot be read or written costs
the check, never the run (and says so).
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

from flower.kernel.events import Event, EventCallback
from flower.kernel.lang import pick
from flower.plugins import emit
from flower.records.sections import load_text, save_text

__all__ = ["TOLD", "check", "digest", "keep", "remember", "remembered"]

CHANGED = "在 flower 之外被改过,已换回冻结时的内容"
CHANGED_EN = "was changed outside flower; the frozen text is back"
MISSING = "被删掉了,已按冻结时的内容恢复"
MISSING_EN = "was deleted; the frozen text is back"
#: What the terminal says (its words are English): by what had happened.
TOLD = {"changed": CHANGED_EN, "missing": MISSING_EN}


def _run(runtime: Any) -> str:
    from flower.records.ledger import run_id_of

    return run_id_of(runtime)


def keep(runtime: Any, path: str | Path) -> None:
    """Remember ``path``'s text as it stands now as the frozen copy of this run."""
    path = Path(path)
    text = load_text(path)
    run = _run(runtime)
    store = getattr(runtime, "store", None)
    saver = getattr(store, "save_document", None)
    if text is None or not run or not callable(saver):
        return
    try:
        saver(run, path.name, text, socket.gethostname())
    except Exception as exc:  # the check is lost, not the run
        print(f"flower: could not keep a copy of {path.name} in the store: {exc}", file=sys.stderr)
    from flower.records.state_copy import save_state

    save_state(runtime, run, **{path.name: text})


def digest(text: str) -> str:
    """The SHA-256 of ``text`` (the store's own, :func:`flower.stores.documents.digest`)."""
    from flower.stores.documents import digest as sha

    return sha(text)


def remember(runtime: Any, name: str, text: str) -> None:
    """Keep the hash of ``text`` under ``name`` in the run's store (what a frozen document
    was made from: the goal, the brief it was set from)."""
    saver = getattr(getattr(runtime, "store", None), "save_document", None)
    run = _run(runtime)
    if run and callable(saver):
        try:
            saver(run, name, digest(text), socket.gethostname())
        except Exception as exc:  # the check is lost, not the run
            print(f"flower: could not keep {name} in the store: {exc}", file=sys.stderr)


def remembered(runtime: Any, name: str) -> str | None:
    """The hash :func:`remember` kept under ``name``, or ``None``."""
    loader = getattr(getattr(runtime, "store", None), "load_document", None)
    run = _run(runtime)
    if not run or not callable(loader):
        return None
    try:
        found = loader(run, name)
    except Exception:
        return None
    return str(found["text"]) if found else None


def check(runtime: Any, path: str | Path, *, step: str = "", on_event: EventCallback = None) -> str:
    """Put ``path`` back as it was frozen when it differs from the kept copy; what
    happened to it ("" when it is as frozen, or nothing is kept yet)."""
    from flower.records.filelock import locked

    path = Path(path)
    run = _run(runtime)
    kept = _kept(runtime, run, path.name)
    if kept is None and not path.exists():
        return ""  # nothing frozen yet
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return ""
    with locked(path):  # the channel amends the brief under the same lock
        text = load_text(path)
        if kept is None:
            if text is not None:
                keep(runtime, path)  # frozen by a flower that kept nothing: trusted now on
            return ""
        if text == kept:
            return ""
        what = "missing" if text is None else "changed"
        why = pick(MISSING, MISSING_EN) if text is None else pick(CHANGED, CHANGED_EN)
        try:
            save_text(path, kept)
        except OSError as exc:
            why += f" ({exc.strerror or exc})"
    from flower.records.ledger import record, restored_row

    record(runtime, restored_row(step, path.name, why))
    payload = {"file": str(path), "name": path.name, "what": what, "why": why}
    if on_event is None:
        print(f"flower: {path.name} {TOLD[what]}", file=sys.stderr)
    emit(Event("restored", payload, step=step or None), on_event)
    return why


def _kept(runtime: Any, run: str, name: str) -> str | None:
    """The frozen text: the store's, else the copy outside the workspace."""
    loader = getattr(getattr(runtime, "store", None), "load_document", None)
    if run and callable(loader):
        try:
            found = loader(run, name)
        except Exception as exc:
            print(
                f"flower: could not read the frozen {name} from the store: {exc}", file=sys.stderr
            )
            found = None
        if found is not None:
            return str(found["text"])
    if not run:
        return None
    from flower.records.state_copy import load_state

    documents = load_state(run).get("documents") or {}
    text = documents.get(name)
    return text if isinstance(text, str) else None
