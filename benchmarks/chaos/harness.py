"""The run: a fresh schema, the jobs deferred through ``examples/queue``, the machines
started, faults dealt at seeded random times while the jobs go on, stalled and failed
jobs retried as docs/scaling.md says until every job is done, then the checks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import flow, machines
from .config import FLOW, MAX_RETRIES, PG_URL, QUEUE, STALLED_AFTER, Config, Report
from .faults import inject, schedule
from .model import chaos_model
from .monitor import monitor


class Chaos:
    """One chaos run; :meth:`run` does it all and returns the :class:`Report`."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.rng = random.Random(cfg.seed)
        self.report = Report(config={k: str(v) for k, v in cfg.__dict__.items()})
        self.tag = f"chaos{uuid.uuid4().hex[:8]}"
        # decoys: every process has the key, the store's URL has the password
        self.key = "sk-ant-api03-" + uuid.uuid4().hex + uuid.uuid4().hex[:20] + "-chaosAA"
        self.password = "chaospw" + uuid.uuid4().hex[:16]
        self.root = Path(tempfile.mkdtemp(prefix="flower-chaos-"))
        self.schema = f"flower_{self.tag}"
        base = cfg.pg_url if "://" in cfg.pg_url else PG_URL
        _scheme, rest = base.split("://", 1)
        userinfo, _, hostpart = rest.rpartition("@")
        user = userinfo.split(":", 1)[0] if userinfo else "postgres"
        secret = userinfo.split(":", 1)[1] if ":" in userinfo else ""
        hostpart = hostpart.split("?", 1)[0]
        auth = f"{user}:{secret}" if secret else user
        self.admin_url = f"postgresql://{auth}@{hostpart}"
        if secret:
            self.password = secret  # a real password is the secret to look for
        self.store_url = (
            f"postgresql+psycopg://{user}:{self.password}@{hostpart}"
            f"?options=-csearch_path%3D{self.schema}"
        )
        names = [f"job-{i:02d}" for i in range(cfg.jobs)]
        self.plans = {job: flow.plan(job, self.rng) for job in names}
        self.workspaces = {job: self.root / "ws" / job for job in self.plans}
        self.model = chaos_model(
            {j: flow.script(p, delay=cfg.delay) for j, p in self.plans.items()}
        )
        self.workers: dict[str, subprocess.Popen[bytes] | None] = {}
        self.restarting: set[str] = set()
        self.stopping = False
        self.tmpfs: list[Path] = []
        self.timers: list[threading.Timer] = []
        self.killed: dict[int, float] = {}  # flower pid -> when a SIGKILL ended it
        self.termed: dict[int, float] = {}  # flower pid -> when a SIGTERM reached it
        self.samples: list[tuple[float, dict[int, str], dict[str, int]]] = []
        self.started_at: dict[int, float] = {}
        self.run_ids: dict[str, str] = {}
        self.first_known: dict[str, float] = {}
        self.lock = threading.Lock()
        self.log = self.root / "harness.log"
        self.tries: Counter[int] = Counter()  # retries of each failed job
        # the faults' aim (faults.py): since when a fault waits for a flower in a tool
        # call, whether this one waits at all, and whether a term hits a flower
        self.aiming_since = 0.0
        self.aim_this = False
        self.term_flower: bool | None = None

    def ended_by_signal(self, pid: int) -> float | None:
        """When a fault's signal ended flower ``pid`` (or its CLI with it), if one did."""
        return self.killed.get(pid, self.termed.get(pid))

    def say(self, text: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {text}"
        with self.log.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
        if not self.cfg.quiet:
            print(line, flush=True)

    def pg(self, sql: str, *args: Any) -> list[Any]:
        import psycopg

        with psycopg.connect(
            self.admin_url, autocommit=True, application_name="flower-chaos-harness"
        ) as conn:
            cur = conn.execute(sql, args or None)
            return list(cur.fetchall()) if cur.description else []

    # -- setup ---------------------------------------------------------------------------

    def setup(self) -> None:
        self.pg(f'CREATE SCHEMA "{self.schema}"')
        subprocess.run(
            [machines.flower_script(), "db", "upgrade", self.store_url],
            env=machines.base_env(self),
            check=True,
            capture_output=True,
        )
        for ws in self.workspaces.values():
            ws.mkdir(parents=True)
        self.mount_tmpfs()
        for ws in self.workspaces.values():  # after the mounts: a tmpfs would hide it
            planted = f"ANTHROPIC_API_KEY={self.key}\nFLOWER_STORE_URL={self.store_url}\n"
            (ws / flow.SECRETS).write_text(planted, encoding="utf-8")
        self.model.start()
        self.say(f"model on {self.model.base_url}; schema {self.schema}; folder {self.root}")

    def mount_tmpfs(self) -> None:
        """Put one workspace in five on a 16 MiB tmpfs (``disk-full`` fills one of them);
        where ``mount`` is refused the kind is skipped and the report says why."""
        if "disk-full" not in self.cfg.kinds:
            return
        count = max(1, len(self.plans) // 5)
        chosen = self.rng.sample(sorted(self.workspaces), min(count, len(self.workspaces)))
        for job in chosen:
            ws = self.workspaces[job]
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=16m", f"flower-{self.tag}", str(ws)],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                why = (done.stderr or done.stdout).strip() or f"mount exited {done.returncode}"
                self.report.skipped["disk-full"] = f"cannot mount a tmpfs here: {why}"
                return
            self.tmpfs.append(ws)

    # -- the run -------------------------------------------------------------------------

    async def orchestrate(self) -> None:
        sys.path.insert(0, str(QUEUE))
        import os

        os.environ["FLOWER_STORE_URL"] = self.store_url
        os.environ.pop("FLOWER_QUEUE_URL", None)
        for name in ("tasks", "defer"):
            sys.modules.pop(name, None)
        import defer
        import tasks

        ids = await defer.defer(f"{FLOW}:main", [str(ws) for ws in self.workspaces.values()])
        self.say(f"deferred {len(ids)} jobs")
        for n in range(self.cfg.workers):
            machines.start_worker(self, f"w{n + 1}")
        threading.Thread(target=machines.supervise, args=(self,), daemon=True).start()
        threading.Thread(target=monitor, args=(self,), daemon=True).start()
        began = time.time()
        order = schedule(self)
        next_at = began + self.rng.uniform(1.0, 2.0) + self.cfg.gap
        faults_done_at: float | None = None if order else began
        async with tasks.app.open_async():
            jm = tasks.app.job_manager
            while True:
                now = time.time()
                jobs = await jm.list_jobs_async()
                states = Counter(j.status for j in jobs)
                if order and now >= next_at:
                    fault = inject(self, order[0])
                    if fault is not None:
                        order.pop(0)
                        self.report.faults.append(fault)
                        n = len(self.report.faults)
                        self.say(f"fault {n}: {fault.kind} {fault.target} {fault.detail}")
                        next_at = now + self.rng.uniform(0.5, 1.5) * self.cfg.gap
                        if not order:
                            faults_done_at = time.time()
                    else:
                        next_at = now + 0.5
                await self.retry(jm, jobs)
                done = states.get("succeeded", 0)
                given_up = sum(
                    1 for j in jobs if j.status == "failed" and self.tries[j.id] >= MAX_RETRIES
                )
                if done + given_up == len(ids):
                    break  # faults still to land are reported below
                if faults_done_at and now - faults_done_at > self.cfg.drain_timeout:
                    self.report.fail(
                        f"jobs not done {self.cfg.drain_timeout:.0f}s after the faults:"
                        f" {dict(states)}"
                    )
                    break
                await asyncio.sleep(0.5)
        ended = time.time()
        self.report.figures.update(
            wall_s=round(ended - began, 1),
            drain_s=round(ended - (faults_done_at or ended), 1),
            faults_injected=len(self.report.faults),
            faults_not_injected=len(order),
        )
        if order:
            self.report.fail(
                f"only {len(self.report.faults)} of {self.cfg.faults} faults landed before every"
                f" job was done (lower --gap): {dict(Counter(order))} left"
            )

    async def retry(self, jm: Any, jobs: list[Any]) -> None:
        """What an operator's periodic task does (docs/scaling.md): retry the jobs of
        workers whose heartbeat stopped, and the jobs a fault failed."""
        now = datetime.now(UTC)
        for job in await jm.get_stalled_jobs(seconds_since_heartbeat=STALLED_AFTER):
            await jm.retry_job_by_id_async(job.id, retry_at=now)
            self.report.retries["stalled"] += 1
            self.say(f"retry stalled job {job.id} ({Path(job.task_kwargs['workspace']).name})")
        for job in jobs:
            if job.status != "failed" or self.tries[job.id] >= MAX_RETRIES:
                continue  # given up after MAX_RETRIES: the checks say it ended failed
            self.tries[job.id] += 1
            await jm.retry_job_by_id_async(job.id, retry_at=now)
            self.report.retries["failed"] += 1
            self.say(f"retry failed job {job.id} ({Path(job.task_kwargs['workspace']).name})")

    def run(self) -> Report:
        from .checks import Checks

        t0 = time.time()

        def stop(signum: int, _frame: Any) -> None:
            raise KeyboardInterrupt(f"signal {signum}")

        signal.signal(signal.SIGTERM, stop)
        try:
            try:
                self.setup()
                asyncio.run(self.orchestrate())
            finally:
                machines.stop_workers(self)
                self.model.stop()
                for timer in self.timers:
                    timer.cancel()
            self.report.figures["total_s"] = round(time.time() - t0, 1)
            if self.cfg.keep is not None:
                self.dump_requests(self.root / "requests.jsonl")
            Checks(self).run()
        finally:
            self.cleanup()
        return self.report

    def dump_requests(self, path: Path) -> None:
        """The model's request log, one line a request (no headers but the harness's own
        and the CLI's session and agent ids: the key is in the others)."""
        keep = (flow.JOB_HEADER, flow.PID_HEADER, "x-claude-code-session-id")
        with path.open("w", encoding="utf-8") as out:
            for rec in self.model.requests:
                if "count_tokens" in rec.path:
                    continue
                row = {
                    "at": rec.at,
                    "ended": getattr(rec, "ended", None),
                    "conversation": rec.conversation,
                    "turn": rec.turn,
                    "outcome": rec.outcome,
                    "reply_id": getattr(rec, "reply_id", None),
                    "agent": rec.headers.get("x-claude-code-agent-id", ""),
                    **{h: rec.headers.get(h, "") for h in keep},
                }
                out.write(json.dumps(row) + "\n")

    def cleanup(self) -> None:
        """Unmount the tmpfs workspaces, drop the schema and the folder (``--keep``: copy
        the folder there first, tmpfs workspaces included, and keep the schema)."""
        import shutil

        if self.cfg.keep is not None:
            dest = self.cfg.keep / "root"
            shutil.copytree(self.root, dest, dirs_exist_ok=True, symlinks=True)
            self.report.notes.append(f"kept {dest}; schema {self.schema}")
        for ws in self.tmpfs:
            subprocess.run(["umount", "-l", str(ws)], capture_output=True)
        if self.cfg.keep is None:
            with contextlib.suppress(Exception):
                self.pg(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        shutil.rmtree(self.root, ignore_errors=True)
