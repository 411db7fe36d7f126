"""What one chaos run is asked to do (:class:`Config`), what it did (:class:`Fault`), and
what it found (:class:`Report`): shared by the harness, the faults and the checks."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The package: ``python benchmarks/chaos`` runs it, and so does each queue worker.
PACKAGE = Path(__file__).resolve().parent
REPO = PACKAGE.parents[1]
QUEUE = REPO / "examples" / "queue"
#: The workflow every job's ``flower run`` loads (a file, so every "machine" finds it).
FLOW = PACKAGE / "flow.py"

PG_URL = os.environ.get("FLOWER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
KINDS = (
    "kill-worker",
    "kill-flower",
    "term",
    "model-down",
    "overloaded",
    "pg-kill",
    "disk-full",
)
#: Seconds a worker's heartbeat may lapse before its job counts as stalled. Generous: on a
#: loaded two-core machine a live worker can miss a beat, and retrying a job whose flower
#: still runs costs a refused attempt (the run lock holds), not correctness.
STALLED_AFTER = 5.0
HEARTBEAT = 0.5
#: Retries of one failed job before the harness gives up on it (a job that fails every
#: time is a finding, not something to retry forever).
MAX_RETRIES = 12
#: The task's own retry wait for exit 1 (examples/queue says 60 s; the harness's faults
#: last seconds, so its workers wait one).
RETRY_WAIT = 1


@dataclass
class Config:
    workers: int = 4
    jobs: int = 20
    faults: int = 40
    seed: int = 1
    pg_url: str = PG_URL
    kinds: tuple[str, ...] = KINDS
    #: Mean seconds between two faults.
    gap: float = 2.5
    #: A reply delivered this close before its process was killed may be lost with it.
    grace: float = 1.5
    #: Seconds the scripted model waits before each reply.
    delay: float = 0.05
    drain_timeout: float = 900.0
    keep: Path | None = None
    quiet: bool = False


@dataclass
class Fault:
    """One fault that landed: its kind, when, on what, and the processes it ended."""

    kind: str
    at: float
    target: str = ""
    detail: str = ""
    #: The ``flower run`` processes the fault killed outright (SIGKILL): their replies
    #: may be lost within ``grace``, and their CLIs must not go on without them.
    pids: list[int] = field(default_factory=list)


@dataclass
class Report:
    config: dict[str, Any] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    retries: Counter[str] = field(default_factory=Counter)
    restarts: int = 0
    figures: dict[str, Any] = field(default_factory=dict)
    checked: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fail(self, what: str) -> None:
        self.violations.append(what)

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "faults": Counter(f.kind for f in self.faults),
            "fault_log": [f.__dict__ for f in self.faults],
            "skipped": self.skipped,
            "retries": dict(self.retries),
            "worker_restarts": self.restarts,
            "figures": self.figures,
            "checked": dict(self.checked),
            "violations": self.violations,
            "notes": self.notes,
        }
