"""lineage.json: the map step -> session that lets a new process continue the old one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flower.records import filelock
from flower.records.lineage import LINEAGE_NAME, Lineage


def disk(run_dir: Path) -> dict:
    return json.loads((run_dir / LINEAGE_NAME).read_text(encoding="utf-8"))


def test_a_missing_file_is_an_empty_lineage_and_nothing_is_written(
    tmp_path: Path, workspace: Path
) -> None:
    lin = Lineage.open(tmp_path / "runs", workspace)
    assert (lin.steps, lin.woke, lin.notice) == ({}, 0, "")
    assert lin.path == tmp_path / "runs" / LINEAGE_NAME
    assert lin.workspace == workspace.resolve()
    assert not (tmp_path / "runs").exists()


def test_remember_is_on_disk_at_once_and_a_new_process_reads_it(
    tmp_path: Path, workspace: Path
) -> None:
    run_dir = tmp_path / "runs"
    lin = Lineage.open(run_dir, workspace)
    lin.remember("干活", "sid-1")
    run = disk(run_dir)["run"]
    assert len(run) == 32 and lin.run == run  # the run's id, made on the first write
    assert disk(run_dir) == {"workspace": str(workspace.resolve()), "run": run, "woke": 0,
                             "steps": {"干活": "sid-1"}}  # fmt: skip
    assert lin.bump() == 1 and disk(run_dir)["woke"] == 1
    lin.remember("干活", "sid-2")  # a handoff moves the step to its successor
    again = Lineage.open(run_dir, workspace)
    assert (again.steps, again.woke) == ({"干活": "sid-2"}, 1)
    assert again.bump() == 2
    assert not list(run_dir.glob("*.tmp")) and not list(run_dir.glob(".*.tmp"))


def test_the_same_workspace_by_another_spelling_is_the_same_lineage(
    tmp_path: Path, workspace: Path
) -> None:
    Lineage.open(tmp_path / "runs", workspace).remember("s", "sid")
    link = tmp_path / "link"
    link.symlink_to(workspace, target_is_directory=True)
    assert Lineage.open(tmp_path / "runs", link).steps == {"s": "sid"}
    assert Lineage.open(tmp_path / "runs", workspace / "." / "sub" / "..").steps == {"s": "sid"}


def test_another_workspace_reads_as_empty_and_is_moved_aside_not_overwritten(
    tmp_path: Path, workspace: Path
) -> None:
    run_dir = tmp_path / "runs"
    old = tmp_path / "old-place"
    old.mkdir()
    Lineage.open(run_dir, old).remember("干活", "old-sid")
    before = (run_dir / LINEAGE_NAME).read_text()

    lin = Lineage.open(run_dir, workspace)
    assert (lin.steps, lin.woke) == ({}, 0)
    assert str(old.resolve()) in lin.notice and "not this one" in lin.notice
    assert (run_dir / LINEAGE_NAME).read_text() == before  # opening writes nothing

    lin.remember("干活", "new-sid")
    (aside,) = run_dir.glob(f"{LINEAGE_NAME}.foreign-*")
    assert aside.read_text() == before
    assert disk(run_dir)["steps"] == {"干活": "new-sid"}
    assert disk(run_dir)["workspace"] == str(workspace.resolve())


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"[]",
        b'"a string"',
        b'{"steps": {"s": "x"}}',  # no workspace
        b'{"workspace": 7, "steps": {}}',
        b"",
    ],
)
def test_a_corrupt_file_reads_as_empty_and_is_kept_aside(
    tmp_path: Path, workspace: Path, content: bytes
) -> None:
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    (run_dir / LINEAGE_NAME).write_bytes(content)
    lin = Lineage.open(run_dir, workspace)
    assert (lin.steps, lin.woke) == ({}, 0) and "unreadable" in lin.notice
    lin.remember("s", "sid")
    (aside,) = run_dir.glob(f"{LINEAGE_NAME}.corrupt-*")
    assert aside.read_bytes() == content
    assert disk(run_dir)["steps"] == {"s": "sid"}


def test_odd_values_inside_a_valid_file_are_skipped(tmp_path: Path, workspace: Path) -> None:
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    (run_dir / LINEAGE_NAME).write_text(
        json.dumps(
            {
                "workspace": str(workspace),
                "woke": "three",
                "steps": {"ok": "sid", "empty": "", "number": 5, "": "x", "none": None},
            }
        )
    )
    lin = Lineage.open(run_dir, workspace)
    assert (lin.steps, lin.woke, lin.notice) == ({"ok": "sid"}, 0, "")
    (run_dir / LINEAGE_NAME).write_text(json.dumps({"workspace": str(workspace), "woke": True}))
    assert Lineage.open(run_dir, workspace).woke == 0


def test_sessions_gone_from_the_store_are_dropped_but_stay_on_disk(
    tmp_path: Path, workspace: Path
) -> None:
    run_dir = tmp_path / "runs"
    first = Lineage.open(run_dir, workspace)
    first.remember("确认需求", "gone")
    first.remember("干活", "alive")
    first.remember("设定目标", "boom")

    def alive(sid: str) -> bool:
        if sid == "boom":
            raise RuntimeError("store unreachable")
        return sid == "alive"

    lin = Lineage.open(run_dir, workspace, alive=alive)
    assert lin.steps == {"干活": "alive"}
    assert "'确认需求'" in lin.notice and "'设定目标'" in lin.notice
    lin.remember("干活", "alive-2")
    assert lin.steps == {"干活": "alive-2"}  # the dead pairs do not come back
    assert disk(run_dir)["steps"] == {"确认需求": "gone", "干活": "alive-2", "设定目标": "boom"}
    lin.remember("确认需求", "fresh")  # a new session for the step replaces the dead one
    assert lin.steps == {"干活": "alive-2", "确认需求": "fresh"}


def test_two_objects_in_one_run_dir_keep_each_others_steps(tmp_path: Path, workspace: Path) -> None:
    run_dir = tmp_path / "runs"
    a = Lineage.open(run_dir, workspace)
    b = Lineage.open(run_dir, workspace)
    a.remember("a", "sid-a")
    b.remember("b", "sid-b")
    a.remember("shared", "from-a")
    b.remember("shared", "from-b")  # the latest remember of a key wins
    a.remember("a", "sid-a2")  # a's own key: a's value; b's newer "shared" survives
    assert disk(run_dir)["steps"] == {"a": "sid-a2", "b": "sid-b", "shared": "from-b"}
    assert a.steps == disk(run_dir)["steps"]  # a write also brings the others' steps in
    (run_dir / LINEAGE_NAME).unlink()  # someone deleted it: what b remembered comes back
    b.remember("c", "sid-c")
    assert disk(run_dir)["steps"] == {"b": "sid-b", "shared": "from-b", "c": "sid-c"}


def test_woke_never_goes_down_and_concurrent_bumps_both_count(
    tmp_path: Path, workspace: Path
) -> None:
    run_dir = tmp_path / "runs"
    a = Lineage.open(run_dir, workspace)
    b = Lineage.open(run_dir, workspace)
    assert a.bump() == 1
    assert b.bump() == 2  # b read 0 at open; the disk said 1
    a.remember("s", "sid")
    assert disk(run_dir)["woke"] == 2 and a.woke == 2


def test_a_write_that_fails_is_swallowed_and_recorded(tmp_path: Path, workspace: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the run dir should be")
    lin = Lineage.open(blocker, workspace)
    lin.remember("s", "sid")  # no exception: continuity never stops the work
    assert lin.steps == {"s": "sid"} and lin.last_error and "Error" in lin.last_error
    assert lin.bump() == 1
    assert blocker.read_text() == "a file where the run dir should be"


def test_bad_arguments_are_one_line_errors(tmp_path: Path, workspace: Path) -> None:
    lin = Lineage.open(tmp_path, workspace)
    with pytest.raises(ValueError, match="non-empty name"):
        lin.remember("", "sid")
    with pytest.raises(ValueError, match="non-empty session id"):
        lin.remember("s", "")
    assert not (tmp_path / LINEAGE_NAME).exists()


def test_archive_moves_lineage_and_extras_into_a_new_folder(
    tmp_path: Path, workspace: Path
) -> None:
    run_dir = tmp_path / "runs"
    notes = tmp_path / "wb" / "notes"
    notes.mkdir(parents=True)
    brief, goal, absent = notes / "需求.md", notes / "目标.md", notes / "nothing.md"
    brief.write_text("brief")
    goal.write_text("goal")
    lin = Lineage.open(run_dir, workspace)
    lin.remember("干活", "sid")
    lin.bump()
    db = run_dir / "sessions.db"
    db.write_text("untouched")

    first = lin.archive(notes / "archive", extra=[brief, goal, absent])
    assert first.parent == notes / "archive" and len(first.name) == len("YYYYmmdd-HHMMSS")
    assert sorted(p.name for p in first.iterdir()) == ["lineage.json", "目标.md", "需求.md"]
    assert json.loads((first / LINEAGE_NAME).read_text())["steps"] == {"干活": "sid"}
    assert (first / "需求.md").read_text() == "brief"
    assert not brief.exists() and not goal.exists() and not (run_dir / LINEAGE_NAME).exists()
    assert (lin.steps, lin.woke) == ({}, 0) and db.read_text() == "untouched"
    assert Lineage.open(run_dir, workspace).steps == {}

    lin.remember("干活", "next")  # a new stretch of history starts
    assert lin.bump() == 1
    brief.write_text("brief 2")
    second = lin.archive(notes / "archive", extra=[brief])
    third = lin.archive(notes / "archive")  # nothing left to move: still a new folder
    assert len({first, second, third}) == 3
    assert sorted(p.name for p in second.iterdir()) == ["lineage.json", "需求.md"]
    assert list(third.iterdir()) == []
    assert json.loads((second / LINEAGE_NAME).read_text())["woke"] == 1


def test_archive_moves_nothing_through_a_linked_notes_archive(
    tmp_path: Path, workspace: Path
) -> None:
    from flower.kernel.files import LinkedWrite
    from flower.records.workbench import Workbench

    wb = Workbench(workspace)
    wb.ensure()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (wb.notes / "archive").symlink_to(elsewhere, target_is_directory=True)
    brief = wb.notes / "需求.md"
    brief.write_text("brief")
    lin = Lineage.open(tmp_path / "runs", workspace)
    lin.remember("干活", "sid")
    with pytest.raises(LinkedWrite):
        lin.archive(wb.notes / "archive", extra=[brief])
    assert list(elsewhere.iterdir()) == []
    assert brief.read_text() == "brief" and lin.steps == {"干活": "sid"}


def test_archive_keeps_both_of_two_extras_with_one_name(tmp_path: Path, workspace: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.md").write_text("A")
    (tmp_path / "b" / "x.md").write_text("B")
    lin = Lineage.open(tmp_path / "runs", workspace)
    dest = lin.archive(tmp_path / "arch", extra=[tmp_path / "a" / "x.md", tmp_path / "b" / "x.md"])
    assert sorted((p.name, p.read_text()) for p in dest.iterdir()) == [
        ("x-2.md", "B"),
        ("x.md", "A"),
    ]


def test_the_lock_is_reentrant_in_one_thread(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    with filelock.locked(target):
        assert filelock.held(target)
        with filelock.locked(target):  # a signal handler writing mid-write: no deadlock
            assert filelock.held(target)
        assert filelock.held(target)
    assert not filelock.held(target)
    assert (tmp_path / "f.json.lock").exists()


CHILD = textwrap.dedent(
    """
    import sys, time
    from flower.records.lineage import Lineage

    run_dir, workspace, who = sys.argv[1], sys.argv[2], sys.argv[3]
    lin = Lineage.open(run_dir, workspace)
    print("ready", flush=True)
    sys.stdin.readline()  # both start writing together
    for i in range(40):
        lin.remember(f"{who}-{i}", f"sid-{who}-{i}")
        if i % 10 == 0:
            lin.bump()
    """
)


def test_two_processes_remembering_at_once_keep_every_step(tmp_path: Path, workspace: Path) -> None:
    run_dir = tmp_path / "runs"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(run_dir), str(workspace), who],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for who in ("a", "b")
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    steps = disk(run_dir)["steps"]
    assert steps == {f"{w}-{i}": f"sid-{w}-{i}" for w in ("a", "b") for i in range(40)}
    assert disk(run_dir)["woke"] == 8  # four bumps each, none lost
