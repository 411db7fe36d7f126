"""A rewind, in the order that loses nothing: ``flower rewind N`` and ``--undo``.

1. The target is read whole into a temporary tree first: a corrupt checkpoint stops
   here, with nothing changed (:meth:`Checkpoints.restore`).
2. The present is compared with the newest checkpoint (after a rewind, with the folder
   it put back: :meth:`Checkpoint.now`): what changed since (someone other than flower,
   or a run killed mid-round) is named, so the caller can ask.
3. The present is checkpointed (kind ``rewind``): ``--undo`` comes back to it.
4. The folder is made the target; the rewind waits for its step in ``rewind.json``
   (:mod:`flower.workflow.rewind`), the ledger and its notes get a ``rewind`` row, the run's
   outcome says where it went back to, and the drift picture is the restored folder (the
   next wake reports no drift flower made itself).

The caller holds the run's lock around :func:`prepare` and :func:`apply`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flower.records.checkpoints import Checkpoint, CheckpointError, Checkpoints

__all__ = ["Rewind", "RunRecords", "apply", "find", "listing", "prepare", "rows"]


class RunRecords:
    """What the ledger's ``record`` and the positions need of a Runtime, without one
    (no SDK import: the store's database, the workspace, the run folder, the workbench)."""

    def __init__(self, workspace: Path, run_dir: Path, run: str) -> None:
        from flower.workflow import workbench_for

        self.workspace, self.run_dir, self.run_id = workspace, run_dir, run
        self.workbench = workbench_for(workspace)
        self.protected: set[Path] = set()
        self.project_key = None
        target = os.environ.get("FLOWER_STORE_URL") or str(run_dir / "sessions.db")
        self.store: Any = None
        if "://" in target or Path(target).is_file():
            from flower.stores.database import StoreDatabase

            self.store = StoreDatabase(target)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


@dataclass
class Rewind:
    """A rewind made ready: the target, the present's tree, what changed since the
    newest checkpoint (``foreign``), and the step it sends back."""

    target: Checkpoint
    last: Checkpoint
    tree: str
    modes: dict[str, int]
    dirs: list[str]
    foreign: list[tuple[str, str]] = field(default_factory=list)
    undo: bool = False


def rows(store: Checkpoints, workspace: Path, run_dir: Path) -> list[dict[str, Any]]:
    """Each checkpoint as ``flower rewind`` lists it and the page shows it: its number,
    kind, title, step, round and time, what the judge said of its round (the ledger's
    verdict state, ``""`` for a checkpoint that is no work round or not ruled on) and how
    many files differ between it and the folder as the newest checkpoint left it
    (``differ``; after a rewind, the folder it put back)."""
    every = store.all()
    records = RunRecords(workspace, run_dir, store.run)
    try:
        rulings = records.store.rulings(store.run) if records.store is not None else []
    finally:
        records.close()
    said = {
        (r.get("step"), r.get("round")): f"{r.get('state') or 'vague'}"
        for r in rulings
        if r.get("kind") == "verdict"
    }
    newest = every[-1].now() if every else ""
    return [
        {
            "n": c.n, "kind": c.kind, "title": c.title(), "step": c.step, "round": c.round,
            "at": c.at, "judge": said.get((c.step, c.round), "") if c.kind == "round" else "",
            "differ": len(store.changes(c.tree, newest)) if c.tree != newest else 0,
        }
        for c in every
    ]  # fmt: skip


def listing(workspace: Path, run_dir: Path, *, sized: bool = True) -> dict[str, Any] | None:
    """The checkpoints of the run in ``workspace`` for ``flower status`` and the page:
    ``{"count", "newest", "bytes", "rows"}`` (:func:`rows`; ``bytes`` ``None`` unless
    ``sized``: on a large repository the size walks every object), ``None`` when the
    folder has no run or its run no checkpoint, ``{"error": …}`` when git cannot read them."""
    from flower.records.lineage import continuing_run

    run = continuing_run(run_dir, workspace) if Path(run_dir).is_dir() else ""
    if not run:
        return None
    try:
        store = Checkpoints(workspace, run_dir, run)
        listed = rows(store, Path(workspace), Path(run_dir))
        if not listed:
            return None
        return {
            "count": len(listed), "newest": listed[-1]["title"],
            "bytes": store.size() if sized else None, "rows": listed,
        }  # fmt: skip
    except CheckpointError as exc:
        return {"error": str(exc)}


def find(every: list[Checkpoint], word: str) -> Checkpoint:
    """The checkpoint ``word`` names: ``N`` the start of work round N (the newest such),
    ``#K`` checkpoint number K, else a step name or label (``设定目标``, ``干活#round2``).
    ``ValueError`` (one line) when none fits."""
    word = word.strip()
    if word.startswith("#") and word[1:].isdigit():
        found = [c for c in every if c.n == int(word[1:])]
    elif word.isdigit():
        found = [c for c in every if c.kind == "round" and c.round == int(word)]
    else:
        found = [c for c in every if c.kind in ("step", "round") and word in (c.label, c.step)]
    if not found:
        raise ValueError(
            f"no checkpoint {word!r} in this run: `flower rewind` lists them"
            " (N = the start of round N, #K = checkpoint K, or a step name)"
        )
    return found[-1] if word[:1] == "#" or word.isdigit() else found[0]


def prepare(store: Checkpoints, word: str | None, *, exclude: list[str] | None = None) -> Rewind:
    """Check the rewind can be made and what it would overwrite; changes nothing the
    user sees (git objects of the present are written, no ref moves)."""
    every = store.all()
    if not every:
        raise ValueError("this run has no checkpoints yet: they are taken before every round")
    last = every[-1]
    if word is None:  # --undo: where the newest rewind (or undo) started
        marks = [c for c in every if c.kind in ("rewind", "undo")]
        if not marks:
            raise ValueError("nothing to undo: this run has not been rewound")
        target = marks[-1]
    else:
        target = find(every, word)
    scratch = store.home / f"check-{os.getpid()}"
    try:  # read it whole before anything is decided: a corrupt one stops here
        store.materialize(target, scratch)
    finally:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
    skip = exclude if exclude is not None else last.exclude
    tree, modes, dirs = store.snapshot(skip)
    foreign = store.changes(last.now(), tree)  # after a rewind: against what it put back
    return Rewind(target, last, tree, modes, dirs, foreign, undo=word is None)


def apply(store: Checkpoints, plan: Rewind, records: RunRecords, words: str) -> dict[str, Any]:
    """Checkpoint the present, restore the target, leave the rewind for its step and
    record it; what was done (``present``: the checkpoint ``--undo`` returns to)."""
    from flower.records.drift import record as picture
    from flower.records.ledger import record
    from flower.records.outcome import write_outcome
    from flower.workflow.rewind import last_message, write_pending

    target = plan.target
    step = target.step or plan.last.step
    sessions = {k: str(v["session"]) for k, v in plan.last.sessions.items() if v.get("session")}
    lineage = _lineage_steps(records.run_dir)
    sessions.update(lineage)
    present = Checkpoint(
        n=0, kind="undo" if plan.undo else "rewind", step=step,
        label="undo" if plan.undo else f"before rewind to {target.title()}",
        sessions=_positions(records, sessions), exclude=plan.last.exclude,
        modes=plan.modes, dirs=plan.dirs, note=words, became=target.tree,
    )  # fmt: skip
    present.ledger = plan.last.ledger
    store.take(present, tree=plan.tree)
    try:
        changes = store.restore(target, present)
    except CheckpointError:
        raise
    position = target.sessions.get(step) or {}
    session, at = position.get("session"), position.get("at")
    fork = True
    if session and records.store is not None:
        try:  # the session has not moved on since: continue it, no copy needed
            fork = last_message(records.store, records.project_key, session) != at
        except Exception:
            fork = True
    write_pending(
        records.run_dir,
        {
            "step": step, "session": session, "at": at, "fork": fork,
            "prompt": None if plan.undo else target.prompt, "words": words,
            "checkpoint": target.n, "present": present.n,
        },
    )  # fmt: skip
    where = "where the last rewind started" if plan.undo else target.title()
    reason = (
        f"rewound to {where} (checkpoint #{target.n}); the folder as it was is checkpoint"
        f" #{present.n} (flower rewind --undo)"
    )
    row = {
        "step": step, "round": int(target.round or 0), "kind": "rewind",
        "state": "undo" if plan.undo else f"#{target.n}", "reason": reason, "failed": [],
        "cost_usd": 0.0, "session_id": session, "said": words,
    }  # fmt: skip
    record(records, row)
    write_outcome(records.run_dir, "stopped", step=step, why=reason)
    picture(records.workspace, records.run_dir)
    return {"present": present.n, "target": target.n, "changes": changes, "reason": reason}


def _lineage_steps(run_dir: Path) -> dict[str, str]:
    import json

    try:
        data = json.loads((run_dir / "lineage.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    steps = data.get("steps") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in (steps or {}).items() if v}


def _positions(records: RunRecords, sessions: dict[str, str]) -> dict[str, dict[str, str | None]]:
    from flower.workflow.rewind import last_message

    found: dict[str, dict[str, str | None]] = {}
    for step, sid in sessions.items():
        at = None
        if records.store is not None:
            try:
                at = last_message(records.store, records.project_key, sid)
            except Exception:
                at = None
        found[step] = {"session": sid, "at": at}
    return found
