"""The workspace's picture at the end of a step, and what changed by the next wake."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from flower.records.drift import SHOWN, STATE_NAME, Drift, record, since, snapshot


def touch(path: Path, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def later(path: Path) -> None:
    """Move the file's mtime on, as an edit a second later would."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def git(ws: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True, env=env)


def test_edited_deleted_and_added_files_are_told_apart(workspace: Path, tmp_path: Path) -> None:
    runs = workspace / "runs"
    touch(workspace / "keep.txt")
    touch(workspace / "gone.txt")
    touch(workspace / "same.txt")
    record(workspace, runs)

    touch(workspace / "keep.txt", "edited")
    (workspace / "gone.txt").unlink()
    touch(workspace / "src" / "new.py")
    touch(runs / "manifest.json", "[]")  # flower's own files never count
    touch(workspace / ".flower" / "notes" / "需求.md", "brief")
    touch(workspace / "node_modules" / "x" / "index.js")

    drift = since(workspace, runs)
    assert (drift.modified, drift.deleted, drift.added) == (
        ["keep.txt"],
        ["gone.txt"],
        ["src/new.py"],
    )
    assert drift.summary() == (
        "since the last step, 3 files changed (keep.txt modified, gone.txt deleted,"
        " src/new.py added)"
    )
    prompt = drift.prompt()
    assert "- modified: keep.txt" in prompt and "- deleted: gone.txt" in prompt
    assert "- added: src/new.py" in prompt and prompt.endswith("remember of it.")


def test_a_same_size_edit_counts_and_a_touch_alone_does_not(workspace: Path) -> None:
    runs = workspace / "runs"
    touch(workspace / "a.txt", "aaaa")
    touch(workspace / "b.txt", "bbbb")
    record(workspace, runs)
    later(workspace / "a.txt")  # the mtime moves, the content is the same
    touch(workspace / "b.txt", "BBBB")
    later(workspace / "b.txt")
    assert since(workspace, runs).modified == ["b.txt"]


def test_a_copied_folder_is_no_change_though_every_mtime_moved(
    workspace: Path, tmp_path: Path
) -> None:
    """``cp -r`` (no ``-p``) gives every file a new mtime: the run that goes where the
    folder goes must not tell its agents that everything changed."""
    touch(workspace / "src" / "main.py", "print(1)\n")
    touch(workspace / "README.md", "hi\n")
    record(workspace, workspace / "runs")
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(workspace), str(copy)], check=True)
    for name in ("src/main.py", "README.md"):
        later(copy / name)
    assert not since(copy, copy / "runs")
    touch(copy / "README.md", "HI\n")
    assert since(copy, copy / "runs").modified == ["README.md"]


def test_a_picture_from_before_digests_falls_back_to_the_mtime(workspace: Path) -> None:
    runs = workspace / "runs"
    touch(workspace / "a.txt", "aaaa")
    record(workspace, runs)
    picture = json.loads((runs / STATE_NAME).read_text())
    picture["files"] = {k: v[:2] for k, v in picture["files"].items()}
    (runs / STATE_NAME).write_text(json.dumps(picture))
    assert not since(workspace, runs)
    later(workspace / "a.txt")
    assert since(workspace, runs).modified == ["a.txt"]


def test_nothing_changed_or_nothing_recorded_is_no_drift(workspace: Path) -> None:
    runs = workspace / "runs"
    touch(workspace / "a.txt")
    assert not since(workspace, runs)  # never recorded
    record(workspace, runs)
    assert not since(workspace, runs) and since(workspace, runs).summary() == ""
    assert Drift().prompt() == ""
    (runs / STATE_NAME).write_text("{not json", encoding="utf-8")
    assert not since(workspace, runs)  # an unreadable picture: nothing to compare with


def test_in_git_ignored_files_do_not_count_and_a_new_commit_does(workspace: Path) -> None:
    runs = workspace / "runs"
    git(workspace, "init", "-q")
    touch(workspace / ".gitignore", "build/\nruns/\n")
    touch(workspace / "main.py")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "one")
    record(workspace, runs)
    assert "main.py" in json.loads((runs / STATE_NAME).read_text())["files"]

    touch(workspace / "build" / "out.bin", "compiled")
    touch(workspace / "draft.md")  # untracked but not ignored: a human's new file
    git(workspace, "commit", "-q", "--allow-empty", "-m", "two")

    drift = since(workspace, runs)
    assert drift.added == ["draft.md"] and drift.head is not None
    assert drift.head[0] != drift.head[1]
    assert "the commit moved from" in drift.summary()
    assert "the git commit moved from" in drift.prompt()


def test_a_long_list_is_cut_in_the_summary_but_whole_in_the_prompt(workspace: Path) -> None:
    runs = workspace / "runs"
    record(workspace, runs)
    for n in range(SHOWN + 3):
        touch(workspace / f"f{n:02d}.txt")
    drift = since(workspace, runs)
    assert drift.summary().endswith(", and 3 more)")
    assert drift.prompt().count("- added:") == SHOWN + 3


def test_the_picture_leaves_out_the_run_dir_wherever_it_is(workspace: Path) -> None:
    touch(workspace / "state" / "sessions.db")
    touch(workspace / "a.txt")
    assert set(snapshot(workspace, skip=(workspace / "state",))["files"]) == {"a.txt"}


def test_a_workspace_that_cannot_be_read_records_nothing_and_raises_nothing(
    tmp_path: Path,
) -> None:
    record(tmp_path / "missing", tmp_path / "missing" / "runs")
    assert not since(tmp_path / "missing", tmp_path / "missing" / "runs")
