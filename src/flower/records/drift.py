"""What changed in the workspace while flower was away.

A run is continued hours or days later, and in between a human edits files, pulls,
checks out another branch. An agent resumed on its old conversation still "remembers"
the files as they were and works from a stale picture. So flower keeps a picture of the
workspace at the end of every step (:func:`record`, ``run_dir/workspace-state.json``) and
compares it with the workspace on wake (:func:`since`): the difference is shown on the
wake line and handed to every resumed agent in its wake prompt.

The picture lists the workspace's files by size, mtime and a digest of their content,
plus the commit when it is a git repository. A changed mtime alone is no change (``cp -r``,
``git checkout`` of the same content, a backup restored): the digest decides, and it is
computed only for a file whose size or mtime moved since the last picture, so a step
costs one read of what changed (the first picture reads every file once). In a
repository the files are the ones git knows or would add
(``git ls-files --cached --others --exclude-standard``), so build output and
dependencies in ``.gitignore`` never count; elsewhere every file, minus flower's own
folders and the usual heavy ones (``node_modules``, virtual environments, caches).
Nothing here raises: a workspace that cannot be read has no drift to report.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flower.kernel.files import atomic_write, relative_posix

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
#: Files larger than this get no digest: their size and mtime decide, as before.
DIGEST_LIMIT = 8 * 1024 * 1024


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


def snapshot(
    workspace: str | Path,
    *,
    skip: tuple[Path, ...] = (),
    previous: dict[str, list[Any]] | None = None,
) -> dict[str, Any]:
    """The workspace's picture: ``{"head": commit or None, "files": {path: [size,
    mtime_ns, digest]}}`` (paths relative, ``/``-separated; digest ``""`` past
    :data:`DIGEST_LIMIT`). ``skip``: more folders to leave out (the run dir).
    ``previous``: an earlier picture's files, whose digests are kept where the size
    and mtime have not moved (only what changed is read)."""
    root = Path(workspace)
    previous = previous or {}
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
        files[name] = [st.st_size, st.st_mtime_ns, _digest(root / name, st, previous.get(name))]
        if len(files) >= MAX_FILES:
            break
    return {"head": head, "files": files}


def record(workspace: str | Path, run_dir: str | Path) -> None:
    """Keep the workspace's picture now (end of a step) in ``run_dir``; never raises."""
    try:
        if not Path(workspace).is_dir():
            return
        picture = snapshot(workspace, skip=(Path(run_dir),), previous=_files(run_dir))
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        atomic_write(Path(run_dir) / STATE_NAME, json.dumps(picture, ensure_ascii=False))
    except Exception:  # a picture is a convenience: the run goes on without one
        return


def since(workspace: str | Path, run_dir: str | Path) -> Drift:
    """What changed since :func:`record` last ran (empty when it never did)."""
    try:
        then = json.loads((Path(run_dir) / STATE_NAME).read_text(encoding="utf-8"))
        old_files: dict[str, list[Any]] = then["files"]
        now = snapshot(workspace, skip=(Path(run_dir),), previous=old_files)
    except Exception:  # no picture, or an unreadable one: nothing to compare with
        return Drift()
    new_files: dict[str, list[Any]] = now["files"]
    drift = Drift(
        added=sorted(set(new_files) - set(old_files)),
        deleted=sorted(set(old_files) - set(new_files)),
        modified=sorted(
            p for p in set(old_files) & set(new_files) if _changed(old_files[p], new_files[p])
        ),
    )
    if then.get("head") and now["head"] and then["head"] != now["head"]:
        drift.head = (str(then["head"]), str(now["head"]))
    return drift


def _files(run_dir: str | Path) -> dict[str, list[Any]]:
    """The last picture's files (``{}`` without one)."""
    try:
        files = json.loads((Path(run_dir) / STATE_NAME).read_text(encoding="utf-8"))["files"]
    except Exception:
        return {}
    return files if isinstance(files, dict) else {}


def _digest(path: Path, st: os.stat_result, before: list[Any] | None) -> str:
    """The content's digest: the earlier one while size and mtime stay, else read anew
    (``""`` for a file too big or unreadable)."""
    if before and len(before) > 2 and before[0] == st.st_size and before[1] == st.st_mtime_ns:
        return str(before[2])
    if st.st_size > DIGEST_LIMIT:
        return ""
    try:
        with path.open("rb") as f:
            return hashlib.file_digest(f, lambda: hashlib.blake2b(digest_size=16)).hexdigest()
    except OSError:
        return ""


def _changed(old: list[Any], new: list[Any]) -> bool:
    """Whether a file changed: its size, or its content where both digests are known;
    a moved mtime alone is no change. A picture without digests (an older flower's)
    falls back to the mtime."""
    if old[0] != new[0]:
        return True
    if len(old) > 2 and old[2] and new[2]:
        return bool(old[2] != new[2])
    return bool(old[1] != new[1])


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
