"""flower runs as jobs of an existing task queue: procrastinate, on flower's own Postgres.

    export FLOWER_STORE_URL=postgresql://flower@db/flower      # the shared session store
    python examples/queue/defer.py examples/flows.py:main /srv/ws/a /srv/ws/b
    PYTHONPATH=examples/queue procrastinate --app=tasks.app worker   # on every machine

One job is one ``flower run TARGET -w WORKSPACE`` process: flower's signals, terminal
and run lock (``runs/run.lock``) are per process. The queue lives in FLOWER_QUEUE_URL,
by default the same database as FLOWER_STORE_URL. See docs/scaling.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from procrastinate import App, PsycopgConnector, RetryStrategy


def queue_url() -> str:
    """FLOWER_QUEUE_URL, else FLOWER_STORE_URL, as libpq wants it (no ``+psycopg``)."""
    url = os.environ.get("FLOWER_QUEUE_URL") or os.environ.get("FLOWER_STORE_URL") or ""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("postgres", "postgresql", "postgresql+psycopg"):
        raise SystemExit("set FLOWER_QUEUE_URL (or FLOWER_STORE_URL) to a postgresql:// URL")
    return f"postgresql://{rest}"


def flower_command() -> list[str]:
    """The ``flower`` script next to this Python (the venv's), else the one on PATH."""
    beside = Path(sys.executable).with_name("flower")
    found = str(beside) if beside.exists() else shutil.which("flower")
    if found is None:
        raise RuntimeError("no `flower` executable next to this Python or on PATH")
    return [found]


class FlowerFailed(Exception):
    """flower exited 1: the work ran and did not succeed. Worth another attempt."""


class FlowerRefused(Exception):
    """flower exited 2 (bad input) or was killed: another attempt would not help."""


app = App(connector=PsycopgConnector(conninfo=queue_url()))


@app.task(
    name="run_flow",
    # exit 1 is retried (the next attempt continues the run's sessions); exit 2 is not
    retry=RetryStrategy(max_attempts=3, wait=60, retry_exceptions=[FlowerFailed]),
)
def run_flow(workspace: str, target: str) -> None:
    """One flower run: ``flower run TARGET -w WORKSPACE``; a non-zero exit fails the job."""
    done = subprocess.run(
        [*flower_command(), "run", target, "-w", workspace],
        stdin=subprocess.DEVNULL,  # nobody at a keyboard
        check=False,
    )
    if done.returncode == 1:
        raise FlowerFailed(f"flower run {target} -w {workspace}: the work did not succeed")
    if done.returncode != 0:
        raise FlowerRefused(f"flower run {target} -w {workspace}: exit {done.returncode}")
