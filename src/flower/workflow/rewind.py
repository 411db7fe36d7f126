"""Where the run stood at each checkpoint, and the rewind the next step picks up.

A checkpoint of the files alone would bring back round 2's folder to a coordinator
that remembers rounds 3 to 5: it would "fix" work that is no longer there. So every
checkpoint (:mod:`flower.records.checkpoints`) also records the position of each of the
run's sessions at that moment (the session id and the uuid of its last message in the
store) and the ledger row it follows. A rewind writes ``run_dir/rewind.json``: the step
to continue, the session and message to continue it from, what the round was sent and
the human's new words. The workflow's next attempt of that step forks the session at
that message (``Runtime.run(resume=…, fork=True, resume_at=…)``): the conversation as
it stood, the later one kept in the store but not continued, and the fork goes on
in the lineage from then on.

Checkpoints are bookkeeping: nothing here ever fails a step. A checkpoint that cannot be
taken (no git, a full disk) is said once on stderr and the run goes on.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from flower.kernel.files import atomic_write
from flower.records.checkpoints import Checkpoint, CheckpointError, Checkpoints

__all__ = [
    "DISABLE_ENV",
    "PENDING_NAME",
    "checkpoints_for",
    "last_message",
    "pending",
    "position_of",
    "take",
    "take_pending",
    "write_pending",
]

PENDING_NAME = "rewind.json"
#: ``FLOWER_CHECKPOINTS=0`` takes none (a workspace too big to copy, a test of something else).
DISABLE_ENV = "FLOWER_CHECKPOINTS"
#: Said once per process when checkpoints cannot be taken.
_warned: set[str] = set()


def checkpoints_for(runtime: Any) -> Checkpoints | None:
    """The run's checkpoints, or ``None`` when it keeps none (switched off, no run)."""
    if os.environ.get(DISABLE_ENV, "").strip() in ("0", "false", "no", "off"):
        return None
    run_dir, workspace = getattr(runtime, "run_dir", None), getattr(runtime, "workspace", None)
    if run_dir is None or workspace is None:
        return None
    from flower.records.ledger import run_id_of

    return Checkpoints(workspace, run_dir, run_id_of(runtime))


def excluded(runtime: Any) -> list[str]:
    """flower's own records inside the workspace, relative to it: never checkpointed,
    never restored (the run folder, the spill and archive folders, the run id, and what
    the workflow froze: the brief, the goal, the verdict record, the question log)."""
    from flower.roles.sandbox import protected_paths

    workspace = Path(runtime.workspace).resolve()
    found = protected_paths(Path(runtime.run_dir), getattr(runtime, "workbench", None))
    found += [Path(p) for p in getattr(runtime, "protected", ())]
    inside: list[str] = []
    for path in found:
        try:
            rel = Path(path).resolve().relative_to(workspace).as_posix()
        except ValueError:
            continue
        if rel and rel != "." and rel not in inside:
            inside.append(rel)
    return inside


def last_message(store: Any, project_key: str | None, session_id: str) -> str | None:
    """The uuid of ``session_id``'s last user or assistant line in the store (what the
    CLI can resume at), or ``None``; any project key when ``project_key`` is ``None`` (a
    session id is unique). The store's ``last_lines`` on SQL stores (a coordinator's
    history is megabytes; its last line is one row), the protocol's ``load`` otherwise."""
    reader = getattr(store, "last_lines", None)  # the SQL stores' one-query path
    rows: list[tuple[Any, Any]] = []
    if reader is not None:
        rows = list(reader(session_id, project_key))
    else:
        from flower.runtime.assembly import run_sync

        async def load() -> Any:
            return await store.load({"project_key": project_key, "session_id": session_id})

        rows = [(e.get("uuid"), e) for e in reversed(run_sync(load) or [])]
    for uid, entry in rows:
        line = json.loads(entry) if isinstance(entry, str) else entry
        if not uid or not isinstance(line, dict) or line.get("isApiErrorMessage"):
            continue
        if line.get("type") in ("user", "assistant") and not line.get("isSidechain"):
            return str(uid)
    return None


