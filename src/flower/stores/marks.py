"""Where the last load of a session drew its mask and expiry boundaries, kept in the store.

The load policies change old tool results so the prompt cache survives: the boundary
below which results are masked or expired moves in chunks while the cache is warm and
all the way when it is cold (:func:`~flower.stores.mask.boundary`). Drawn again from the
stored lines at every load, the boundary could come out nearer than last time: the cold
resumes of the past are read off timestamps, and the CLI writes lines (``queue-operation``)
stamped with the prompt's own time just before it, so a past cold resume can look warm.
A nearer boundary shows results whole again that the last request sent masked, and the
API then writes everything after the first of them anew (measured from outside on real
transcripts: a warm resume after a cold one cost 2.8-6.9x a bare resume).

So each load remembers, per session key, how far it went: the count of the oldest
counted results below each boundary and the ``tool_use_id`` of the newest of them. The
next load of that key starts from there and only goes further. The id places the mark
again when pruning has dropped older lines since (an old denial leaves when a newer one
comes); the count serves when the id is gone. A fork (a new session copying the view)
takes its parent's marks, since its first request is the parent's view.
"""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from flower.stores.engine import WRITE
from flower.stores.schema import view_marks

__all__ = [
    "Mark",
    "MarkBook",
    "copy_marks",
    "load_marks",
    "mark_of",
    "place",
    "quiet_load",
    "quiet_save",
    "save_marks",
]

#: ``(tool_use_id of the newest result below the boundary, how many are below)``.
Mark = tuple[str, int]
Key = tuple[str, str, str]


def _where(key: Key) -> Any:
    project_key, session_id, subpath = key
    return (
        (view_marks.c.project_key == project_key)
        & (view_marks.c.session_id == session_id)
        & (view_marks.c.subpath == subpath)
    )


def load_marks(engine: Engine, key: Key) -> dict[str, Mark]:
    """The marks the last load of ``key`` left (``{}``: none yet): ``mask``, ``expiry``
    and ``anchor`` (the result flower's cache mark sits on, :mod:`flower.stores.anchor`),
    each where it was written."""
    query = sa.select(view_marks.c.mask, view_marks.c.expiry).where(_where(key))
    with engine.connect() as conn:
        row = conn.execute(query).first()
    if row is None:
        return {}
    out: dict[str, Mark] = {}
    for name, value in (("mask", row[0]), ("expiry", row[1])):
        if not isinstance(value, list):
            continue
        if len(value) >= 2 and isinstance(value[0], str) and _count(value[1]):
            out[name] = (value[0], value[1])
        if name == "mask" and len(value) == 4 and isinstance(value[2], str) and _count(value[3]):
            out["anchor"] = (value[2], value[3])
    return out


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def save_marks(engine: Engine, key: Key, marks: dict[str, Mark]) -> None:
    """Keep ``marks`` for ``key`` (the newest write wins; a load only writes further ones).

    The anchor rides in the mask column, after the mask's own pair (``[id, count,
    anchor id, anchor count]``; ``[null, 0, ...]`` without a mask): a column of its
    own would need a migration for one optional pair, and a reader that knows only the
    pair skips a longer list and draws the boundaries from the lines."""
    mask: list[Any] | None = list(marks["mask"]) if "mask" in marks else None
    if "anchor" in marks:
        mask = [*(mask or [None, 0]), *marks["anchor"]]
    values = {
        "mask": mask,
        "expiry": list(marks["expiry"]) if "expiry" in marks else None,
        "updated_at": time.time(),
    }
    project_key, session_id, subpath = key
    with engine.connect().execution_options(**WRITE) as conn, conn.begin():
        if not conn.execute(view_marks.update().where(_where(key)).values(**values)).rowcount:
            conn.execute(
                view_marks.insert().values(
                    project_key=project_key, session_id=session_id, subpath=subpath, **values
                )
            )


def quiet_load(engine: Engine, key: Key | None) -> dict[str, Mark]:
    """:func:`load_marks` for a load, which must succeed without them: ``{}`` without a
    key or a readable row (the boundaries are then drawn from the lines alone)."""
    if key is None:
        return {}
    try:
        return load_marks(engine, key)
    except Exception:
        return {}


def quiet_save(
    engine: Engine, key: Key | None, before: dict[str, Mark], now: dict[str, Mark]
) -> None:
    """Keep this load's marks when they moved; never raises."""
    if key is None or not now or now == before:
        return
    try:
        save_marks(engine, key, now)
    except Exception:
        return


def copy_marks(engine: Engine, source: Key, key: Key) -> None:
    """Give ``key`` (a fork) the marks of ``source`` unless it has its own."""
    marks = load_marks(engine, source)
    if marks and not load_marks(engine, key):
        save_marks(engine, key, marks)


def place(mark: Mark | None, ids: list[str]) -> int:
    """How many of the oldest results (``ids``: their ``tool_use_id``, oldest first) the
    mark covers now: up to and including its id where that is still there, else its
    count; never more than there are."""
    if mark is None:
        return 0
    wanted, count = mark
    start = min(count, len(ids)) - 1
    for back in range(start, -1, -1):  # where it was: found at once unless lines went
        if ids[back] == wanted:
            return back + 1
    for ahead in range(max(start + 1, 0), len(ids)):
        if ids[ahead] == wanted:
            return ahead + 1
    return min(count, len(ids))


def mark_of(ids: list[str], reach: int) -> Mark | None:
    """The mark for the oldest ``reach`` results (``None`` for none)."""
    return (ids[reach - 1], reach) if reach > 0 else None


class MarkBook:
    """A store's marks, read once per key and process, then kept in memory and written
    through when they move (a load reads none from the database after the first)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._known: dict[Key, dict[str, Mark]] = {}

    def get(self, key: Key | None) -> dict[str, Mark]:
        if key is None:
            return {}
        marks = self._known.get(key)
        if marks is None:
            marks = self._known[key] = quiet_load(self._engine, key)
        return marks

    def put(self, key: Key | None, before: dict[str, Mark], now: dict[str, Mark]) -> None:
        if key is None or not now:
            return
        quiet_save(self._engine, key, before, now)
        self._known[key] = now

    def forget(self, project_key: str, session_id: str, subpath: str = "") -> None:
        """A deleted session's marks (a main key's take its subagents' along)."""
        for known in [k for k in self._known if k[:2] == (project_key, session_id)]:
            if not subpath or known[2] == subpath:
                del self._known[known]
