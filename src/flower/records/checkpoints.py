"""The store of checkpoints: the whole workspace at every round boundary, in git objects.

A run left alone can take a wrong turn at round 5 and build on it until round 12. To go
back, flower keeps the folder as it stood before every step and every round: every file,
tracked or not, changed by a Write or by a Bash ``rm``, written as git objects, so a file
that did not change between two rounds costs nothing the second time (git's objects are
content-addressed: the store is deduplicated by construction).

Where the objects go, without touching anything of the user's:

- **a git repository** (the workspace is its top level): the repository's own object
  store, through a *private index* (``GIT_INDEX_FILE=<run_dir>/checkpoints/index``: the
  user's index and staged changes are never read for writing, their stash never
  touched) and ``git add -A`` / ``write-tree`` / ``commit-tree``; each checkpoint is a
  commit on ``refs/flower/checkpoints/<run>`` (no branch, no HEAD, no reflog), its parent
  the checkpoint before it, so ``git gc`` keeps them all;
- **any other folder** (or a sub-folder of a repository): a private bare repository,
  ``<run_dir>/checkpoints.git``, used with ``--git-dir``/``--work-tree``.

What a checkpoint holds (the documented rule): every file ``git add -A`` would take, so
files ignored by a ``.gitignore`` (or ``.git/info/exclude``) are left out, tracked files
are in even if ignored; never ``.git``; never flower's own records (``exclude``: the run
folder, the spill and archive folders, the run id and what the workflow froze: those go
on as they are through a rewind). Git keeps a file's content and its executable bit;
the permission bits git would not restore and the empty folders git cannot hold are in
the commit message beside the run's positions (:class:`Checkpoint`).

A restore never leaves half a folder: the checkpoint is first written out whole into a
temporary tree (a missing or corrupt object stops it there, nothing touched), then only
what differs is moved into place, deletions first; a failure during the moves puts the
files it already moved back as they were.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["REF_PREFIX", "Checkpoint", "CheckpointError", "Checkpoints"]

REF_PREFIX = "refs/flower/checkpoints/"
#: The commit identity: the user's own name never signs flower's bookkeeping.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "flower",
    "GIT_AUTHOR_EMAIL": "flower@localhost",
    "GIT_COMMITTER_NAME": "flower",
    "GIT_COMMITTER_EMAIL": "flower@localhost",
}
#: Settings no user configuration may change for flower's commands.
_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "gc.auto=0")


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be taken, read or restored; the message is one line."""


def _failed(command: str, done: subprocess.CompletedProcess[bytes]) -> CheckpointError:
    """A failed git command as the error this module raises: git's last line of stderr."""
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return CheckpointError(f"git {command} failed: {said[-1] if said else done.returncode}")


@dataclass
class Checkpoint:
    """One checkpoint: which tree, when, and where the run stood.

    ``sessions``: step -> ``{"session": id, "at": uuid of its last message}`` (the
    position a rewind resumes at); ``ledger``: how many ledger rows the run had and the
    last one's kind, round and state; ``prompt``: what the step or round was about to
    be sent (a rewind with nothing to add sends it again); ``modes``: permission bits git
    would not restore; ``dirs``: the empty folders; ``exclude``: what it left out;
    ``became``: for a ``rewind``/``undo`` checkpoint (the folder as it stood before going
    back), the tree the folder was then made (the target's): what the folder is expected
    to be until the next checkpoint (:meth:`now`).
    """

    n: int
    kind: str  # "step" (before a step), "round" (a work round), "end", "rewind", "undo"
    step: str
    label: str = ""
    round: int | None = None
    at: float = field(default_factory=time.time)
    sessions: dict[str, dict[str, str | None]] = field(default_factory=dict)
    ledger: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None
    modes: dict[str, int] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    head: str | None = None
    note: str = ""
    became: str = ""
    commit: str = ""
    tree: str = ""

    def meta(self) -> str:
        data = asdict(self)
        data.pop("commit")
        data.pop("tree")
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    @classmethod
    def parse(cls, commit: str, tree: str, message: str) -> Checkpoint | None:
        try:
            data = json.loads(message)
            known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
            return cls(**known, commit=commit, tree=tree)
        except (ValueError, TypeError):
            return None

    def now(self) -> str:
        """The tree the folder should be while this is the newest checkpoint: the one a
        rewind put in place, else its own."""
        return self.became or self.tree

    def title(self) -> str:
        """``round 2`` for a work round, the label otherwise (``设定目标``, ``rewind``)."""
        if self.kind == "round" and self.round is not None:
            return f"round {self.round}"
        return self.label or self.step or self.kind


