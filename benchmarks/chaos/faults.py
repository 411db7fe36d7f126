"""The faults: which land in what order (drawn from the seed) and how each is dealt.

=============  ================================================================================
kill-worker    SIGKILL of a queue worker: alone (its ``flower run`` goes on as an orphan, and
               the job's retry meets the run lock) or with its whole process group, worker,
               flower and CLI, as a lost machine (a supervisor starts the worker again)
kill-flower    SIGKILL of one ``flower run`` process
term           SIGTERM to a worker's process group (systemd's stop) or to one ``flower run``
model-down     the model API refuses connections for longer than the CLI's own retries
overloaded     the model API answers 529 to everything for a few seconds
pg-kill        ``pg_terminate_backend`` on every session of the store, the queue and the run
               locks (only this harness's: found by ``application_name``; the server stays up)
disk-full      a workspace on a tiny tmpfs is filled to the last byte for a few seconds
               (needs root's ``mount``; skipped with the reason where it fails)
=============  ================================================================================
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Fault
from .procs import children_of, flower_runs, group_of, processes

if TYPE_CHECKING:
    from .harness import Chaos


def schedule(chaos: Chaos) -> list[str]:
    """The kinds in the order they land: every kind once per shuffled batch, so a run of
    ``7 * n`` faults has ``n`` of each (skipped kinds left out)."""
    kinds = [k for k in chaos.cfg.kinds if k not in chaos.report.skipped]
    order: list[str] = []
    while kinds and len(order) < chaos.cfg.faults:
        batch = list(kinds)
        chaos.rng.shuffle(batch)
        order.extend(batch)
    return order[: chaos.cfg.faults]


def inject(chaos: Chaos, kind: str) -> Fault | None:
    """Deal one fault of ``kind`` now; ``None`` when it has no victim yet (try later)."""
    fault = Fault(kind, time.time())
    rng = chaos.rng
    live = [(n, p) for n, p in sorted(chaos.workers.items()) if p is not None and p.poll() is None]
    if kind == "kill-worker":
        busy = [(n, p) for n, p in live if children_of(p.pid)]
        if not busy:
            return None
        name, proc = rng.choice(busy)
        fault.target = name
        if rng.random() < 0.5:
            runs = flower_runs(processes())
            fault.pids = [pid for pid in group_of(proc.pid) if pid in runs]
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            fault.detail = "the machine (its process group)"
        else:
            os.kill(proc.pid, signal.SIGKILL)
            fault.detail = "the worker alone"
    elif kind == "kill-flower":
        runs = flower_runs(processes())
        if not runs:
            return None
        aimed = _aim(chaos, runs)
        if aimed is None:
            return None
        pid, fault.detail = aimed
        os.kill(pid, signal.SIGKILL)
        fault.target, fault.pids = Path(runs[pid]).name, [pid]
    elif kind == "term":
        runs = flower_runs(processes())
        if chaos.term_flower is None:
            chaos.term_flower = rng.random() < 0.5
        if chaos.term_flower and runs:
            aimed = _aim(chaos, runs)
            if aimed is None:
                return None
            chaos.term_flower = None
            pid, where = aimed
            os.kill(pid, signal.SIGTERM)
            chaos.termed.setdefault(pid, fault.at)
            fault.target, fault.detail = Path(runs[pid]).name, f"flower {where}".strip()
        else:
            busy = [(n, p) for n, p in live if children_of(p.pid)] or live
            if not busy:
                return None
            chaos.term_flower = None
            name, proc = rng.choice(busy)
            flowers = flower_runs(processes())
            for pid in group_of(proc.pid):
                if pid in flowers:
                    chaos.termed.setdefault(pid, fault.at)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            fault.target, fault.detail = name, "the worker's process group"
    elif kind == "model-down":
        if not chaos.model.running:
            return None
        seconds = rng.uniform(3.0, 7.0)
        chaos.model.restart(after=seconds)
        fault.detail = f"{seconds:.1f}s"
    elif kind == "overloaded":
        seconds = rng.uniform(2.0, 5.0)
        chaos.model.storm_until = time.time() + seconds
        fault.detail = f"{seconds:.1f}s"
    elif kind == "pg-kill":
        if not _pg_kill(chaos, fault):
            return None
    elif kind == "disk-full":
        if not _fill(chaos, fault):
            return None
    for pid in fault.pids:
        chaos.killed.setdefault(pid, fault.at)
    return fault


#: Seconds a flower-killing fault waits for a flower in the middle of a tool call.
AIM_FOR = 4.0


def _aim(chaos: Chaos, runs: dict[int, str]) -> tuple[int, str] | None:
    """A flower to hit: one in the middle of a tool call when one is (most of a flower's
    life is starting processes; a call cut off, and the resumed session told so, needs a
    fault that lands inside one). Waits up to :data:`AIM_FOR` seconds for one (``None``:
    try again shortly), then takes any, so every third fault is untargeted anyway."""
    calling = sorted(set(runs) & chaos.model.in_tool_call())
    if calling:
        chaos.aiming_since = 0.0
        return chaos.rng.choice(calling), "in a tool call"
    now = time.time()
    if not chaos.aiming_since:
        chaos.aiming_since = now
        chaos.aim_this = chaos.rng.random() < 0.67
    if chaos.aim_this and now - chaos.aiming_since < AIM_FOR:
        return None
    chaos.aiming_since = 0.0
    return chaos.rng.choice(sorted(runs)), ""


def _pg_kill(chaos: Chaos, fault: Fault) -> bool:
    """End every Postgres session of this harness's processes: the workers' queue
    connections (``PGAPPNAME`` is the harness's tag) and every flower's store and lock
    connections (``flower pid=<pid>`` of a live flower of this harness, or the tag)."""
    ours = {str(pid) for pid in flower_runs(processes())}
    rows = chaos.pg(
        "SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database()"
    )
    victims = []
    for pid, name in rows:
        found = re.match(r"flower pid=(\d+)", name or "")
        if name == chaos.tag or (found and found.group(1) in ours):
            victims.append(pid)
    if not victims:
        return False
    for pid in victims:
        chaos.pg("SELECT pg_terminate_backend(%s)", pid)
    fault.detail = f"{len(victims)} sessions"
    return True


def _fill(chaos: Chaos, fault: Fault) -> bool:
    """Fill one tmpfs workspace (one a flower works in, if any) to the last byte, and
    free it again a few seconds later."""
    if not chaos.tmpfs:
        return False
    runs = {Path(w) for w in flower_runs(processes()).values()}
    pool = [ws for ws in chaos.tmpfs if ws in runs] or chaos.tmpfs
    ws = chaos.rng.choice(pool)
    seconds = chaos.rng.uniform(2.0, 5.0)
    ballast = ws / ".chaos-ballast"
    with contextlib.suppress(OSError), ballast.open("wb") as out:
        while True:
            out.write(b"\0" * (1 << 20))
            out.flush()
    with contextlib.suppress(OSError), ballast.open("ab") as out:
        while True:  # the last few KiB as well
            out.write(b"\0" * 4096)
            out.flush()
    timer = threading.Timer(seconds, lambda: ballast.unlink(missing_ok=True))
    timer.daemon = True
    timer.start()
    chaos.timers.append(timer)
    fault.target, fault.detail = ws.name, f"{seconds:.1f}s"
    return True