def position_of(runtime: Any, sessions: dict[str, str]) -> dict[str, dict[str, str | None]]:
    """Each step's session and the uuid of its last message, as the store holds them."""
    store, found = getattr(runtime, "store", None), {}
    for step, sid in sessions.items():
        at = None
        try:
            at = last_message(store, runtime.project_key, sid) if store is not None else None
        except Exception:  # a position unknown is resumed whole, never a failed step
            at = None
        found[step] = {"session": sid, "at": at}
    return found


def _ledger_position(runtime: Any) -> dict[str, Any]:
    reader = getattr(getattr(runtime, "store", None), "rulings", None)
    if not callable(reader):
        return {}
    from flower.records.ledger import run_id_of

    try:
        rows = reader(run_id_of(runtime))
    except Exception:
        return {}
    last = rows[-1] if rows else {}
    keys = ("kind", "step", "round", "state", "at")
    return {"rows": len(rows), "last": {k: last.get(k) for k in keys} if last else None}


def take(
    runtime: Any,
    sessions: dict[str, str],
    *,
    kind: str,
    step: str,
    label: str = "",
    round_: int | None = None,
    prompt: str | None = None,
    note: str = "",
) -> Checkpoint | None:
    """A checkpoint of the workspace and of where every session stands; ``None`` (said
    once on stderr) when it cannot be taken. Never raises."""
    try:
        store = checkpoints_for(runtime)
        if store is None:
            return None
        checkpoint = Checkpoint(
            n=0, kind=kind, step=step, label=label or step, round=round_,
            sessions=position_of(runtime, dict(sessions)), ledger=_ledger_position(runtime),
            prompt=prompt, exclude=excluded(runtime), note=note,
        )  # fmt: skip
        return store.take(checkpoint)
    except (CheckpointError, OSError, ValueError) as exc:
        why = str(exc)
        if why not in _warned:
            _warned.add(why)
            print(f"flower: no checkpoint of the workspace this round: {why}", file=sys.stderr)
        return None


# --- the rewind the next step picks up ---------------------------------------------------


def write_pending(run_dir: Path, data: dict[str, Any]) -> None:
    """What the next attempt of ``data["step"]`` continues from (``run_dir/rewind.json``)."""
    atomic_write(Path(run_dir) / PENDING_NAME, json.dumps({**data, "written": time.time()}))


def pending(run_dir: Path) -> dict[str, Any] | None:
    """The rewind waiting for its step, or ``None``."""
    try:
        data = json.loads((Path(run_dir) / PENDING_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("step") else None


def take_pending(run_dir: Any, step: str) -> dict[str, Any] | None:
    """The rewind waiting for ``step`` (left on disk until :func:`done_pending`)."""
    if run_dir is None:
        return None
    data = pending(Path(run_dir))
    return data if data is not None and data.get("step") == step else None


def done_pending(run_dir: Any) -> None:
    """The rewound step has its session: the next wake continues that one."""
    if run_dir is not None:
        (Path(run_dir) / PENDING_NAME).unlink(missing_ok=True)


REWOUND_SAID = (
    "(flower 把工作区和这段对话倒回到了这一轮开始的时候;之后做过的事都已撤销。)人倒回来时说:{said}"
)
REWOUND_SAID_EN = (
    "(flower took the workspace and this conversation back to the start of this round;"
    " what was done after it is undone.) On going back, the human said: {said}"
)


def rewound_prompt(data: dict[str, Any], fallback: str) -> str:
    """The prompt of the rewound attempt: the one the round was sent (``fallback`` when
    the checkpoint kept none), then the human's new words when they gave any."""
    from flower.kernel.lang import pick

    prompt = data.get("prompt") or fallback
    said = str(data.get("words") or "").strip()
    if not said:
        return prompt
    return f"{prompt}\n\n{pick(REWOUND_SAID, REWOUND_SAID_EN).format(said=said)}"
