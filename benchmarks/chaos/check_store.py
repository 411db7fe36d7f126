"""The checks on what was kept: every job succeeded with the scripted verdicts, nothing
was lost or stored twice (transcript lines, replies, manifest rows, rulings, lineages)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .checkbase import Base, job_of, pid_of
from .procs import run_of


class StoreChecks(Base):
    # every job succeeded; every ruling the scripted one
    def jobs(self) -> None:
        for jid, status, kwargs in self.rows(
            "SELECT id, status, args FROM procrastinate_jobs ORDER BY id"
        ):
            self.r.checked["jobs"] += 1
            if status != "succeeded":
                self.r.fail(f"job {jid} ({Path(kwargs['workspace']).name}) ended {status}")
        for job, p in self.c.plans.items():
            run = run_of(self.c.workspaces[job])
            if not run:
                self.r.fail(f"{job}: no run id in runs/lineage.json")
                continue
            rulings = self.rows(
                "SELECT kind, round, state, reason FROM ledger WHERE run_id = %s ORDER BY id", run
            )
            scripted = {p.verdict(n)[1]: p.verdict(n)[0] for n in range(1, len(p.rounds) + 1)}
            states = {"已达成": "achieved", "未达成": "not_yet"}
            for kind, rnd, state, reason in rulings:
                self.r.checked["ledger rows"] += 1
                if kind != "verdict" or reason not in scripted or states[scripted[reason]] != state:
                    self.r.fail(f"{job}: round {rnd} ruled {state!r} ({reason!r}), not as scripted")
            if not rulings or rulings[-1][2] != "achieved":
                self.r.fail(f"{job}: the last ruling is not 'achieved': {rulings[-1:]}")

    # every uuid once per transcript
    def transcripts(self) -> None:
        dupes = self.rows(
            "SELECT project_key, session_id, subpath, uuid, count(*) FROM entries"
            " WHERE uuid IS NOT NULL GROUP BY 1, 2, 3, 4 HAVING count(*) > 1"
        )
        for row in dupes:
            self.r.fail(f"line {row[3]} stored {row[4]} times in {row[1]}/{row[2]}")
        (count,) = self.rows("SELECT count(*) FROM entries")[0]
        self.r.checked["transcript lines"] += count

    # every reply the model delivered is in the store
    def replies(self) -> None:
        stored = {
            mid
            for (mid,) in self.rows(
                "SELECT DISTINCT entry->'message'->>'id' FROM entries"
                " WHERE entry->>'type' = 'assistant'"
            )
        }
        lost_in_kill = 0
        for rec in self.c.model.requests:
            if not getattr(rec, "delivered", False) or rec.outcome not in ("reply", "unscripted"):
                continue
            self.r.checked["replies"] += 1
            if rec.reply_id in stored:
                continue
            pid = pid_of(rec)
            ended = self.c.ended_by_signal(pid)
            if ended is not None and rec.at > ended + 0.05:
                continue  # sent after the signal: overlaps() says whether that was allowed
            if ended is not None and rec.ended is not None and ended - rec.ended < self.c.cfg.grace:
                lost_in_kill += 1  # delivered as the signal landed, to a process on its way out
                continue
            when = (
                "" if ended is None else f" (its flower was stopped {ended - rec.ended:.1f}s later)"
            )
            self.r.fail(
                f"{job_of(rec)}: the reply to {rec.conversation} turn {rec.turn} (pid {pid})"
                f" is not in the store{when}"
            )
        self.r.figures["replies lost with a process a signal ended"] = lost_in_kill
        unmatched = [r for r in self.c.model.requests if r.outcome == "unmatched"]
        for rec in unmatched[:5]:
            self.r.fail(f"{job_of(rec)}: a request no script answers: {rec.text()[-200:]!r}")

    # manifest rows, rulings of the notes, lineages
    def runs(self) -> None:
        for job, ws in self.c.workspaces.items():
            run = run_of(ws)
            if not run:
                continue
            try:
                rows = json.loads((ws / "runs" / "manifest.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                self.r.fail(f"{job}: manifest.json unreadable: {exc}")
                rows = []
            stored = self.rows("SELECT row FROM steps WHERE run_id = %s", run)
            keys = {(r["run"], r["step"], r["started_at"]) for (r,) in stored}
            for row in rows:
                self.r.checked["manifest rows"] += 1
                if (row["run"], row["step"], row["started_at"]) not in keys:
                    self.r.fail(f"{job}: manifest row {row['step']} of {row['run']} not in steps")
            local = {(r["run"], r["step"], r["started_at"]) for r in rows}
            last = max((float(r.get("ended_at") or 0) for (r,) in stored), default=0.0)
            for (r,) in stored:
                key = (r["run"], r["step"], r["started_at"])
                if key in local:
                    continue
                if self._full_at_the_end(job, float(r.get("ended_at") or 0), last):
                    continue
                self.r.fail(f"{job}: steps row {key[1]} of {key[0]} not in manifest.json")
            lineage = json.loads((ws / "runs" / "lineage.json").read_text(encoding="utf-8"))
            kept = self.rows("SELECT data FROM lineages WHERE run_id = %s", run)
            self.r.checked["lineages"] += 1
            if not kept or kept[0][0].get("steps") != lineage.get("steps"):
                self.r.fail(f"{job}: the store's lineage differs from lineage.json: {kept}")
            marked = json.loads((ws / ".flower" / "run.json").read_text(encoding="utf-8"))
            if marked.get("run") != run:
                self.r.fail(f"{job}: the workbench names run {marked.get('run')}, not {run}")
            for step, sid in lineage.get("steps", {}).items():
                if not self.rows("SELECT 1 FROM meta WHERE session_id = %s AND subpath = ''", sid):
                    self.r.fail(f"{job}: step {step}'s session {sid} is not in the store")
            notes = ws / ".flower" / "notes" / "判定记录.md"
            text = notes.read_text(encoding="utf-8") if notes.exists() else ""
            ruled = self.rows("SELECT reason, at FROM ledger WHERE run_id = %s", run)
            last = max((float(at) for _reason, at in ruled), default=0.0)
            for reason, at in ruled:
                if reason not in text and not self._full_at_the_end(job, float(at), last):
                    self.r.fail(f"{job}: ruling {reason!r} is in the store, not in the notes")
            for reason in re.findall(rf"{re.escape(job)} [^\n]*?(?:通过|一步)", text):
                self.r.checked["notes rulings"] += 1
                if not self.rows(
                    "SELECT 1 FROM ledger WHERE run_id = %s AND reason = %s", run, reason
                ):
                    self.r.fail(f"{job}: ruling {reason!r} of the notes is not in the store")

    def _full_at_the_end(self, job: str, when: float, last: float) -> bool:
        """Whether a row written at ``when`` only reached the store because ``job``'s
        disk was full then (a ``disk-full`` window, a second of slack) and nothing of the
        run was written after the disk came back, so flower had no later write to bring
        it back with (counted, not a violation)."""
        for fault in self.r.faults:
            if fault.kind != "disk-full" or fault.target != job:
                continue
            end = fault.at + float(fault.detail.rstrip("s") or 0) + 1.0
            if fault.at - 1.0 <= when <= end and last <= end:
                self.r.figures["rows kept only in the store (a full disk at the end)"] = (
                    self.r.figures.get("rows kept only in the store (a full disk at the end)", 0)
                    + 1
                )
                return True
        return False
