"""Lineage: which session each step last used, kept on disk so a new process continues it.

Everything else a run needs survives a killed process by itself (the transcripts are in
the session store, the brief and the goal are frozen files, the code is in the
workspace). The one thing that lived only in memory was the map "step -> session id";
without it the next process starts every step with an amnesiac. ``<run_dir>/lineage.json``
holds that map::

    {"workspace": "/home/you/proj", "woke": 3, "steps": {"干活": "47395075-…"}}

Two invariants (seed 001):

- written the moment an id is known (:meth:`Lineage.remember`), not when a step ends:
  the kill that loses the end of a step is exactly the case this file is for;
- anything that does not fit is treated as absent, never as an error: another
  workspace's file (the store's project key derives from the workspace path, so a moved
  folder's old ids cannot be found anyway), an unreadable file, a session gone from the
  store. Continuity is a convenience; losing it must not stop anyone working. It is not
  silent either: :attr:`Lineage.notice` says what was found and not used.

Writes are read-merge-write under the lock ``manifest.json`` uses, so two flower
processes in one run directory keep each other's steps (the original overwrote the
whole file and lost them): the step being remembered wins, every other step on disk
stays, ``woke`` never goes down.

A run travels with its folder. The file also holds a run id (``"run"``), and when the
workspace it names is not this one, :meth:`Lineage.open` tells three cases apart:

- **moved** (``mv proj proj2``): the folder it names no longer holds this run. The same
  run continues here: ``adopt(old_workspace, session_ids)`` (typically
  ``Runtime.adopt_sessions``) copies the steps' sessions to this workspace's project key,
  the file is rewritten for this workspace, and :attr:`Lineage.notice` says so;
- **copied** (``cp -r proj proj2``): the old folder still holds a lineage of the same run.
  The copy continues as a fork: same sessions (copied to its own key, so the original's
  are never appended to), a new run id, and the original's files untouched;
- **foreign**: anything else (a ``--run-dir`` outside the workspace that another,
  still existing, workspace uses).

A file written for another workspace, or one that cannot be parsed, is never
overwritten: our first write moves it aside (``lineage.json.foreign-<time>`` /
``lineage.json.corrupt-<time>``) and starts a fresh file. It cannot serve this
workspace, and it may still be what another checkout, or a human, is looking for.

An unreadable file loses nothing the store still has: the run's id is in the workbench
and its lineage in the session store (``records/runstate.py``), so before the lineage is
opened :func:`set_aside_corrupt` moves such a file aside and the run is restored from the
store exactly as for a missing file: same run id, same sessions. The notice says where
the unreadable file went.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import unicodedata
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from flower.kernel.files import atomic_write, check_write
from flower.records.filelock import locked, move_aside

__all__ = ["LINEAGE_NAME", "Lineage", "continuing_run", "set_aside_corrupt"]

LINEAGE_NAME = "lineage.json"

#: Unreadable lineage files :func:`set_aside_corrupt` moved, by the path they had; the
#: next :meth:`Lineage.open` of that path says so in its notice.
_SET_ASIDE: dict[str, Path] = {}


class Lineage:
    """``<run_dir>/lineage.json`` as one process sees it.

    Attributes:
        path: The file.
        workspace: The workspace this lineage belongs to (resolved).
        steps: Step name -> session id, as far as this process can use them.
        woke: How many times this workspace's work was started (the first run is 1).
        notice: Why something on disk was not used, or what was done to use it (a moved
            or copied folder), one English line ("" when nothing needed saying); for the
            wake-up line, never raised.
        last_error: The last write that failed (an ``OSError`` text), or ``None``.
        run: The run's id: made on the first write, kept when the folder moves, new in
            a copy.
        moved_from: The workspace this run was in before it moved here, or ``None``.
        forked_from: The workspace this one is a copy of, or ``None``.
    """

    def __init__(self, path: str | Path, workspace: str | Path) -> None:
        self.path = Path(path)
        self.workspace = _canonical(workspace)
        self.steps: dict[str, str] = {}
        self.woke = 0
        self.notice = ""
        self.last_error: str | None = None
        self.run = ""
        self.moved_from: Path | None = None
        self.forked_from: Path | None = None
        self._relocated = False  # the file names another workspace, and we take it over
        self._mine: dict[str, str] = {}  # what this object remembered: wins on merge
        self._dead: set[tuple[str, str]] = set()  # pairs alive() refused: never shown again
        #: Called with the document after every write (``records/runstate.py`` keeps it in
        #: the session store); never allowed to fail the write.
        self.mirror: Callable[[dict[str, Any]], None] | None = None

    def __repr__(self) -> str:
        return f"Lineage({str(self.path)!r}, woke={self.woke}, steps={self.steps!r})"

    # --- reading --------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        run_dir: str | Path,
        workspace: str | Path,
        *,
        alive: Callable[[str], bool] | None = None,
        adopt: Callable[[Path, list[str]], int] | None = None,
        mirror: Callable[[dict[str, Any]], None] | None = None,
    ) -> Lineage:
        """The lineage of ``workspace`` in ``run_dir``; empty when there is none to use.

        ``alive(session_id)`` (typically ``Runtime.has_session``) vets every pair: the
        file can outlive ``sessions.db``, and resuming a session that is gone fails only
        after the CLI has started. A checker that raises counts as "gone" for this run;
        the pair stays on disk.

        ``adopt(old_workspace, session_ids)`` (typically ``Runtime.adopt_sessions``)
        makes a moved or copied run's sessions resumable here, before they are vetted;
        without it such a run is treated as foreign. A copier that raises adopts none.

        ``mirror(document)`` is called after every write from now on (the run's state
        in the store, ``records/runstate.py``).
        """
        lineage = cls(Path(run_dir).expanduser().absolute() / LINEAGE_NAME, workspace)
        lineage.mirror = mirror
        aside = _SET_ASIDE.pop(str(lineage.path), None)
        if aside is not None:
            lineage.notice = f"{lineage.path} was unreadable: set aside as {aside.name}"
        state, data = lineage._read()
        if state == "corrupt":
            lineage.notice = f"{lineage.path} is unreadable; starting without a lineage"
            return lineage
        if state == "foreign" and adopt is not None:
            state = lineage._relocate(data, adopt)
        if state == "foreign":
            foreign = (
                f"{lineage.path} belongs to the workspace {data.get('workspace')!r},"
                " not this one; starting without a lineage"
            )
            lineage.notice = "; ".join(filter(None, [lineage.notice, foreign]))
            return lineage
        if state == "missing":
            return lineage
        if not lineage.run:
            lineage.run = _run_id(data)
        lineage.woke = _woke(data)
        gone: list[str] = []
        for step, sid in _steps(data).items():
            if alive is not None and not _alive(alive, sid):
                lineage._dead.add((step, sid))
                gone.append(step)
                continue
            lineage.steps[step] = sid
        if gone:
            lineage.notice = "; ".join(
                filter(
                    None,
                    [
                        lineage.notice,
                        f"the sessions of {', '.join(repr(s) for s in gone)} are no longer"
                        " in the session store; those steps start fresh",
                    ],
                )
            )
        if lineage._relocated:
            lineage._flush()  # the file names this workspace (and the fork's id) from now on
        return lineage

    def _relocate(self, data: dict[str, Any], adopt: Callable[[Path, list[str]], int]) -> str:
        """Take over a moved or copied run (``"ours"``), or leave it foreign."""
        old = _canonical(data["workspace"])
        run = _run_id(data)
        copy_of = self._original(old, run)
        if copy_of is None and os.path.exists(old) and not _inside(self.path, self.workspace):
            return "foreign"  # a run_dir shared by path with a workspace that still exists
        sessions = list(dict.fromkeys(_steps(data).values()))
        try:
            copied = adopt(old, sessions)
        except Exception as exc:  # continuity must not stop the work; the notice says it
            copied = 0
            self.notice = f"could not copy the sessions from {old}: {exc}"
        self._relocated = True
        if copy_of is not None:
            self.forked_from, self.run = old, _new_run_id()
            said = f"this folder is a copy of {old}: it continues as a fork (run {self.run})"
        else:
            self.moved_from, self.run = old, run or _new_run_id()
            said = f"the run moved here from {old}"
        self.notice = "; ".join(
            filter(None, [f"{said}; {copied} of {len(sessions)} sessions re-keyed", self.notice])
        )
        return "ours"

    def _original(self, old: Path, run: str) -> Path | None:
        """``old`` when it still holds this run (so this folder is a copy of it)."""
        if not _inside(self.path, self.workspace):
            return None
        twin = old / _canonical(self.path).relative_to(self.workspace)
        try:
            theirs = json.loads(twin.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(theirs, dict) or not isinstance(theirs.get("workspace"), str):
            return None
        same_place = _canonical(theirs["workspace"]) == old
        same_run = not run or _run_id(theirs) == run
        return old if same_place and same_run else None

    # --- writing --------------------------------------------------------------------

    def remember(self, step: str, session_id: str) -> None:
        """Record that ``step`` now runs in ``session_id``, on disk at once."""
        if not isinstance(step, str) or not step:
            raise ValueError(f"a lineage step needs a non-empty name, not {step!r}")
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(f"step {step!r} needs a non-empty session id, not {session_id!r}")
        self.steps[step] = session_id
        self._mine[step] = session_id
        self._flush(step=step)

    def bump(self) -> int:
        """Count one more wake-up, on disk at once; returns the new count.

        Counted from what is on disk at that moment, so two processes starting together
        are two wake-ups, not one.
        """
        self._flush(bump=True)
        return self.woke

    def archive(self, into: str | Path, *, extra: Iterable[str | Path] = ()) -> Path:
        """Move this lineage (and each existing ``extra`` file) into a new archive folder.

        The folder is ``<into>/<YYYYmmdd-HHMMSS>`` (``-2``, ``-3`` when taken); nothing is
        deleted, and ``sessions.db`` is not touched. ``extra`` is typically the brief and
        the goal: the three are one stretch of history, and archiving only part of it
        would leave a goal without its conversation. Afterwards ``steps`` is empty and
        ``woke`` is 0. Returns the folder. An ``OSError`` while moving is raised: unlike
        a lineage write, archiving is something a human asked for; so is a
        :class:`~flower.records.workbench.LinkedWrite` (an ``OSError``) when ``into`` lies in a
        workbench whose folder on the way is a symlink: nothing is moved out through it.
        """
        into = Path(into).expanduser()
        check_write(into / "archived")  # before the new folder is made through a link
        dest = _new_folder(into)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.path):
            for item in (self.path, *(Path(p) for p in extra)):
                if item.is_file():
                    shutil.move(str(item), str(_free_name(dest / item.name)))
            self.steps, self.woke, self._mine, self._dead = {}, 0, {}, set()
            self.notice = ""
        return dest

    def _flush(self, *, step: str | None = None, bump: bool = False) -> None:
        """Read-merge-write under the lock; an ``OSError`` is recorded, never raised.

        The step being remembered wins; every other step on disk stays as the disk has
        it (another process may have moved it on since we remembered it); a step this
        object remembered and the disk has lost (moved aside, deleted) comes back.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with locked(self.path):
                state, data = self._read()
                disk: dict[str, str] = {}
                woke = self.woke
                if state == "ours" or (state == "foreign" and self._relocated):
                    disk, woke = _steps(data), max(woke, _woke(data))
                    self.run = self.run or _run_id(data)
                elif state in ("foreign", "corrupt"):
                    move_aside(self.path, state)
                self.run = self.run or _new_run_id()
                merged = {**self._mine, **disk}
                if step is not None:
                    merged[step] = self._mine[step]
                if bump:
                    woke += 1
                payload = {
                    "workspace": str(self.workspace),
                    "run": self.run,
                    "woke": woke,
                    "steps": merged,
                }
                atomic_write(self.path, json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        except OSError as exc:  # continuity must never stop the work
            self.last_error = f"{type(exc).__name__}: {exc}"
            if bump:
                self.woke += 1
            return
        self.last_error = None
        self._relocated = False  # written for this workspace now
        if self.mirror is not None:
            try:
                self.mirror(payload)
            except Exception as exc:  # a copy elsewhere must not undo the write here
                print(f"flower: could not mirror {self.path}: {exc}", file=sys.stderr)
        self.woke = woke
        self.steps = {k: v for k, v in merged.items() if (k, v) not in self._dead}

    def _read(self) -> tuple[str, dict[str, Any]]:
        """``(state, data)``: state is ``missing``, ``corrupt``, ``foreign`` or ``ours``."""
        state, data = _document(self.path)
        if state != "readable":
            return state, data
        if _canonical(data["workspace"]) != self.workspace:
            return "foreign", data
        return "ours", data


def _document(path: Path) -> tuple[str, dict[str, Any]]:
    """``(state, data)`` of a lineage file: ``missing``, ``corrupt`` or ``readable``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return "missing", {}
    except OSError:
        return "corrupt", {}
    try:  # not UTF-8 is as corrupt as not JSON (UnicodeDecodeError is a ValueError)
        data = json.loads(raw.decode("utf-8"))
    except ValueError:
        return "corrupt", {}
    if not isinstance(data, dict) or not isinstance(data.get("workspace"), str):
        return "corrupt", {}
    if not isinstance(data.get("steps", {}), dict):
        return "corrupt", {}
    return "readable", data


def set_aside_corrupt(path: str | Path) -> Path | None:
    """Move an unreadable lineage file aside (``lineage.json.corrupt-<time>``), under its
    lock; where it went, or ``None`` when it is missing or readable.

    For the restore from the store (``records/runstate.py``), which only fills a missing
    file: an unreadable one is then restored like a missing one, not started over with a
    new run id. Nothing is deleted. An ``OSError`` while moving leaves the file where it
    is (the lineage then reads it as unreadable, as before) and returns ``None``.
    """
    path = Path(path).expanduser().absolute()
    try:
        if _document(path)[0] != "corrupt":
            return None
        with locked(path):
            if _document(path)[0] != "corrupt":  # another flower got here first
                return None
            aside = move_aside(path, "corrupt")
    except OSError as exc:
        print(f"flower: could not set {path} aside: {exc}", file=sys.stderr)
        return None
    _SET_ASIDE[str(path)] = aside
    return aside


def _canonical(path: str | Path) -> Path:
    """The form the SDK derives a project key from (real path, NFC), so "the same
    workspace" here means "the same sessions in the store"."""
    real = os.path.realpath(os.path.expanduser(os.fspath(path)))
    return Path(unicodedata.normalize("NFC", real))


def _steps(data: dict[str, Any]) -> dict[str, str]:
    steps = data.get("steps")
    if not isinstance(steps, dict):
        return {}
    return {k: v for k, v in steps.items() if isinstance(k, str) and k and isinstance(v, str) and v}


def continuing_run(run_dir: str | Path, workspace: str | Path) -> str:
    """The id of the run a flower in ``workspace`` would continue from ``run_dir``: the
    lineage's run when it names this workspace, or a workspace gone from this machine
    (moved, or copied here from another one); "" when there is none, or when the folder
    it names is still here (this one is a copy, which forks under a new id). Read-only."""
    try:
        data = json.loads((Path(run_dir) / LINEAGE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if not isinstance(data, dict) or not isinstance(data.get("workspace"), str):
        return ""
    named = _canonical(data["workspace"])
    if named != _canonical(workspace) and os.path.exists(named):
        return ""
    return _run_id(data)


def _run_id(data: dict[str, Any]) -> str:
    run = data.get("run")
    return run if isinstance(run, str) else ""


def _new_run_id() -> str:
    return uuid.uuid4().hex


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is under ``folder`` (so it travels with it)."""
    try:
        _canonical(path).relative_to(folder)
    except ValueError:
        return False
    return True


def _woke(data: dict[str, Any]) -> int:
    woke = data.get("woke")
    return woke if isinstance(woke, int) and not isinstance(woke, bool) and woke > 0 else 0


def _alive(check: Callable[[str], bool], sid: str) -> bool:
    try:
        return bool(check(sid))
    except Exception:  # a broken checker must not stop the run: treat as gone
        return False


def _new_folder(into: Path) -> Path:
    """A folder that did not exist before: ``<into>/<stamp>``, else ``-2``, ``-3``…"""
    into.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = 1
    while True:
        dest = into / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            dest.mkdir()
        except FileExistsError:
            n += 1
            continue
        return dest


def _free_name(path: Path) -> Path:
    """``path``, or ``stem-2.suffix``… when two extras share a name."""
    n, candidate = 1, path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate
