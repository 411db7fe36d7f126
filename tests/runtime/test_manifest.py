"""manifest.json: append semantics, atomic writes, two processes in one run_dir."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from flower.records.manifest import Manifest, manifest_row, new_run_id


def test_run_ids_are_timestamped_and_unique() -> None:
    ids = {new_run_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", i) for i in ids)
    assert new_run_id(0).startswith("19700101-") or new_run_id(0).startswith("1969")


@dataclass
class _R:
    step: str
    started_at: float = 0.0
    ended_at: float = 0.0

    @property
    def duration_s(self) -> float:
        return self.ended_at - self.started_at


def test_row_has_fields_duration_and_run() -> None:
    row = manifest_row(_R("a", 1.0, 3.5), "RUN")
    assert row == {"step": "a", "started_at": 1.0, "ended_at": 3.5, "duration_s": 2.5, "run": "RUN"}


def test_own_rows_replaced_others_kept(tmp_path: Path) -> None:
    one, two = Manifest(tmp_path, "run-1"), Manifest(tmp_path, "run-2")
    one.write([{"step": "a", "started_at": 1}])
    two.write([{"step": "b", "started_at": 2}])
    one.write([{"step": "a", "started_at": 1}, {"step": "c", "started_at": 3}])
    rows = json.loads((tmp_path / "manifest.json").read_text())
    assert [(r["run"], r["step"]) for r in rows] == [("run-1", "a"), ("run-2", "b"), ("run-1", "c")]
    assert one.read() == rows
    assert not list(tmp_path.glob("*.tmp"))


def test_a_corrupt_manifest_is_kept_aside_not_lost(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{half a file")
    Manifest(tmp_path, "r").write([{"step": "a"}])
    assert [r["step"] for r in json.loads((tmp_path / "manifest.json").read_text())] == ["a"]
    (aside,) = tmp_path.glob("manifest.json.corrupt-*")
    assert aside.read_text() == "{half a file"


WRITER = textwrap.dedent(
    """
    import sys, time
    from flower.records.manifest import Manifest
    run_dir, run, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    m = Manifest(run_dir, run)
    rows = []
    for i in range(n):
        rows.append({"step": f"{run}-{i}", "started_at": time.time()})
        m.write(rows)
    """
)


def test_two_processes_never_lose_each_others_rows(tmp_path: Path) -> None:
    n = 60
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), run, str(n)])
        for run in ("proc-a", "proc-b", "proc-c")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    rows = json.loads((tmp_path / "manifest.json").read_text())
    for run in ("proc-a", "proc-b", "proc-c"):
        assert sorted(r["step"] for r in rows if r["run"] == run) == sorted(
            f"{run}-{i}" for i in range(n)
        )
    assert len(rows) == 3 * n


def test_a_manifest_that_is_not_utf8_is_kept_aside_not_lost(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_bytes(b"\xff\xfe[half")
    Manifest(tmp_path, "r").write([{"step": "a"}])
    assert [r["step"] for r in json.loads((tmp_path / "manifest.json").read_text())] == ["a"]
    (aside,) = tmp_path.glob("manifest.json.corrupt-*")
    assert aside.read_bytes() == b"\xff\xfe[half"


def test_a_hand_edited_started_at_does_not_stop_the_write(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(
        json.dumps([{"step": "x", "started_at": "yesterday", "run": "other"}])
    )
    Manifest(tmp_path, "r").write([{"step": "a", "started_at": 5.0}])
    rows = json.loads((tmp_path / "manifest.json").read_text())
    assert [(r["run"], r["step"]) for r in rows] == [("other", "x"), ("r", "a")]