class Checkpoints:
    """The checkpoints of one run (``run``: its lasting id) of ``workspace``."""

    def __init__(self, workspace: str | Path, run_dir: str | Path, run: str) -> None:
        self.workspace = Path(workspace).absolute()
        self.run_dir = Path(run_dir).absolute()
        self.run = run or "run"
        self.ref = REF_PREFIX + self.run
        self.home = self.run_dir / "checkpoints"
        self.private = not self._own_repository()
        self.git_dir = self.run_dir / "checkpoints.git" if self.private else None

    # --- git ---------------------------------------------------------------------------

    def _own_repository(self) -> bool:
        """Whether the workspace is the top level of a git work tree (the user's repo)."""
        if shutil.which("git") is None:
            raise CheckpointError("git is not installed: checkpoints need it")
        try:
            out = subprocess.run(
                ["git", "rev-parse", "--show-toplevel"], cwd=self.workspace,
                capture_output=True, text=True, check=False,
            )  # fmt: skip
        except OSError as exc:
            raise CheckpointError(f"cannot run git in {self.workspace}: {exc}") from None
        top = out.stdout.strip()
        return out.returncode == 0 and bool(top) and Path(top).resolve() == self.workspace.resolve()

    def git(
        self, *args: str, index: Path | None = None, stdin: bytes | None = None, check: bool = True
    ) -> bytes:
        """Run git on the checkpoints' repository with ``index`` as its index."""
        env = {**os.environ, **_IDENTITY}
        for leaked in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
            env.pop(leaked, None)
        env["GIT_INDEX_FILE"] = str(index or self.home / "index")
        where: list[str] = []
        if self.git_dir is not None:
            where = [f"--git-dir={self.git_dir}", f"--work-tree={self.workspace}"]
        done = subprocess.run(
            ["git", *_CONFIG, *where, *args], cwd=self.workspace, input=stdin,
            capture_output=True, env=env, check=False,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise _failed(args[0], done)
        return done.stdout

    def _ready(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        if self.git_dir is not None and not (self.git_dir / "HEAD").exists():
            self._init_bare(self.git_dir)
        index = self.home / "index"
        if not index.exists() and not self.private:  # git's stat cache: hash only what changed
            user = Path(self.git("rev-parse", "--git-path", "index").decode().strip())
            user = user if user.is_absolute() else self.workspace / user
            if user.is_file():
                shutil.copyfile(user, index)

    @staticmethod
    def _init_bare(git_dir: Path) -> None:
        """Make the bare repository beside ``git_dir`` and rename it into place, so two
        processes of one run folder starting at once never both write one repository's
        config (``git init`` of the loser fails with 128): the first rename wins, the
        other finds a repository there and drops its own."""
        fresh = Path(tempfile.mkdtemp(prefix=f".{git_dir.name}.", dir=git_dir.parent))
        try:
            done = subprocess.run(["git", "init", "--bare", "-q", str(fresh)], capture_output=True)
            if done.returncode != 0:  # as every other git failure here: a CheckpointError
                raise _failed("init", done)
            try:
                os.rename(fresh, git_dir)
            except OSError:
                if not (git_dir / "HEAD").exists():
                    raise
        finally:
            shutil.rmtree(fresh, ignore_errors=True)

    # --- taking ------------------------------------------------------------------------

    def snapshot(self, exclude: list[str]) -> tuple[str, dict[str, int], list[str]]:
        """The present as a tree (objects written, no ref moved): ``(tree, modes, dirs)``."""
        self._ready()
        skip = [f":(exclude,literal){p}" for p in self._not_ignored(exclude)]
        self.git("add", "-A", "--ignore-errors", "--", ".", *skip)
        if exclude:  # what an earlier index (the user's, copied) held under them
            self.git("rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", *exclude)
        tree = self.git("write-tree").decode().strip()
        return tree, self._modes(), self._empty_dirs(skip)

    def _not_ignored(self, paths: list[str]) -> list[str]:
        """``paths`` but those git ignores anyway (``git add`` refuses a pathspec, even an
        exclusion, that names an ignored path)."""
        if not paths:
            return []
        listed = b"\0".join(os.fsencode(p) for p in paths) + b"\0"
        out = self.git("check-ignore", "-z", "--stdin", stdin=listed, check=False)
        ignored = {os.fsdecode(p) for p in out.split(b"\0") if p}
        return [p for p in paths if p not in ignored]

    def _modes(self) -> dict[str, int]:
        """Permission bits git would not give back (it keeps only the executable bit)."""
        odd: dict[str, int] = {}
        for line in self.git("ls-files", "-s", "-z").split(b"\0"):
            if not line:
                continue
            info, _, raw = line.partition(b"\t")
            mode = info.split(b" ", 1)[0]
            if mode not in (b"100644", b"100755"):
                continue
            path = os.fsdecode(raw)
            try:
                bits = os.lstat(self.workspace / path).st_mode & 0o7777
            except OSError:
                continue
            if bits != (0o755 if mode == b"100755" else 0o644):
                odd[path] = bits
        return odd

    def _empty_dirs(self, skip: list[str]) -> list[str]:
        """The folders holding nothing a checkpoint keeps (git cannot hold them)."""
        listed = self.git(
            "ls-files", "-z", "--others", "--directory", "--exclude-standard", "--", ".", *skip
        )
        found: list[str] = []
        for raw in listed.split(b"\0"):
            if not raw.endswith(b"/"):
                continue
            top = self.workspace / os.fsdecode(raw)
            for folder, subdirs, files in os.walk(top):
                if not subdirs and not files:
                    found.append(Path(folder).relative_to(self.workspace).as_posix())
        return sorted(found)

    def take(self, checkpoint: Checkpoint, *, tree: str | None = None) -> Checkpoint:
        """Write ``checkpoint`` (its ``n`` is set here): the present unless ``tree``
        (a :meth:`snapshot` already taken) is given."""
        if tree is None:
            tree, checkpoint.modes, checkpoint.dirs = self.snapshot(checkpoint.exclude)
        else:
            self._ready()
        last = self.head()
        previous = self.parse(last) if last else None
        checkpoint.n = (previous.n if previous else 0) + 1
        checkpoint.head = checkpoint.head or self._user_head()
        parents = ["-p", last] if last else []
        commit = self.git(
            "commit-tree", "--no-gpg-sign", tree, *parents, stdin=checkpoint.meta().encode()
        )
        checkpoint.commit, checkpoint.tree = commit.decode().strip(), tree
        self.git("update-ref", self.ref, checkpoint.commit, *([last] if last else []))
        return checkpoint

    def _user_head(self) -> str | None:
        if self.private:
            return None
        head = self.git("rev-parse", "-q", "--verify", "HEAD", check=False).decode().strip()
        return head or None

    # --- reading -----------------------------------------------------------------------

    def head(self) -> str | None:
        """The newest checkpoint's commit, or ``None`` before the first."""
        if self.git_dir is not None and not (self.git_dir / "HEAD").exists():
            return None
        found = self.git("rev-parse", "-q", "--verify", f"{self.ref}^{{commit}}", check=False)
        return found.decode().strip() or None

    def parse(self, commit: str) -> Checkpoint | None:
        raw = self.git("log", "-1", "--format=%H%x01%T%x01%B", commit)
        return _parse(raw.decode(errors="replace"))

    def all(self) -> list[Checkpoint]:
        """Every checkpoint of the run, oldest first."""
        if self.head() is None:
            return []
        raw = self.git("log", "-z", "--format=%H%x01%T%x01%B", self.ref).decode(errors="replace")
        found = [_parse(chunk) for chunk in raw.split("\0") if chunk.strip()]
        return sorted((c for c in found if c is not None), key=lambda c: c.n)

    def changes(self, old: str, new: str) -> list[tuple[str, str]]:
        """``(status, path)`` between two trees: ``A``dded, ``D``eleted, ``M``odified."""
        out = self.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
        parts = out.decode(errors="replace").split("\0")
        return [(parts[i][0], parts[i + 1]) for i in range(0, len(parts) - 1, 2) if parts[i]]

    def size(self) -> int:
        """Bytes the checkpoints take on disk beyond what the repository holds anyway."""
        if self.head() is None:
            return 0
        if self.private:
            assert self.git_dir is not None
            return sum(p.stat().st_size for p in self.git_dir.rglob("*") if p.is_file())
        # rev-list's own --not does not take the blobs of an unrelated history out
        ours = {
            line.split(b" ", 1)[0]
            for line in self.git("rev-list", "--objects", self.ref).split(b"\n")
        }
        theirs = self.git("rev-list", "--objects", "--branches", "--tags", check=False)
        ours -= {line.split(b" ", 1)[0] for line in theirs.split(b"\n")}
        ours.discard(b"")
        if not ours:
            return 0
        sizes = self.git(
            "cat-file", "--batch-check=%(objectsize:disk)", stdin=b"\n".join(ours) + b"\n"
        )
        return sum(int(x) for x in sizes.split() if x.isdigit())

    # --- restoring ---------------------------------------------------------------------

    def materialize(self, checkpoint: Checkpoint, into: Path) -> None:
        """Write the checkpoint's files under ``into`` (a missing object raises here)."""
        index = into.with_name(into.name + ".index")
        try:
            self.git("read-tree", checkpoint.tree, index=index)
            prefix = str(into) + os.sep
            self.git("checkout-index", "-a", "-f", f"--prefix={prefix}", index=index)
        except CheckpointError as exc:
            raise CheckpointError(f"checkpoint #{checkpoint.n} is corrupt ({exc})") from None
        finally:
            index.unlink(missing_ok=True)

    def restore(self, target: Checkpoint, present: Checkpoint) -> list[tuple[str, str]]:
        """Make the folder ``target``, the folder being ``present`` (just taken); what
        changed. ``CheckpointError`` before any file moved when ``target`` cannot be read."""
        scratch = Path(tempfile.mkdtemp(prefix="flower-rewind-", dir=self._scratch_parent()))
        try:
            tree = scratch / "tree"
            self.materialize(target, tree)
            changes = self.changes(present.tree, target.tree)
            done: list[tuple[str, Path]] = []
            try:
                self._swap(changes, tree, scratch / "old", done)
            except OSError as exc:
                _undo_swap(done, self.workspace)
                raise CheckpointError(
                    f"the restore stopped ({exc}); the files it had moved are back as they were"
                ) from None
            self._settle(target, present, changes)
            return changes
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _scratch_parent(self) -> Path:
        """A folder on the workspace's file system (a rename never crosses devices)."""
        self.home.mkdir(parents=True, exist_ok=True)
        if os.stat(self.home).st_dev == os.stat(self.workspace).st_dev:
            return self.home
        return self.workspace

    def _swap(
        self, changes: list[tuple[str, str]], tree: Path, old: Path, done: list[tuple[str, Path]]
    ) -> None:
        """Deletions first (a file may become a folder), then the new files; every file
        replaced is kept under ``old`` until the end, so ``done`` can put it back."""
        for status, path in sorted(changes, key=lambda c: c[0] != "D"):
            here = self.workspace / path
            if os.path.lexists(here):
                keep = old / path
                keep.parent.mkdir(parents=True, exist_ok=True)
                os.replace(here, keep)
                done.append((path, keep))
            else:
                done.append((path, Path()))
            if status == "D":
                _prune_empty(here.parent, self.workspace)
                continue
            if here.parent.exists() and not here.parent.is_dir():  # a file where a folder goes
                keep = old / (path + ".parent")
                os.replace(here.parent, keep)
                done.append((str(here.parent.relative_to(self.workspace)), keep))
            here.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tree / path, here)

    def _settle(
        self, target: Checkpoint, present: Checkpoint, changes: list[tuple[str, str]]
    ) -> None:
        """Permission bits and empty folders as the checkpoint had them."""
        moved = {path for status, path in changes if status != "D"}
        for path in moved | set(target.modes) | set(present.modes):
            here = self.workspace / path
            if not os.path.isfile(here) or os.path.islink(here):
                continue
            bits = target.modes.get(path)
            if bits is None:
                bits = 0o755 if os.stat(here).st_mode & 0o100 else 0o644
            os.chmod(here, bits)
        for folder in present.dirs:
            if folder not in target.dirs:
                _prune_empty(self.workspace / folder, self.workspace)
        for folder in target.dirs:
            (self.workspace / folder).mkdir(parents=True, exist_ok=True)

    # --- pruning -----------------------------------------------------------------------

    def prune(self, keep: int) -> int:
        """Keep the newest ``keep`` checkpoints (at least one: never the present); how
        many were dropped. A private repository is compacted at once; in the user's
        repository the dropped objects go when git's own gc runs."""
        every = self.all()
        kept = every[-max(1, keep) :]
        dropped = len(every) - len(kept)
        if not dropped:
            return 0
        parent: str | None = None
        trees = {c.tree for c in kept}
        for checkpoint in kept:
            if checkpoint.became not in trees:  # its tree goes with the dropped ones (gc):
                checkpoint.became = ""  # the next rewind asks about the whole difference
            parents = ["-p", parent] if parent else []
            made = self.git(
                "commit-tree", "--no-gpg-sign", checkpoint.tree, *parents,
                stdin=checkpoint.meta().encode(),
            )  # fmt: skip
            parent = made.decode().strip()
        assert parent is not None
        self.git("update-ref", self.ref, parent)
        if self.private:
            self.git("gc", "--prune=now", "--quiet", check=False)
        return dropped


def _parse(chunk: str) -> Checkpoint | None:
    commit, _, rest = chunk.strip("\n").partition("\x01")
    tree, _, message = rest.partition("\x01")
    return Checkpoint.parse(commit.strip(), tree.strip(), message.strip())


def _prune_empty(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its parents while they are empty, never ``root``."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _undo_swap(done: list[tuple[str, Path]], workspace: Path) -> None:
    """Put back what :meth:`Checkpoints._swap` moved, newest first."""
    for path, kept in reversed(done):
        here = workspace / path
        try:
            if os.path.lexists(here) and not here.is_dir():
                here.unlink()
            if kept != Path():
                here.parent.mkdir(parents=True, exist_ok=True)
                os.replace(kept, here)
        except OSError:
            continue
