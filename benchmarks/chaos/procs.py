"""The processes of this machine, read from ``/proc``: which ``flower run`` of the
harness's flow is alive, for which workspace, since when, and whose child it is (the
faults pick their victims here; the monitor samples it)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .config import FLOW


@dataclass
class Proc:
    pid: int
    ppid: int
    argv: list[str]
    started: float


_BOOT = 0.0
_TICKS = os.sysconf("SC_CLK_TCK")


def _boot_time() -> float:
    global _BOOT
    if not _BOOT:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime"):
                _BOOT = float(line.split()[1])
    return _BOOT


def processes() -> dict[int, Proc]:
    found: dict[int, Proc] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        started = _boot_time() + int(fields[19]) / _TICKS
        found[int(entry.name)] = Proc(
            int(entry.name),
            int(fields[1]),
            [a.decode(errors="replace") for a in argv if a],
            started,
        )
    return found


def flower_runs(procs: dict[int, Proc]) -> dict[int, str]:
    """``pid -> workspace`` of every live ``flower run`` of this harness's flow."""
    runs: dict[int, str] = {}
    for proc in procs.values():
        argv = proc.argv
        if "run" in argv and f"{FLOW}:main" in argv and "-w" in argv:
            i = argv.index("-w")
            if i + 1 < len(argv):
                runs[proc.pid] = argv[i + 1]
    return runs


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def children_of(pid: int) -> list[int]:
    return [p for p, proc in processes().items() if proc.ppid == pid]


def group_of(pgid: int) -> list[int]:
    """Every live process in process group ``pgid`` (a "machine": worker, flower, CLI)."""
    found = []
    for pid in processes():
        try:
            if os.getpgid(pid) == pgid:
                found.append(pid)
        except OSError:
            continue
    return found


def run_of(ws: Path) -> str:
    """The run id a workspace's ``runs/lineage.json`` names ("" before it has one)."""
    try:
        data = json.loads((ws / "runs" / "lineage.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    run = data.get("run") if isinstance(data, dict) else None
    return run if isinstance(run, str) else ""
