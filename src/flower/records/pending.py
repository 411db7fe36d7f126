"""``<run_dir>/pending.json``: the questions a run is waiting on, beyond its process.

A question lives in the memory of the process that asked it; ``flower status`` (another
process) and a web page (a plugin) cannot see it there, and a process that dies (kill -9,
a reboot, a quit while the question waited) takes it along: the agent's question is
never answered, and the human never sees it again. So the run mirrors its pending
questions to this file as they are asked and settled, with its pid and the step that
asked, and leaves the unanswered ones there when it ends.

The next ``flower`` in the folder finds them (:func:`stale_asks`: the pid is gone), shows
each again and records the human's answer (:func:`answer_stale`); the workflow hands the
answer to the step that asked when it resumes that step's session
(:func:`take_answers`), so the answer reaches the very conversation that asked.

The file sits in the run folder, inside the workspace, which the agents (and a cloned
repository) write: it may be a link, a FIFO, ``/dev/zero``, a huge file or JSON of any
shape. Every read here goes through :func:`_read`: no link followed, no blocking open, a
regular file of at most :data:`MOST_BYTES`, and only entries of the expected types kept
(anything else is as if the question were not there). Before, a link to ``/dev/zero``
in a cloned repository ended the run at its first step, and a FIFO hung it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from flower.kernel.files import atomic_write
from flower.kernel.lang import pick
from flower.records.filelock import locked
from flower.records.untrusted import read_regular

__all__ = [
    "PENDING_NAME",
    "PendingFile",
    "alive",
    "answer_stale",
    "drop_stale",
    "read_pending",
    "stale_asks",
    "take_answers",
]

PENDING_NAME = "pending.json"
#: What the resumed session is told, before its resume prompt: the question it asked
#: before the run stopped, and what the human said now.
LATE_ANSWER = "(上次运行在等人回答你的这个问题时停了:{question}\n人现在的回答:{answer})"
LATE_DECLINE = (
    "(上次运行在等人回答你的这个问题时停了:{question}\n人没有回答:你自己决定,并写明你的假设。)"
)
#: The same in English (:mod:`flower.kernel.lang`).
LATE_ANSWER_EN = (
    "(The last run stopped while waiting for the human to answer this question of yours:"
    " {question}\nTheir answer now: {answer})"
)
LATE_DECLINE_EN = (
    "(The last run stopped while waiting for the human to answer this question of yours:"
    " {question}\nThey gave no answer: decide yourself, and state your assumption.)"
)
_KEYS = ("id", "question", "options", "asked_at", "step")
#: Bytes of the file read at most (a few questions take a few kilobytes).
MOST_BYTES = 1024 * 1024
#: Questions kept from one list at most, options of one, characters of a text.
MOST_ASKS, MOST_OPTIONS, MOST_TEXT = 64, 32, 4000
#: The largest pid ``os.kill`` takes (a bigger one raises instead of answering).
_PID_LIMIT = 2**31


class PendingFile:
    """The pending questions of this process, kept on disk (the others' stay as they are)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / PENDING_NAME
        self.asks: dict[str, dict[str, Any]] = {}

    def update(self, ask: dict[str, Any], step: str | None = None) -> None:
        """Follow one ``ask`` event: add it while asked, drop it once settled. A question
        cancelled because the run is stopping (a quit, SIGTERM) was never answered: it
        stays for the next ``flower``."""
        if ask.get("state") == "cancelled":
            return
        if ask.get("state") == "asked":
            entry = {key: ask.get(key) for key in _KEYS}
            entry["step"] = ask.get("step") or step
            self.asks[str(ask["id"])] = entry
        elif self.asks.pop(str(ask.get("id")), None) is None:
            return
        self._write()

    def clear(self) -> None:
        """The run ends: forget the settled questions; the unanswered stay for the next
        ``flower`` (they become stale the moment this process is gone)."""
        if self.asks:
            return
        with contextlib.suppress(OSError), _held(self.path):
            data = _read(self.path)
            if data.get("pid") == os.getpid() and not data.get("stale"):
                self.path.unlink()

    def _write(self) -> None:
        with contextlib.suppress(OSError), _held(self.path):  # bookkeeping never stops a run
            stale = stale_asks(self.path.parent)  # an earlier run's, kept until delivered
            data = {"pid": os.getpid(), "asks": list(self.asks.values()), "stale": stale}
            _save(self.path, data)


def read_pending(run_dir: Path) -> dict[str, Any]:
    """``{"pid", "asks"}`` of a live run, or ``{}`` (no file, unreadable, its process gone)."""
    data = _read(Path(run_dir) / PENDING_NAME)
    if not data or not alive(data["pid"]):
        return {}
    return {"pid": data["pid"], "asks": list(data["asks"])}


def stale_asks(run_dir: Path) -> list[dict[str, Any]]:
    """Questions a run that is gone was waiting on, unanswered or answered since (with
    ``"answer"``: the human's words, ``""`` for "you decide")."""
    data = _read(Path(run_dir) / PENDING_NAME)
    if not data:
        return []
    left = [dict(a) for a in data["stale"]]
    if not alive(data["pid"]):
        known = {str(a.get("id")) for a in left}
        left += [dict(a) for a in data["asks"] if str(a.get("id")) not in known]
    return left


def answer_stale(run_dir: Path, ask_id: str, answer: str | None) -> bool:
    """Record the human's ``answer`` (``None``: let the agent decide) to a stale question;
    ``False`` when there is no such question waiting."""
    path = Path(run_dir) / PENDING_NAME
    with _held(path):
        left = stale_asks(Path(run_dir))
        found = False
        for ask in left:
            if str(ask.get("id")) == str(ask_id) and ask.get("answer") is None:
                ask["answer"], found = answer or "", True
        if found:
            _save(path, {"pid": 0, "asks": [], "stale": left})
    return found


def take_answers(run_dir: Path, step: str) -> str:
    """The late answers for ``step``'s questions, as text for its resume prompt, taken off
    the file (delivered once). ``""`` when there are none."""
    path = Path(run_dir) / PENDING_NAME
    with contextlib.suppress(OSError), _held(path):
        left = stale_asks(Path(run_dir))
        mine = [a for a in left if a.get("step") == step and a.get("answer") is not None]
        if not mine:
            return ""
        rest = [a for a in left if a not in mine]
        data = _read(path)
        live = data.get("asks", []) if data and alive(data["pid"]) else []
        if rest or live:
            _save(path, {"pid": data.get("pid", 0) if live else 0, "asks": live, "stale": rest})
        else:
            path.unlink()
        return "\n\n".join(_said(a) for a in mine)
    return ""


def _said(ask: dict[str, Any]) -> str:
    question = " ".join(str(ask.get("question") or "").split())
    options = ask.get("options") or []
    if options:
        listed = " / ".join(str(o) for o in options)
        question += pick(f"(选项:{listed})", f" (options: {listed})")
    answer = str(ask.get("answer") or "").strip()
    if not answer:
        return pick(LATE_DECLINE, LATE_DECLINE_EN).format(question=question)
    return pick(LATE_ANSWER, LATE_ANSWER_EN).format(question=question, answer=answer)


def _read(path: Path) -> dict[str, Any]:
    """The file's ``{"pid", "asks", "stale"}`` with every entry of the expected shape, or
    ``{}``: missing, a link, not a regular file, over :data:`MOST_BYTES`, not JSON, or no
    ``pid`` and ``asks`` of the right types."""
    text = read_regular(path, MOST_BYTES)
    if text is None:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("asks"), list):
        return {}
    pid = data.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 <= pid < _PID_LIMIT:
        return {}  # no flower wrote it (a pid no process can have)
    return {
        **data,
        "pid": pid,
        "asks": _asks(data["asks"]),
        "stale": _asks(data.get("stale")),
    }


