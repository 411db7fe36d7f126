"""The checkpoint store on real git: a repository (with the user's own uncommitted and
staged changes, which no checkpoint may touch) and a folder that is no repository.

What a restore must give back exactly: untracked and binary files, a symlink, odd
permission bits, an empty folder; what it must leave alone: ``.git``, the run folder,
flower's records (``exclude``), the files git ignores. A corrupt checkpoint is refused
with nothing changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flower.records.checkpoints import Checkpoint, CheckpointError, Checkpoints
from flower.workflow.going_back import find

EXCLUDE = ["runs", ".flower/notes/目标.md"]


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True, check=True).stdout


def tree_hash(ws: Path) -> str:
    """Every path under ``ws`` but ``.git``/``runs``: kind, mode, content or link target."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(ws):  # in order: dirs sorted in place
        rel = Path(folder).relative_to(ws)
        dirs[:] = sorted(d for d in dirs if not (rel == Path(".") and d in (".git", "runs")))
        h.update(f"D {rel.as_posix()}\n".encode())
        for name in sorted(files + [d for d in dirs if (Path(folder) / d).is_symlink()]):
            path = Path(folder) / name
            st = os.lstat(path)
            if path.is_symlink():
                h.update(f"L {rel / name} -> {os.readlink(path)}\n".encode())
            else:
                h.update(f"F {rel / name} {st.st_mode & 0o7777:o} ".encode() + path.read_bytes())
    return h.hexdigest()


def populate(ws: Path) -> None:
    (ws / "src").mkdir(parents=True, exist_ok=True)
    (ws / "src" / "a.py").write_text("print('a')\n")
    (ws / "blob.bin").write_bytes(bytes(range(256)) * 40 + b"\0\xff")
    (ws / "secret.key").write_text("k")
    os.chmod(ws / "secret.key", 0o600)
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(ws / "run.sh", 0o750)
    (ws / "empty" / "deeper").mkdir(parents=True)
    os.symlink("src/a.py", ws / "link.py")
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_text("ignored")
    (ws / "runs").mkdir()
    (ws / "runs" / "sessions.db").write_text("the store")
    (ws / ".flower" / "notes").mkdir(parents=True)
    (ws / ".flower" / "notes" / "目标.md").write_text("goal v1")
    (ws / ".flower" / "notes" / "work.md").write_text("agent notes v1")


def mess_up(ws: Path) -> None:
    """What a bad round does: deletes, writes, changes modes, fills the empty folder."""
    (ws / "src" / "a.py").unlink()
    (ws / "src" / "b.py").write_text("new\n")
    (ws / "blob.bin").write_bytes(b"changed")
    os.chmod(ws / "secret.key", 0o644)
    (ws / "empty" / "deeper" / "x").write_text("x")
    (ws / "link.py").unlink()
    (ws / "link.py").write_text("now a file")
    (ws / "build" / "out.o").write_text("rebuilt")  # ignored: neither kept nor restored
    (ws / "runs" / "sessions.db").write_text("the store, later")
    (ws / ".flower" / "notes" / "目标.md").write_text("goal v2")
    (ws / ".flower" / "notes" / "work.md").write_text("agent notes v2")
    (ws / "newdir" / "sub").mkdir(parents=True)
    (ws / "newdir" / "sub" / "f.txt").write_text("f")


def take(store: Checkpoints, kind: str = "round", **kw: object) -> Checkpoint:
    return store.take(Checkpoint(n=0, kind=kind, step="干活", exclude=EXCLUDE, **kw))  # type: ignore[arg-type]


