"""Start-up cost of the ``flower`` command against the bare interpreter.

Runs ``python -c pass``, ``flower --help`` and ``flower plugins list`` alternately (so
machine noise hits all three alike) and reports medians and the difference from the
bare interpreter. Target: ``flower --help`` at most 0.25 s above ``python -c pass``.

    python benchmarks/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

FLOWER = str(Path(sys.executable).parent / "flower")
SUBJECTS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "flower --help": [FLOWER, "--help"],
    "flower plugins list": [FLOWER, "plugins", "list"],
}
TARGET_S = 0.25


def wall(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = max(10, parser.parse_args().rounds)
    for cmd in SUBJECTS.values():  # warm the page cache once
        wall(cmd)
    times: dict[str, list[float]] = {name: [] for name in SUBJECTS}
    for _ in range(rounds):
        for name, cmd in SUBJECTS.items():
            times[name].append(wall(cmd))
    base = statistics.median(times["python -c pass"])
    print(
        f"{'subject':22} {'median s':>9} {'above bare':>11} {'ratio':>6}"
        f"   ({rounds} alternated rounds)"
    )
    for name, samples in times.items():
        med = statistics.median(samples)
        print(f"{name:22} {med:9.3f} {med - base:+11.3f} {med / base:6.2f}")
    over = statistics.median(times["flower --help"]) - base
    verdict = "meets" if over <= TARGET_S else "MISSES"
    print(
        f"flower --help is {over:.3f} s above the bare interpreter:"
        f" {verdict} the {TARGET_S} s target"
    )
    return 0 if over <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
