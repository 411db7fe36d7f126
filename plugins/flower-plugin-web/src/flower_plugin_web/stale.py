"""The questions a dead run left in ``<run_dir>/pending.json``, read as the page must.

``flower.core.pending`` keeps the questions a run waits on in that file; the page lists
the ones a run that is gone left unanswered (``GET /state``) and takes their answers.
But the run folder sits in the workspace, which the agents (and a cloned repository)
write: ``pending.json`` may be a FIFO (reading it once froze every route of the page,
the read being on the server's loop), a link to ``/dev/zero`` (2.2 GB in 2 s), a huge
file, or JSON of any shape. So here the file is read off the loop by the caller, with
:func:`flower_plugin_web.docs.read_file` (``O_NOFOLLOW``, ``O_NONBLOCK``, a regular file
only, at most :data:`PENDING_BYTES`), and only entries of the expected types are kept:
anything else is as if there were no such question, never an error.

The semantics are ``flower.core.pending.stale_asks``'s: the file's ``stale`` list, plus
its ``asks`` once the process that wrote them (``pid``) is gone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from flower_plugin_web.docs import read_file

#: Bytes of ``pending.json`` read at most (a few questions take a few kilobytes).
PENDING_BYTES = 1024 * 1024
#: Questions kept from the file at most, and characters of a question, an option, a step.
MOST_ASKS, MOST_OPTIONS, TEXT = 64, 32, 4000
NAME = "pending.json"


def stale_asks(run_dir: Path) -> list[dict[str, Any]]:
    """The stale questions of ``run_dir``, each ``{"id", "question", "options", "step",
    "answer"}`` with those types (``answer``: ``None`` while unanswered); ``[]`` when the
    file is missing, not a regular file, too big, not JSON or not of the expected shape."""
    from flower.core.pending import alive

    read = read_file(run_dir / NAME, PENDING_BYTES)
    if read.text is None or read.cut:
        return []
    try:
        data = orjson.loads(read.text)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(data, dict):
        return []
    pid = data.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, int):
        return []
    left = [a for a in map(_ask, _listed(data.get("stale"))) if a is not None]
    if not (0 < pid < 2**31 and alive(pid)):  # os.kill() of a huge pid raises
        known = {a["id"] for a in left}
        mine = [a for a in map(_ask, _listed(data.get("asks"))) if a is not None]
        left += [a for a in mine if a["id"] not in known]
    return left[:MOST_ASKS]


def _listed(value: Any) -> list[Any]:
    return value[: MOST_ASKS * 4] if isinstance(value, list) else []


def _ask(entry: Any) -> dict[str, Any] | None:
    """One question of the file, or ``None`` when it is not one."""
    if not isinstance(entry, dict):
        return None
    ask_id, question = entry.get("id"), entry.get("question")
    if isinstance(ask_id, bool) or not isinstance(ask_id, (str, int)) or str(ask_id) == "":
        return None
    if not isinstance(question, str):
        return None
    options = entry.get("options")
    options = options if isinstance(options, list) else []
    step, answer = entry.get("step"), entry.get("answer")
    return {
        "id": str(ask_id)[:64],
        "question": question[:TEXT],
        "options": [o[:TEXT] for o in options[:MOST_OPTIONS] if isinstance(o, str)],
        "step": step[:TEXT] if isinstance(step, str) else "",
        "answer": answer if isinstance(answer, str) else None,
    }