def round_trip(ws: Path, store: Checkpoints) -> None:
    before = tree_hash(ws)
    first = take(store, round=1)
    mess_up(ws)
    after = tree_hash(ws)
    present = take(store, kind="rewind")
    changes = store.restore(first, present)
    assert ("D", "src/b.py") in changes and ("A", "src/a.py") in changes
    # flower's records and what git ignores are as they are now, not as they were
    assert (ws / ".flower" / "notes" / "目标.md").read_text() == "goal v2"
    assert (ws / "runs" / "sessions.db").read_text() == "the store, later"
    assert (ws / "build" / "out.o").read_text() == "rebuilt"
    (ws / ".flower" / "notes" / "目标.md").write_text("goal v1")
    (ws / "runs" / "sessions.db").write_text("the store")
    (ws / "build" / "out.o").write_text("ignored")
    assert tree_hash(ws) == before
    assert (ws / "link.py").is_symlink() and os.readlink(ws / "link.py") == "src/a.py"
    assert os.stat(ws / "secret.key").st_mode & 0o777 == 0o600
    assert os.stat(ws / "run.sh").st_mode & 0o777 == 0o750
    assert (ws / "empty" / "deeper").is_dir() and not any((ws / "empty" / "deeper").iterdir())
    assert not (ws / "newdir").exists()
    # and forward again: the present kept before the rewind comes back exactly
    (ws / ".flower" / "notes" / "目标.md").write_text("goal v2")
    (ws / "runs" / "sessions.db").write_text("the store, later")
    (ws / "build" / "out.o").write_text("rebuilt")
    again = take(store, kind="undo")
    store.restore(present, again)
    assert tree_hash(ws) == after
    assert [c.n for c in store.all()] == [1, 2, 3]
    assert [c.kind for c in store.all()] == ["round", "rewind", "undo"]


