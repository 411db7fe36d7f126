"""What changed in the workspace while flower was away.

A run is continued hours or days later, and in between a human edits files, pulls,
checks out another branch. An agent resumed on its old conversation still "remembers"
the files as they were and works from a stale picture. So flower keeps a picture of the
workspace at the end of every step (:func:`record`, ``run_dir/workspace-state.json``) and
compares it with the workspace on wake (:func:`since`): the difference is shown on the
wake line and handed to every resumed agent in its wake prompt.

The picture is a size-and-mtime listing of the workspace's files, plus the commit when it
is a git repository. In a repository the files are the ones git knows or would add
(``git ls-files --cached --others --exclude-standard``), so build output and
dependencies in ``.gitignore`` never count; elsewhere every file, minus flower's own
folders and the usual heavy ones (``node_modules``, virtual environments, caches).
Nothing here raises: a workspace that cannot be read has no drift to report.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flower.core.workbench import atomic_write, relative_posix

__all__ = ["STATE_NAME", "Drift", "record", "since", "snapshot"]

STATE_NAME = "workspace-state.json"
#: Folders never listed outside git: flower's own, version control, and what tools
#: regenerate (listing a virtual environment would dwarf the files a human edits).
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".flower", "node_modules", ".venv", "venv", "__pycache__",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".cache"}
)  # fmt: skip
#: More files than this and the listing stops (the commit still tells a change apart).
MAX_FILES = 20_000
#: Changes named one by one; the rest are counted.
SHOWN = 12


@dataclass
class Drift:
    """The changes between the last step's picture and now (empty: nothing changed)."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    head: tuple[str, str] | None = None  # (then, now) when the commit moved

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.deleted or self.head)

    def summary(self) -> str:
        """One line for the wake banner: ``"2 files changed since the last step: …"``."""
        if not self:
            return ""
        named = [f"{p} modified" for p in self.modified] + [f"{p} deleted" for p in self.deleted]
        named += [f"{p} added" for p in self.added]
        count = len(named)
        shown = ", ".join(named[:SHOWN]) + (f", and {count - SHOWN} more" if count > SHOWN else "")
        parts = [f"{count} file{'s' if count != 1 else ''} changed ({shown})"] if count else []
        if self.head:
            parts.append(f"the commit moved from {self.head[0][:10]} to {self.head[1][:10]}")
        return "since the last step, " + "; ".join(parts)

    def prompt(self) -> str:
        """The paragraph a resumed agent gets: what to re-read before relying on memory."""
        if not self:
            return ""
        lines = ["While you were paused, the workspace changed (outside this conversation):"]
        lines += [f"- modified: {p}" for p in self.modified]
        lines += [f"- deleted: {p}" for p in self.deleted]
        lines += [f"- added: {p}" for p in self.added]
        if self.head:
            lines.append(f"- the git commit moved from {self.head[0]} to {self.head[1]}")
        lines.append("Re-read what you depend on before you rely on what you remember of it.")
        return "\n".join(lines)


def snapshot(workspace: str | Path, *, skip: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The workspace's picture: ``{"head": commit or None, "files": {path: [size, mtime_ns]}}``
    (paths relative, ``/``-separated). ``skip``: more folders to leave out (the run dir)."""
    root = Path(workspace)
    head, names = _git(root)
    if names is None:
        names = _walk(root)
    skipped = [relative_posix(p, root) for p in skip]
    files: dict[str, list[int]] = {}
    for name in names:
        if any(s and (name == s or name.startswith(s + "/")) for s in skipped):
            continue
        try:
            st = (root / name).stat()
        except OSError:
            continue
        files[name] = [st.st_size, st.st_mtime_ns]
        if len(files) >= MAX_FILES:
            break
    return {"head": head, "files": files}


def record(workspace: str | Path, run_dir: str | Path) -> None:
    """Keep the workspace's picture now (end of a step) in ``run_dir``; never raises."""
    try:
        if not Path(workspace).is_dir():
            return
        picture = snapshot(workspace, skip=(Path(run_dir),))
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(run_dir) / STATE_NAME, json.dumps(picture, ensure_ascii=False))
    except Exception:  # a picture is a convenience: the run goes on without one
        return


def since(workspace: str | Path, run_dir: str | Path) -> Drift:
    """What changed since :func:`record` last ran (empty when it never did)."""
    try:
        then = json.loads((Path(run_dir) / STATE_NAME).read_text(encoding="utf-8"))
        old_files: dict[str, list[int]] = then["files"]
        now = snapshot(workspace, skip=(Path(run_dir),))
    except Exception:  # no picture, or an unreadable one: nothing to compare with
        return Drift()
    new_files: dict[str, list[int]] = now["files"]
    drift = Drift(
        added=sorted(set(new_files) - set(old_files)),
        deleted=sorted(set(old_files) - set(new_files)),
        modified=sorted(
            p for p in set(old_files) & set(new_files) if list(old_files[p]) != new_files[p]
        ),
    )
    if then.get("head") and now["head"] and then["head"] != now["head"]:
        drift.head = (str(then["head"]), str(now["head"]))
    return drift


def _git(root: Path) -> tuple[str | None, list[str] | None]:
    """``(commit, files)`` in a git work tree; ``(None, None)`` outside one."""

    def git(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.SubprocessError):
            return None

    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is None or listed.returncode != 0:
        return None, None
    head = git("rev-parse", "--verify", "-q", "HEAD")
    commit = head.stdout.strip() if head is not None and head.returncode == 0 else None
    names = [n for n in listed.stdout.split("\0") if n and not n.startswith(".flower/")]
    return commit or None, names


def _walk(root: Path) -> list[str]:
    names: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".flower-")]
        base = Path(folder).relative_to(root)
        names.extend((base / f).as_posix() for f in files)
        if len(names) >= MAX_FILES:
            break
    return names
