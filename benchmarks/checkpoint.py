"""Checkpoint cost: CPU time and disk per round on a 10,000-file workspace, vs ``git stash create``.

    python benchmarks/checkpoint.py [--files 10000] [--rounds 10]

A workspace of ``--files`` small files (about 2 KB each, in 100 folders) committed in a
git repository; each round modifies 10 files, adds 2 and deletes 1 (what a work round of
a coding agent does), then takes one checkpoint (:class:`flower.records.checkpoints.
Checkpoints`: private index, ``git add -A``, ``write-tree``, ``commit-tree``, plus the
modes and empty folders). The baseline is ``git stash create`` of the same change, in a
copy of the same repository: what git itself offers for "a commit of the work tree,
outside the branch" (tracked files only; a checkpoint also takes untracked ones). The same
checkpoint is measured in a folder that is no repository (the private bare repository).

CPU time is this process's plus its children's (``getrusage``), per round, median over
the rounds; size is what the repository's ``objects/`` grew by per round. The first
checkpoint of a run (a fresh private index: copied from the user's index in a
repository, every file hashed elsewhere) is reported on its own.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from flower.records.checkpoints import Checkpoint, Checkpoints


def cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(work: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``work()``."""
    c, w = cpu(), time.perf_counter()
    work()
    return cpu() - c, time.perf_counter() - w


def du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


ENV = {
    **os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@x",
}  # fmt: skip


def git(ws: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True, env=ENV)
    if done.returncode:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def make(ws: Path, files: int) -> list[Path]:
    rng = random.Random(1)
    made = []
    for i in range(files):
        path = ws / f"pkg{i % 100:02d}" / f"mod{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"x_{rng.random():.12f} = {j}\n" for j in range(80)))
        made.append(path)
    return made


def change(ws: Path, paths: list[Path], round_: int) -> None:
    rng = random.Random(round_)
    for path in rng.sample(paths, 10):
        if path.exists():
            path.write_text(path.read_text() + f"# round {round_}\n")
    for k in range(2):
        (ws / "pkg00" / f"new_{round_}_{k}.py").write_text(f"print({round_}, {k})\n" * 40)
    victim = rng.choice(paths)
    if victim.exists():
        victim.unlink()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="flower-bench-checkpoint-"))
    try:
        run(root, args.files, args.rounds)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(root: Path, files: int, rounds: int) -> None:
    repo = root / "repo"
    repo.mkdir()
    paths = make(repo, files)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "gc.auto=0", "commit", "-q", "-m", "base")
    stash = root / "stash"
    shutil.copytree(repo, stash, symlinks=True)
    plain = root / "plain"
    shutil.copytree(repo, plain, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    rel = [p.relative_to(repo) for p in paths]

    ours = Checkpoints(repo, root / "runs-repo", "bench")
    private = Checkpoints(plain, root / "runs-plain", "bench")

    def checkpoint(store: Checkpoints) -> Callable[[], object]:
        return lambda: store.take(Checkpoint(n=0, kind="round", step="干活"))

    def stash_create() -> None:  # exit 1 with nothing to stash (the first, unchanged tree)
        subprocess.run(["git", "stash", "create"], cwd=stash, capture_output=True, env=ENV)

    first = {
        "checkpoint (repository)": measure(checkpoint(ours)),
        "checkpoint (no repository)": measure(checkpoint(private)),
        "git stash create": measure(stash_create),
    }
    per: dict[str, list[tuple[float, float, int]]] = {name: [] for name in first}
    where = {
        "checkpoint (repository)": (repo, checkpoint(ours), repo / ".git" / "objects"),
        "checkpoint (no repository)": (plain, checkpoint(private), root / "runs-plain"),
        "git stash create": (stash, stash_create, stash / ".git" / "objects"),
    }
    for round_ in range(1, rounds + 1):
        for name, (ws, work, objects) in where.items():
            change(ws, [ws / p for p in rel], round_)
            before = du(objects)
            spent, wall = measure(work)
            per[name].append((spent, wall, du(objects) - before))

    print(f"{files:,} files, {rounds} rounds of 10 modified + 2 added + 1 deleted")
    print(f"{'':28} {'first CPU':>10} {'round CPU':>10} {'round wall':>11} {'bytes/round':>12}")
    for name, rows in per.items():
        cpu_round = statistics.median(r[0] for r in rows)
        wall_round = statistics.median(r[1] for r in rows)
        size = statistics.median(r[2] for r in rows)
        print(
            f"{name:28} {first[name][0] * 1000:8.0f}ms {cpu_round * 1000:8.1f}ms"
            f" {wall_round * 1000:9.1f}ms {size:12,.0f}"
        )
    base = statistics.median(r[0] for r in per["git stash create"])
    for name in ("checkpoint (repository)", "checkpoint (no repository)"):
        ratio = statistics.median(r[0] for r in per[name]) / base
        print(f"CPU ratio {name} / git stash create: {ratio:.2f}x")
    print(f"store size after all rounds: repository {ours.size():,} bytes beyond the branches;")
    print(f"  no repository {private.size():,} bytes (the private repository, everything)")


if __name__ == "__main__":
    main()
