"""A fork stores the original history, never the view ``load()`` gave the CLI.

The load policies (prune, expire, trim) reshape what ``load()`` returns and never change a
stored row: tomorrow's policy must see the whole transcript again. The CLI resumes from
what ``load()`` returned. For a plain resume it only appends new lines, so the view never
reaches the store. A fork is different (measured with the bundled CLI 2.1.332): with
``resume`` + ``fork_session`` the CLI copies the whole transcript it was given into the
new session, same ``uuid`` and ``parentUuid``, the new ``sessionId`` (and its own
``promptId``/``requestSessionId``), and mirrors that copy to the store. Stored as it came,
the fork's rows would be the policies' view: expiry notes and spill pointers in place of
results, the pruning store's healed results as lines, retry-storm errors and old denials
missing, links rewired around them.

So :class:`Handouts` remembers, for each recent ``load()``, which stored lines it handed
out and which lines the policies made up, and the trimming store's append puts the
original back when a handed-out line arrives under another session's key for the same
transcript (a fork; under its own key a line is a duplicate the store skips anyway):

- a handed-out line keeps what the CLI wrote for the fork, with the stored ``message``
  and links (``parentUuid``, ``logicalParentUuid``, ``leafUuid``): the only fields the
  policies change;
- the lines the policies left out of the view go back in, in their stored order, just
  before the next copied line (after the last one, those that followed it), with the
  fork's ``sessionId``: the chain is the original's;
- a line the policies made up (a healed result, ``flowerHealed``) is left out of the copy.
  Its uuid is derived from the call it answers, so the fork's next load makes the same
  line again.

A made-up line becomes a stored one the moment the CLI hangs a line under it (a resume
of a session killed mid-tool: the CLI's next prompt has the healed result as its
parent), under that session's key or a fork's (:meth:`Handouts.anchored`). Left only in
the view, the stored chain would break there: a resume through a store that does not
heal (the bare :class:`~flower.stores.sqlite.SqliteSessionStore`, another tool reading
the database) would walk up from the leaf to the missing line and send only what came
after it, starting with an assistant message.

Only the stored lines a load saw count (the source may grow meanwhile). Lines without a
``uuid`` (titles, ``last-prompt``, queue operations) are not part of a fork's copy, and
are not added. A fork made with the SDK's ``fork_session_via_store`` remaps every uuid,
so it is not recognised: it stores what ``load()`` returned; give it the plain
:class:`~flower.stores.sqlite.SqliteSessionStore` to fork the stored history.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flower.stores.transcript import LINK_FIELDS, Entry

__all__ = ["POLICY_FIELDS", "Handouts"]

#: The fields of a line the load policies may change (content and links).
POLICY_FIELDS = ("message", *LINK_FIELDS)
#: Loads remembered: a resume loads the main transcript and each subagent's.
KEEP_LOADS = 32

Key = tuple[str, str, str]
#: Reads the stored lines of a key (in the worker thread that appends).
Reader = Callable[[Key], list[Entry] | None]


@dataclass
class _Plan:
    """How to put the stored lines back, built from the rows the load saw."""

    original: dict[str, Entry] = field(default_factory=dict)
    before: dict[str, list[Entry]] = field(default_factory=dict)
    last: str | None = None
    after: list[Entry] = field(default_factory=list)


@dataclass
class _Handout:
    key: Key
    given: frozenset[str]
    made: frozenset[str]
    rows: int  # stored lines the load saw
    plan: _Plan | None = None
    made_lines: dict[str, Entry] = field(default_factory=dict)


class Handouts:
    """What recent loads handed out, so a copy written back is stored as the original."""

    def __init__(self, keep: int = KEEP_LOADS) -> None:
        self._keep = keep
        self._loads: OrderedDict[Key, _Handout] = OrderedDict()
        self._owner: dict[str, Key] = {}
        self._lock = threading.Lock()
        #: A fork's key -> the key whose view it copied, set by :meth:`restore` when it
        #: meets one (the store takes it to hand the fork its parent's marks).
        self.forked_from: dict[Key, Key] = {}

    def record(self, key: Key, stored: int, view: list[Entry]) -> None:
        """``load()`` of ``key`` read ``stored`` lines and handed out ``view``.

        Its own pass over the view, after the policies (not the load's scan): the uuid
        sets then never sit beside the scan's facts at the load's peak of memory.
        """
        healed: dict[str, Entry] = {}
        handed: set[str] = set()
        for e in view:  # one pass: a load of a long session hands out thousands of lines
            u = e.get("uuid")
            if u.__class__ is str:
                if e.get("flowerHealed") is True:
                    healed[u] = e
                else:
                    handed.add(u)
        made, given = frozenset(healed), frozenset(handed - set(healed))
        with self._lock:
            # a load of the same key again hands out mostly the same lines: only those
            # it no longer does are forgotten, the rest are owned by it again at once
            self._forget(key, keep=given | made)
            self._loads[key] = _Handout(key, given, made, stored, made_lines=healed)
            self._owner.update(dict.fromkeys(given, key))
            self._owner.update(dict.fromkeys(made, key))
            while len(self._loads) > self._keep:
                self._forget(next(iter(self._loads)))

    def restore(self, key: Key, entries: list[Entry], read: Reader) -> list[Entry]:
        """``entries`` for ``key`` with every copy of a handed-out line made the original."""
        with self._lock:
            if not self._owner:
                return entries
            owners: dict[str, _Handout] = {}
            for entry in entries:
                uid = entry.get("uuid")
                source = self._owner.get(uid) if isinstance(uid, str) else None
                if isinstance(uid, str) and source is not None and _forked(source, key):
                    owners[uid] = self._loads[source]
        if not owners:
            return entries
        self.forked_from[key] = next(iter(owners.values())).key
        for seen in {id(h): h for h in owners.values()}.values():
            if seen.plan is None:  # once per load, from the rows that load saw
                seen.plan = _plan((read(seen.key) or [])[: seen.rows], seen.given)
        out: list[Entry] = []
        for entry in entries:
            uid = entry.get("uuid")
            found = owners.get(uid) if isinstance(uid, str) else None
            if found is None or found.plan is None or not isinstance(uid, str):
                out.append(entry)
            elif uid in found.made:
                continue  # made up by the policies: the next load makes it again
            elif uid not in found.plan.original:
                out.append(entry)
            else:
                plan, sid = found.plan, entry.get("sessionId")
                out.extend(_moved(row, sid) for row in plan.before.get(uid, ()))
                out.append(_restored(entry, plan.original[uid]))
                if uid == plan.last:
                    out.extend(_moved(row, sid) for row in plan.after)
        return out

    def anchored(self, key: Key, entries: list[Entry]) -> list[Entry]:
        """``entries`` for ``key`` with each made-up line a row hangs under put in just
        before that row (under the row's session id), so the stored chain holds it: the
        line a recent load of ``key``, or of the session ``key`` forked from, made up.
        ``entries`` itself when no row hangs under one. A line stored already is skipped
        by the store's own idempotency (by ``uuid``)."""
        with self._lock:
            if not self._owner:
                return entries
            out: list[Entry] = []
            placed: set[str] = set()
            for entry in entries:
                parent = entry.get("parentUuid")
                if isinstance(parent, str) and parent not in placed:
                    source = self._owner.get(parent)
                    handout = self._loads.get(source) if source is not None else None
                    line = handout.made_lines.get(parent) if handout is not None else None
                    if line is not None and _same_transcript(source, key):
                        out.append({**line, "sessionId": entry.get("sessionId", key[1])})
                        placed.add(parent)
                out.append(entry)
        return out if placed else entries

    def _forget(self, key: Key, keep: frozenset[str] = frozenset()) -> None:
        """Drop the load of ``key`` and its lines' ownership (but of ``keep``: the caller
        gives those to ``key`` again)."""
        old = self._loads.pop(key, None)
        if old is None:
            return
        for uid in (old.given | old.made) - keep:
            if self._owner.get(uid) == key:
                del self._owner[uid]


def _same_transcript(source: Key | None, key: Key) -> bool:
    """Whether ``key`` is ``source``'s transcript or a fork's copy of it."""
    return source is not None and source[0] == key[0] and source[2] == key[2]


def _forked(source: Key, key: Key) -> bool:
    """Whether lines of ``source`` written under ``key`` are a fork's copy: the same
    project and transcript (main, or the same subagent's), another session."""
    return source[0] == key[0] and source[2] == key[2] and source[1] != key[1]


def _plan(rows: list[Entry], given: frozenset[str]) -> _Plan:
    plan = _Plan()
    left_out: list[Entry] = []
    for row in rows:
        uid = row.get("uuid")
        if not isinstance(uid, str):
            continue  # metadata: never part of a fork's copy
        if uid in given:
            plan.original[uid] = row
            plan.before[uid], left_out = left_out, []
            plan.last = uid
        else:
            left_out.append(row)
    plan.after = left_out
    return plan


def _restored(copy: Entry, original: Entry) -> Entry:
    row = dict(copy)
    for name in POLICY_FIELDS:
        if name in original:
            row[name] = original[name]
        else:
            row.pop(name, None)
    return row


def _moved(row: Entry, session_id: Any) -> Entry:
    return {**row, "sessionId": session_id} if session_id is not None else dict(row)
