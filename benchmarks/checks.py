"""What the check runner costs on top of running a check's command directly.

The same command (``true``, then ``python3 -c pass``) run by ``flower.workflow.check_run``
(a copy of the workspace, bubblewrap with its namespaces, a fresh HOME, output capture and
redaction) and by a bare ``subprocess.run`` in the workspace, alternated, over workspaces
of a few sizes, so the copy's share shows. Wall and CPU time (the parent's children:
bubblewrap, bash, the command), medians.

    python benchmarks/checks.py [--rounds 15] [--files 100,2000]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from flower.workflow.check_run import run_checks
from flower.workflow.checks import parse_check


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def workspace(root: Path, files: int) -> Path:
    ws = root / f"ws-{files}"
    for n in range(files):
        folder = ws / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{n}.py").write_text(f"VALUE_{n} = {n}\n" * 20)
    return ws


def timed(run: object) -> tuple[float, float]:
    cpu, wall = children_cpu(), time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - wall, children_cpu() - cpu


def main(rounds: int, sizes: list[int]) -> int:
    root = Path(tempfile.mkdtemp(prefix="flower-bench-checks-"))
    print(f"{rounds} rounds, medians; ratio = check runner / the command run directly")
    for files in sizes:
        ws = workspace(root, files)
        for command in ("true", "python3 -c pass"):
            check = parse_check(f"`{command}` exits 0", 1)
            assert check is not None

            def runner(check: object = check, ws: Path = ws) -> None:
                (result,) = asyncio.run(run_checks([check], ws))  # type: ignore[list-item]
                assert result.passed, result.why

            def bare(command: str = command, ws: Path = ws) -> None:
                subprocess.run(["bash", "-c", command], cwd=ws, check=True)

            runner()
            bare()  # warm both once
            ran: list[tuple[float, float]] = []
            direct: list[tuple[float, float]] = []
            for _ in range(rounds):
                ran.append(timed(runner))
                direct.append(timed(bare))
            for label, which in (("wall", 0), ("CPU", 1)):
                a = statistics.median(s[which] for s in ran)
                b = statistics.median(s[which] for s in direct)
                print(
                    f"{files:5d} files  {command!r:18} {label:4}: runner {a * 1000:7.1f} ms,"
                    f" direct {b * 1000:6.1f} ms, +{(a - b) * 1000:7.1f} ms, {a / b:5.1f}x"
                )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--files", default="100,2000")
    args = parser.parse_args()
    raise SystemExit(main(args.rounds, [int(n) for n in args.files.split(",")]))