def _asks(value: Any) -> list[dict[str, Any]]:
    """The questions of a list in the file (:func:`_ask`), at most :data:`MOST_ASKS`."""
    if not isinstance(value, list):
        return []
    shaped = (_ask(entry) for entry in value[: MOST_ASKS * 4])
    return [a for a in shaped if a is not None][:MOST_ASKS]


def _ask(entry: Any) -> dict[str, Any] | None:
    """One question, its fields of the types flower writes (texts cut to
    :data:`MOST_TEXT`), or ``None`` when it is not one."""
    if not isinstance(entry, dict):
        return None
    ask_id, question = entry.get("id"), entry.get("question")
    if isinstance(ask_id, bool) or not isinstance(ask_id, str | int) or str(ask_id) == "":
        return None
    if not isinstance(question, str):
        return None
    options = entry.get("options")
    step, answer, asked_at = entry.get("step"), entry.get("answer"), entry.get("asked_at")
    shaped: dict[str, Any] = {
        "id": str(ask_id)[:64],
        "question": question[:MOST_TEXT],
        "options": [
            o[:MOST_TEXT]
            for o in (options if isinstance(options, list) else [])[:MOST_OPTIONS]
            if isinstance(o, str)
        ],
        "step": step[:MOST_TEXT] if isinstance(step, str) else "",
        "asked_at": asked_at
        if isinstance(asked_at, int | float) and not isinstance(asked_at, bool)
        else None,
    }
    if isinstance(answer, str):
        shaped["answer"] = answer[:MOST_TEXT]
    return shaped


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _held(path: Path) -> contextlib.AbstractContextManager[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return locked(path)


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (one owned by another user counts)."""
    if pid <= 0 or pid >= _PID_LIMIT:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def drop_stale(run_dir: Path) -> None:
    """Forget every stale question (``--new``: the conversation that asked is archived)."""
    path = Path(run_dir) / PENDING_NAME
    with contextlib.suppress(OSError), _held(path):
        data = _read(path)
        if data and alive(data["pid"]):
            _save(path, {**data, "stale": []})
        elif data:
            path.unlink()
