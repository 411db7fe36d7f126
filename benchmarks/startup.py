"""Start-up cost of the ``flower`` command against the bare interpreter.

Runs ``python -c pass``, ``flower --help``, ``flower plugins list``, ``flower status``
(a folder with a run, its manifest, lineage and a SQLite store holding a step and a
ruling) and ``import claude_agent_sdk`` (what every run pays before its first request,
and what ``status`` must not) alternately, so machine noise hits all alike, and reports
medians and the difference from the bare interpreter. Targets: ``flower --help`` at most
0.25 s above ``python -c pass``; ``flower status`` below the SDK's import alone.

    python benchmarks/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOWER = str(Path(sys.executable).parent / "flower")
TARGET_S = 0.25


def subjects(ws: Path) -> dict[str, list[str]]:
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "flower --help": [FLOWER, "--help"],
        "flower plugins list": [FLOWER, "plugins", "list"],
        "flower status": [FLOWER, "status", "-w", str(ws)],
        "import claude_agent_sdk": [sys.executable, "-c", "import claude_agent_sdk"],
    }


def a_run(ws: Path) -> None:
    """A folder as a finished run leaves it, as far as ``flower status`` reads it."""
    from flower.core.lineage import LINEAGE_NAME
    from flower.core.manifest import Manifest
    from flower.stores.database import StoreDatabase

    runs = ws / "runs"
    Manifest(runs).write([{"step": "干活", "ok": True, "session_id": "w1", "cost_usd": 0.5}])
    (runs / LINEAGE_NAME).write_text(json.dumps({"run": "r1", "workspace": str(ws)}))
    database = StoreDatabase(runs / "sessions.db")
    row = {"step": "干活", "ok": True, "cost_usd": 0.5}
    database.record_step("r1", str(ws), "here", row)
    ruling = {"run_id": "r1", "workspace": str(ws), "host": "here", "step": "干活",
              "round": 1, "kind": "verdict", "state": "achieved"}  # fmt: skip
    database.record_ruling(ruling)
    database.close()


def wall(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = max(10, parser.parse_args().rounds)
    with tempfile.TemporaryDirectory() as folder:
        a_run(Path(folder))
        commands = subjects(Path(folder))
        for cmd in commands.values():  # warm the page cache once
            wall(cmd)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, cmd in commands.items():
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
    status = statistics.median(times["flower status"])
    sdk = statistics.median(times["import claude_agent_sdk"])
    light = status < sdk
    print(
        f"flower status takes {status / sdk:.2f}x the SDK's import alone:"
        f" {'meets' if light else 'MISSES'} the below-1x target"
    )
    return 0 if over <= TARGET_S and light else 1


if __name__ == "__main__":
    sys.exit(main())
