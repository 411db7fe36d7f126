"""The checks on how the runs were driven: never two processes on one session or run
at once, never a run without its advisory lock, no command run twice, every call a
fault cut off reported as possibly done, no secret anywhere."""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from . import flow
from .checkbase import Base, files, job_of, pid_of, shown

#: Seconds after a ``pg-kill`` in which a run's lock may be held by nobody: the flower
#: notices its connection's end at once and takes the lock back on a new one.
LOCK_GAP = 1.0
#: Seconds after a SIGTERM in which a request already on its way may still arrive.
TERM_SLACK = 0.3


class DriveChecks(Base):
    # no session and no run driven twice at once
    def overlaps(self) -> None:
        spans: dict[tuple[str, str], list[Any]] = defaultdict(list)
        per_job: dict[str, dict[int, list[float]]] = defaultdict(dict)
        for rec in self.c.model.requests:
            if getattr(rec, "ended", None) is None or "count_tokens" in rec.path:
                continue
            sid = rec.headers.get("x-claude-code-session-id", "")
            agent = rec.headers.get("x-claude-code-agent-id", "")
            spans[(sid, agent)].append(rec)
            pid = pid_of(rec)
            span = per_job[job_of(rec)].setdefault(pid, [rec.at, rec.ended])
            span[0], span[1] = min(span[0], rec.at), max(span[1], rec.ended)
        for (sid, agent), recs in spans.items():
            recs.sort(key=lambda r: r.at)
            for a, b in itertools.pairwise(recs):
                self.r.checked["request pairs"] += 1
                if b.at < a.ended - 0.001:
                    self.r.fail(
                        f"{job_of(a)}: two requests of session"
                        f" {sid[:8]}{'/' + agent if agent else ''}"
                        f" at once (pids {pid_of(a)} and {pid_of(b)})"
                    )
        orphans: Counter[str] = Counter()
        for rec in self.c.model.requests:
            pid = pid_of(rec)
            ended = self.c.ended_by_signal(pid)
            slack = 0.05 if pid in self.c.killed else TERM_SLACK
            if ended is not None and rec.at > ended + slack and "count_tokens" not in rec.path:
                orphans[f"{job_of(rec)} (flower {pid})"] += 1
        for who, n in orphans.items():
            self.r.fail(
                f"{who}: its CLI sent {n} requests after the flower was killed or told to stop,"
                " driving the run with nobody keeping what it did"
            )
        for job, by_pid in per_job.items():
            ordered = sorted(by_pid.items(), key=lambda kv: kv[1][0])
            for (pa, a), (pb, b) in itertools.pairwise(ordered):
                self.r.checked["process spans"] += 1
                if b[0] < a[1]:
                    self.r.fail(
                        f"{job}: flower {pa} sent a request at {a[1]:.2f} after flower {pb}"
                        f" had started driving the run at {b[0]:.2f}"
                    )

    # no flower drives a run whose advisory lock it does not hold
    def locks(self) -> None:
        """No flower drives a run whose advisory lock another holds; nobody may hold it
        only for a moment after a ``pg-kill`` (the server drops the lock with the
        connection; the flower takes it back within :data:`LOCK_GAP`)."""
        first_known = self.c.first_known
        kills = [f.at for f in self.r.faults if f.kind == "pg-kill"]
        by_pid: dict[int, list[float]] = defaultdict(list)
        for rec in self.c.model.requests:
            if getattr(rec, "ended", None) is not None:
                by_pid[pid_of(rec)].append(rec.at)
        unlocked: set[int] = set()
        gaps = 0
        for t, runs, holders in self.c.samples:
            for pid, ws in runs.items():
                job = Path(ws).name
                run = self.c.run_ids.get(job)
                if not run or t < first_known.get(job, t) + LOCK_GAP + 0.5:
                    continue  # a new run is locked once its id is made (every 0.5 s look)
                times = by_pid.get(pid, [])
                if not times or not (min(times) + 1.0 < t < max(times)):
                    continue  # not driving yet (or any more)
                self.r.checked["lock samples"] += 1
                who = holders.get(run)
                if who == pid or pid in unlocked:
                    continue
                if who is None and any(0 <= t - at < LOCK_GAP for at in kills):
                    gaps += 1
                    continue
                unlocked.add(pid)
                self.r.fail(
                    f"{job}: flower {pid} drove the run at {t:.2f} without its advisory lock"
                    f" ({'held by ' + str(who) if who else 'held by nobody'})"
                )
        self.r.figures["lock samples in the take-back after a pg-kill"] = gaps

    # no command ran twice
    def replays(self) -> None:
        for job, p in self.c.plans.items():
            path = self.c.workspaces[job] / flow.WORK_LOG
            lines = path.read_text(encoding="utf-8").split() if path.exists() else []
            self.r.checked["markers"] += len(lines)
            for mark, n in Counter(lines).items():
                if n > 1:
                    self.r.fail(f"{job}: command {mark} ran {n} times (a replayed call)")
            unknown = set(lines) - set(p.markers)
            if unknown:
                self.r.fail(f"{job}: unexpected markers {sorted(unknown)}")

    # every call a fault cut off was reported as possibly done
    def cut_off(self) -> None:
        from flower.stores.prune import UNSURE

        texts_by_session: dict[str, list[Any]] = defaultdict(list)
        for rec in self.c.model.requests:
            if rec.is_subagent or getattr(rec, "ended", None) is None:
                continue
            texts_by_session[rec.headers.get("x-claude-code-session-id", "")].append(rec)
        entries = self.rows("SELECT session_id, subpath, entry FROM entries ORDER BY id")
        calls: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
        answered: set[tuple[str, str, str]] = set()
        healed_in_store: set[tuple[str, str, str]] = set()  # the note kept as its result
        for sid, sub, entry in entries:
            content = (entry.get("message") or {}).get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    calls[(sid, sub)][block["id"]] = {
                        "name": block.get("name"),
                        "input": block.get("input"),
                    }
                elif block.get("type") == "tool_result":
                    answered.add((sid, sub, str(block.get("tool_use_id"))))
                    if UNSURE in json.dumps(block.get("content"), ensure_ascii=False):
                        healed_in_store.add((sid, sub, str(block.get("tool_use_id"))))
        orphans = 0
        for (sid, sub), found in calls.items():
            for tid, call in found.items():
                self.r.checked["tool calls"] += 1
                if (sid, sub, tid) in healed_in_store:
                    orphans += 1
                    self.r.checked["cut-off calls reported as possibly done"] += 1
                    continue
                if (sid, sub, tid) in answered:
                    continue
                orphans += 1
                later = texts_by_session.get(sid, [])
                healed = any(UNSURE in r.tool_results().get(tid, "") for r in later)
                quoted = shown(call)
                reported = any(UNSURE in (t := r.text()) and quoted and quoted in t for r in later)
                if sub:  # a worker's call: its coordinator is what resumes
                    reported = reported or self._agent_call_healed(sid, sub, later, calls, answered)
                if healed or reported:
                    self.r.checked["cut-off calls reported as possibly done"] += 1
                else:
                    resumed = bool(later)
                    self.r.fail(
                        f"session {sid[:8]}{'/' + sub if sub else ''}: the cut-off call"
                        f" {call['name']} {quoted!r} was never reported as possibly done"
                        f"{'' if resumed else ' (the session was never resumed)'}"
                    )
        self.r.figures["cut-off calls"] = orphans

    def _agent_call_healed(
        self, sid: str, sub: str, later: list[Any], calls: Any, answered: Any
    ) -> bool:
        """Whether the coordinator's Agent call that started worker ``sub`` was itself
        reported as possibly done (its whole worker then counts as unsure)."""
        from flower.stores.prune import UNSURE

        first = self.rows(
            "SELECT entry FROM entries WHERE session_id = %s AND subpath = %s ORDER BY id LIMIT 5",
            sid,
            sub,
        )
        prompt = ""
        for (entry,) in first:
            msg = entry.get("message") or {}
            if msg.get("role") == "user":
                content = msg.get("content")
                prompt = (
                    content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
                )
                break
        for tid, call in calls.get((sid, ""), {}).items():
            if (
                call["name"] == "Agent"
                and str((call["input"] or {}).get("prompt", ""))[:40] in prompt
            ):
                if any(UNSURE in r.tool_results().get(tid, "") for r in later):
                    return True
        return False

    # no secret anywhere
    def secrets(self) -> None:
        needles = [self.c.key.encode(), self.c.password.encode()]
        for path in files(self.c.root):
            if path.name == flow.SECRETS and path.parent.parent == self.c.root / "ws":
                continue  # where the harness planted them
            try:
                data = path.read_bytes()
            except OSError:
                continue
            self.r.checked["files searched"] += 1
            for needle in needles:
                if needle in data:
                    what = "API key" if needle == needles[0] else "store password"
                    self.r.fail(f"the decoy {what} is in {path.relative_to(self.c.root)}")
        tables = [
            t
            for (t,) in self.rows(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                self.c.schema,
            )
        ]
        for table in tables:
            (count,) = self.rows(f'SELECT count(*) FROM "{table}"')[0]
            self.r.checked["rows searched"] += count
            for needle in needles:
                hits = self.rows(
                    f'SELECT count(*) FROM "{table}" t WHERE t::text LIKE %s',
                    f"%{needle.decode()}%",
                )[0][0]
                if hits:
                    self.r.fail(f"the decoy secret is in {hits} rows of {table}")
