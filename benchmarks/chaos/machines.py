"""The "machines": one procrastinate worker each, a separate process with its own
``HOME`` and working directory, started again by a supervisor when a fault ends it
(as systemd would), and stopped at the end with SIGTERM (then SIGKILL)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .config import FLOW, HEARTBEAT, PACKAGE, QUEUE, RETRY_WAIT, STALLED_AFTER

if TYPE_CHECKING:
    from .harness import Chaos


def flower_script() -> str:
    beside = Path(sys.executable).with_name("flower")
    return str(beside) if beside.exists() else (shutil.which("flower") or "flower")


def base_env(chaos: Chaos) -> dict[str, str]:
    """This process's environment without anything that could reach a real model or
    another database (flower's offline list), pointed at the harness's store."""
    from flower.testing.env import LEAKY_VARIABLES

    env = {k: v for k, v in os.environ.items() if k not in LEAKY_VARIABLES}
    for name in ("FLOWER_QUEUE_URL", "PGAPPNAME", "CI", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    env["FLOWER_STORE_URL"] = chaos.store_url
    env["FLOWER_LANG"] = "zh"
    env["FLOWER_DOTENV"] = "0"
    return env


def worker_env(chaos: Chaos, name: str) -> dict[str, str]:
    """A machine's environment: its own HOME, the scripted model as the API, the decoy
    key (every process has it, so a leak anywhere would show), and the harness's tag as
    the queue connections' ``application_name`` (what ``pg-kill`` looks for)."""
    from flower.testing import offline_env

    home = chaos.root / "machines" / name / "home"
    env = base_env(chaos)
    env.update(offline_env(chaos.model.base_url, home=home, max_retries=1))
    env = {k: v for k, v in env.items() if v}
    env["ANTHROPIC_API_KEY"] = chaos.key
    env["PGAPPNAME"] = chaos.tag
    env["PYTHONPATH"] = os.pathsep.join([str(QUEUE), str(PACKAGE.parent)])
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_worker(chaos: Chaos, name: str) -> None:
    cwd = chaos.root / "machines" / name / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    with (chaos.root / "machines" / name / "worker.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, str(PACKAGE), "worker", "--name", name],
            cwd=cwd,
            env=worker_env(chaos, name),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the "machine"
        )
    chaos.workers[name] = proc


def supervise(chaos: Chaos) -> None:
    """Start a worker again a second after it died, as a service manager would."""
    while not chaos.stopping:
        for name, proc in list(chaos.workers.items()):
            if proc is not None and proc.poll() is not None and name not in chaos.restarting:
                chaos.restarting.add(name)

                def again(name: str = name) -> None:
                    if not chaos.stopping:
                        start_worker(chaos, name)
                        chaos.report.restarts += 1
                    chaos.restarting.discard(name)

                timer = threading.Timer(1.0, again)
                timer.daemon = True
                timer.start()
        time.sleep(0.2)


def stop_workers(chaos: Chaos) -> None:
    """SIGTERM to every machine's process group, SIGKILL to what is left after 30 s, and
    SIGKILL to any ``flower run`` a killed worker left behind (an orphan still running)."""
    from .procs import flower_runs, processes

    chaos.stopping = True
    for proc in chaos.workers.values():
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.time() + 30
    for proc in chaos.workers.values():
        if proc is None:
            continue
        try:
            proc.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for pid, ws in flower_runs(processes()).items():
        if Path(ws).is_relative_to(chaos.root):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)


def worker(name: str) -> None:
    """One queue worker, as ``procrastinate --app=tasks.app worker`` runs it, with short
    heartbeats so a killed worker's job is found stalled in seconds, and the task's retry
    wait for exit 1 cut from 60 s to :data:`RETRY_WAIT` (the same task otherwise)."""
    import logging

    from procrastinate import RetryStrategy

    logging.basicConfig(
        level=logging.INFO, format=f"{name} %(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    sys.path.insert(0, str(QUEUE))
    import tasks

    tasks.run_flow.retry_strategy = RetryStrategy(
        max_attempts=3, wait=RETRY_WAIT, retry_exceptions=[tasks.FlowerFailed]
    )
    assert FLOW.exists()

    async def go() -> None:
        async with tasks.app.open_async():
            await tasks.app.run_worker_async(
                name=name,
                concurrency=1,
                wait=True,
                listen_notify=True,
                fetch_job_polling_interval=1.0,
                update_heartbeat_interval=HEARTBEAT,
                stalled_worker_timeout=STALLED_AFTER,
                shutdown_graceful_timeout=20.0,
            )

    asyncio.run(go())
