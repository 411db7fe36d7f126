"""manifest.json and the store's ``steps`` agree on a run's rows, whichever write failed.

Found by the chaos harness (benchmarks/chaos): a flower whose workspace disk was full
could not write ``manifest.json`` while the store kept the step's row; the file lacked
that row for good. Each finished step now reconciles the two: rows the store kept go
into the file, rows of this process the store missed go into the store.
"""

from __future__ import annotations

import json
from pathlib import Path

from flower.records.lineage import LINEAGE_NAME
from flower.records.manifest import mirror_step
from flower.runtime.runner import Runtime


def row(run: str, step: str, started: float) -> dict:
    return {
        "run": run, "step": step, "ok": True, "cost_usd": 0.1, "started_at": started,
        "ended_at": started + 1, "session_id": f"s-{step}",
    }  # fmt: skip


def runtime(tmp_path: Path) -> Runtime:
    workspace = tmp_path / "proj"
    workspace.mkdir()
    rt = Runtime(workspace=workspace, run_dir=workspace / "runs")
    rt.run_id = rt.manifest.run = "proc-2"  # this process
    lineage = {"workspace": str(workspace), "run": "run-x", "woke": 2, "steps": {}}
    (rt.run_dir / LINEAGE_NAME).write_text(json.dumps(lineage), encoding="utf-8")
    return rt


def keys(rows: list[dict]) -> set[tuple[str, str]]:
    return {(r["run"], r["step"]) for r in rows}


def test_a_row_the_full_disk_kept_from_the_file_comes_back(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    lost = row("proc-1", "设定目标", 10.0)  # stored; the file write hit ENOSPC
    rt.store.record_step("run-x", str(rt.workspace), "m1", lost)  # type: ignore[attr-defined]
    mine = row("proc-2", "干活", 20.0)
    rt.manifest.write([mine])

    mirror_step(rt, mine)

    on_disk = json.loads(rt.manifest.path.read_text(encoding="utf-8"))
    assert keys(on_disk) == {("proc-1", "设定目标"), ("proc-2", "干活")}
    assert [r["step"] for r in on_disk] == ["设定目标", "干活"]  # in order of start
    stored = rt.store.step_rows("run-x")  # type: ignore[attr-defined]
    assert keys(stored) == keys(on_disk) and len(stored) == 2  # nothing stored twice
    mirror_step(rt, mine)  # again: nothing added either way
    assert len(json.loads(rt.manifest.path.read_text(encoding="utf-8"))) == 2
    assert len(rt.store.step_rows("run-x")) == 3  # type: ignore[attr-defined]  # mine, again
    rt.close()


def test_a_row_the_store_missed_is_added_at_the_next_step(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    first = row("proc-2", "确认需求", 10.0)  # its mirror failed: the connection was cut
    second = row("proc-2", "设定目标", 20.0)
    other = row("proc-0", "旧的", 5.0)  # another process's row: maybe another run's
    rt.manifest.write([first, second])
    rt.manifest.restore([other])

    mirror_step(rt, second)

    stored = rt.store.step_rows("run-x")  # type: ignore[attr-defined]
    assert keys(stored) == {("proc-2", "确认需求"), ("proc-2", "设定目标")}
    assert len(stored) == 2
    rt.close()