def test_a_folder_that_is_no_repository(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    populate(ws)
    store = Checkpoints(ws, ws / "runs", "run-1")
    assert store.private
    round_trip(ws, store)
    assert not (ws / ".git").exists()  # no repository was made in the user's folder
    assert (ws / "runs" / "checkpoints.git" / "HEAD").is_file()
    assert store.size() > 0


def test_a_repository_with_the_users_own_changes_left_untouched(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "u@example.com")
    git(ws, "config", "user.name", "User")
    (ws / "tracked.txt").write_text("v1\n")
    (ws / "staged.txt").write_text("s1\n")
    git(ws, "add", "tracked.txt", "staged.txt")
    git(ws, "commit", "-q", "-m", "first")
    git(ws, "stash", "list")
    (ws / "tracked.txt").write_text("v2 unstaged\n")  # the user's own work in progress
    (ws / "staged.txt").write_text("s2 staged\n")
    git(ws, "add", "staged.txt")
    populate(ws)
    (ws / ".git" / "info" / "exclude").write_text("runs/\n")
    status = git(ws, "status", "--porcelain")
    index = (ws / ".git" / "index").read_bytes()
    staged = git(ws, "diff", "--cached")
    heads = git(ws, "for-each-ref", "refs/heads", "refs/tags")

    store = Checkpoints(ws, ws / "runs", "run-1")
    assert not store.private
    first = take(store, round=1)
    assert first.head == git(ws, "rev-parse", "HEAD").strip()
    # a checkpoint changes nothing the user has: status, index, stash, branches
    assert git(ws, "status", "--porcelain") == status
    assert (ws / ".git" / "index").read_bytes() == index
    assert git(ws, "diff", "--cached") == staged
    assert git(ws, "stash", "list") == ""
    assert git(ws, "for-each-ref", "refs/heads", "refs/tags") == heads
    listed = git(ws, "ls-tree", "-r", "--name-only", first.tree).split()
    assert "tracked.txt" in listed and "src/a.py" in listed and "blob.bin" in listed
    assert not any(p.startswith(("runs/", "build/", ".git/")) for p in listed)
    assert ".flower/notes/work.md" in listed and ".flower/notes/目标.md" not in listed
    assert git(ws, "show", f"{first.tree}:tracked.txt") == "v2 unstaged\n"  # as it stands
    assert git(ws, "show", f"{first.tree}:staged.txt") == "s2 staged\n"
    assert git(ws, "for-each-ref", "--format=%(refname)", "refs/flower/") == (
        "refs/flower/checkpoints/run-1\n"
    )
    store.all()  # reading is no change either
    (ws / "runs" / "checkpoints" / "index").unlink()  # a fresh private index also works
    (ws / "src" / "a.py").write_text("print('a')\n")
    assert take(store, kind="end").tree == first.tree  # nothing changed: the same tree

    mess_up(ws)
    present = take(store, kind="rewind")
    store.restore(first, present)
    assert (ws / "tracked.txt").read_text() == "v2 unstaged\n"
    assert (ws / ".git" / "index").read_bytes() == index  # a restore leaves the index too
    assert git(ws, "diff", "--cached") == staged
    assert git(ws, "stash", "list") == ""


def test_a_corrupt_checkpoint_is_refused_with_nothing_changed(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    populate(ws)
    store = Checkpoints(ws, ws / "runs", "run-1")
    first = take(store, round=1)
    mess_up(ws)
    present = take(store, kind="rewind")
    blob = git(ws, f"--git-dir={store.git_dir}", "rev-parse", f"{first.tree}:src/a.py").strip()
    obj = store.git_dir / "objects" / blob[:2] / blob[2:]  # type: ignore[operator]
    os.chmod(obj, 0o644)
    obj.write_bytes(b"not a git object")
    before = tree_hash(ws)
    with pytest.raises(CheckpointError, match="checkpoint #1 is corrupt"):
        store.restore(first, present)
    assert tree_hash(ws) == before  # nothing half-restored
    assert not list((ws / "runs" / "checkpoints").glob("flower-rewind-*"))


def test_checkpoints_are_named_by_round_number_or_step(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "f").write_text("1")
    store = Checkpoints(ws, ws / "runs", "r")
    store.take(Checkpoint(n=0, kind="step", step="设定目标", exclude=["runs"]))
    for round_ in (1, 2, 3):
        label = "干活" if round_ == 1 else f"干活#round{round_}"
        store.take(Checkpoint(n=0, kind="round", step="干活", label=label, round=round_,
                              exclude=["runs"]))  # fmt: skip
    every = store.all()
    assert find(every, "2").label == "干活#round2"
    assert find(every, "#1").step == "设定目标"
    assert find(every, "设定目标").n == 1
    assert find(every, "干活").round == 1
    with pytest.raises(ValueError, match="no checkpoint '9'"):
        find(every, "9")
    assert store.prune(2) == 2
    assert [c.n for c in store.all()] == [3, 4]


def test_a_rewinds_folder_is_what_the_next_one_compares_with_until_pruned_away(
    tmp_path: Path,
) -> None:
    """After a rewind the folder is the target's: a second rewind (or ``--undo``) has
    nothing to ask about. Pruning drops that tree (gc, in a private store): the kept
    checkpoint forgets it and the next rewind asks about the whole difference again,
    instead of reading an object that is gone."""
    from flower.workflow.going_back import prepare, rows

    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "f").write_text("1")
    store = Checkpoints(ws, ws / "runs", "r")
    first = store.take(Checkpoint(n=0, kind="round", step="干活", round=1, exclude=["runs"]))
    (ws / "f").write_text("2")
    store.take(Checkpoint(n=0, kind="round", step="干活", round=2, exclude=["runs"]))
    present = store.take(
        Checkpoint(n=0, kind="rewind", step="干活", exclude=["runs"], became=first.tree)
    )
    store.restore(first, present)
    assert (ws / "f").read_text() == "1"
    assert prepare(store, "#3").foreign == []  # nothing changed since the rewind
    assert prepare(store, "2").foreign == []
    assert store.prune(1) == 2
    (kept,) = store.all()
    assert (kept.n, kept.became, kept.now()) == (3, "", kept.tree)
    assert prepare(store, "#3").foreign == [("M", "f")]
    assert [(r["n"], r["differ"]) for r in rows(store, ws, ws / "runs")] == [(3, 0)]


def test_processes_starting_at_once_in_a_folder_without_git_share_one_repository(
    tmp_path: Path,
) -> None:
    """Two flowers of one run folder used to race ``git init --bare`` on the same
    repository; the loser's init failed with 128 and took its step down with it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    code = (
        "import sys\n"
        "from flower.records.checkpoints import Checkpoints\n"
        "Checkpoints(sys.argv[1], sys.argv[2], 'r')._ready()\n"
    )
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(ws), str(ws / "runs")],
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(8)
    ]
    errors = [p.communicate()[1].decode() for p in procs if p.wait() != 0]
    assert errors == []
    assert (ws / "runs" / "checkpoints.git" / "HEAD").is_file()
    assert [p.name for p in (ws / "runs").iterdir() if p.name.startswith(".")] == []
