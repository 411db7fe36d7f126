"""Start-up cost of the ``flower`` command against the bare interpreter.

Runs ``python -c pass``, ``flower --help``, ``flower plugins list``, ``flower status``
(a folder with a run, its manifest, lineage and a SQLite store holding a step and a
ruling) and ``import claude_agent_sdk`` (what every run pays before its first request,
and what ``status`` must not) alternately, so machine noise hits all alike, and reports
medians and the difference from the bare interpreter, twice: wall time (what a user
waits) and CPU time (user + system of the process, which other work on a shared
machine does not inflate; the verdict uses it, so a busy machine cannot fail or pass
the target by itself). Targets: ``flower --help`` and ``flower plugins list`` at most
0.10 s above ``python -c pass``; ``flower status`` below the SDK's import alone.
``tests/test_startup.py`` pins what each light command may import.

    python benchmarks/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOWER = str(Path(sys.executable).parent / "flower")
TARGET_S = 0.10
#: The commands held to ``TARGET_S`` above the bare interpreter.
LIGHT = ("flower --help", "flower plugins list")


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
    from flower.records.lineage import LINEAGE_NAME
    from flower.records.manifest import Manifest
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


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``cmd``."""
    started = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = max(10, parser.parse_args().rounds)
    with tempfile.TemporaryDirectory() as folder:
        a_run(Path(folder))
        commands = subjects(Path(folder))
        for cmd in commands.values():  # warm the page cache once
            timed(cmd)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, cmd in commands.items():
                wall, cpu = timed(cmd)
                walls[name].append(wall)
                cpus[name].append(cpu)
    wall = {name: statistics.median(samples) for name, samples in walls.items()}
    cpu = {name: statistics.median(samples) for name, samples in cpus.items()}
    bare_wall, bare_cpu = wall["python -c pass"], cpu["python -c pass"]
    print(
        f"{'subject':24} {'wall s':>7} {'above':>7} {'ratio':>6}  {'cpu s':>6} {'above':>7}"
        f" {'ratio':>6}   (medians of {rounds} alternated rounds)"
    )
    for name in walls:
        print(
            f"{name:24} {wall[name]:7.3f} {wall[name] - bare_wall:+7.3f}"
            f" {wall[name] / bare_wall:6.2f}  {cpu[name]:6.3f} {cpu[name] - bare_cpu:+7.3f}"
            f" {cpu[name] / bare_cpu:6.2f}"
        )
    ok = True
    for name in LIGHT:
        over = cpu[name] - bare_cpu
        ok = ok and over <= TARGET_S
        print(
            f"{name} is {over:.3f} s of CPU ({wall[name] - bare_wall:.3f} s of wall time) above"
            f" the bare interpreter: {'meets' if over <= TARGET_S else 'MISSES'} the"
            f" {TARGET_S} s target"
        )
    status, sdk = cpu["flower status"], cpu["import claude_agent_sdk"]
    light = status < sdk
    print(
        f"flower status takes {status / sdk:.2f}x the CPU of the SDK's import alone:"
        f" {'meets' if light else 'MISSES'} the below-1x target"
    )
    return 0 if ok and light else 1


if __name__ == "__main__":
    sys.exit(main())
