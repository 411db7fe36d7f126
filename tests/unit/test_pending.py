"""pending.json: the questions a run waits on outlive its process, are asked again at the
next wake, and reach the step that asked exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flower.records.pending import (
    PENDING_NAME,
    PendingFile,
    answer_stale,
    drop_stale,
    read_pending,
    stale_asks,
    take_answers,
)

ASKED = {"id": "q1", "state": "asked", "question": "换行?", "options": ["LF", "CRLF"]}


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def left_by_a_dead_run(run_dir: Path, *asks: dict[str, object]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    data = {"pid": dead_pid(), "asks": list(asks)}
    (run_dir / PENDING_NAME).write_text(json.dumps(data))


def test_a_live_run_mirrors_its_questions_and_keeps_the_unanswered_at_its_end(
    tmp_path: Path,
) -> None:
    pending = PendingFile(tmp_path)
    pending.update(ASKED, "确认需求")
    assert read_pending(tmp_path)["asks"][0]["step"] == "确认需求"
    pending.update({**ASKED, "state": "cancelled"})  # the run is stopping: not an answer
    pending.clear()
    assert (tmp_path / PENDING_NAME).exists()  # unanswered: kept for the next flower
    assert stale_asks(tmp_path) == []  # this process is alive: not stale yet
    pending.update({**ASKED, "state": "answered"})
    pending.clear()
    assert not (tmp_path / PENDING_NAME).exists()


def test_a_stale_question_is_answered_and_delivered_once_to_its_step(tmp_path: Path) -> None:
    left_by_a_dead_run(
        tmp_path,
        {"id": "q1", "question": "换行?", "options": ["LF", "CRLF"], "step": "确认需求"},
        {"id": "q2", "question": "语言?", "step": "干活"},
    )
    assert read_pending(tmp_path) == {}  # its process is gone
    assert [a["id"] for a in stale_asks(tmp_path)] == ["q1", "q2"]
    assert take_answers(tmp_path, "确认需求") == ""  # not answered yet
    assert answer_stale(tmp_path, "q1", "CRLF") and not answer_stale(tmp_path, "q1", "LF")
    assert answer_stale(tmp_path, "q2", None)  # "you decide"
    assert not answer_stale(tmp_path, "q9", "x")
    told = take_answers(tmp_path, "确认需求")
    assert "换行?(选项:LF / CRLF)" in told and "人现在的回答:CRLF" in told
    assert take_answers(tmp_path, "确认需求") == ""  # once
    assert "人没有回答:你自己决定" in take_answers(tmp_path, "干活")
    assert not (tmp_path / PENDING_NAME).exists()


def test_a_new_run_keeps_the_old_questions_until_they_are_delivered(tmp_path: Path) -> None:
    left_by_a_dead_run(tmp_path, {"id": "q1", "question": "换行?", "step": "确认需求"})
    answer_stale(tmp_path, "q1", "LF")
    mine = PendingFile(tmp_path)
    mine.update({"id": "q1", "state": "asked", "question": "新问题"}, "干活")  # ids restart
    assert read_pending(tmp_path)["pid"] == os.getpid()
    assert "人现在的回答:LF" in take_answers(tmp_path, "确认需求")
    assert [a["question"] for a in read_pending(tmp_path)["asks"]] == ["新问题"]


def test_new_drops_the_old_questions(tmp_path: Path) -> None:
    left_by_a_dead_run(tmp_path, {"id": "q1", "question": "换行?", "step": "确认需求"})
    drop_stale(tmp_path)
    assert stale_asks(tmp_path) == [] and not (tmp_path / PENDING_NAME).exists()


def planted(run_dir: Path, kind: str) -> None:
    """What an agent or a cloned repository can leave where pending.json goes."""
    path = run_dir / PENDING_NAME
    run_dir.mkdir(parents=True, exist_ok=True)
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        real = run_dir / "elsewhere.json"
        real.write_text(json.dumps({"pid": 0, "asks": [], "stale": [{"id": "x", "question": "?"}]}))
        path.symlink_to(real)
    elif kind == "huge":
        path.write_text(json.dumps({"pid": 0, "asks": [], "stale": [], "pad": "x" * 2_000_000}))
    elif kind == "shapes":
        path.write_text(
            json.dumps(
                {"pid": 0, "asks": ["a string", 7, None, {"id": True, "question": "?"},
                 {"id": "ok", "question": "kept?", "options": ["a", 3], "step": ["x"]}],
                 "stale": {"not": "a list"}}
            )
        )  # fmt: skip
    elif kind == "bool-pid":
        path.write_text(json.dumps({"pid": True, "asks": [ASKED]}))
    elif kind == "huge-pid":  # no flower wrote it
        path.write_text(json.dumps({"pid": 10**30, "asks": [ASKED]}))


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "link", "huge", "bool-pid", "huge-pid"])
def test_a_planted_file_reads_as_no_question_and_never_stops_the_run(
    tmp_path: Path, kind: str
) -> None:
    run_dir = tmp_path / "runs"
    planted(run_dir, kind)
    assert stale_asks(run_dir) == []
    assert read_pending(run_dir) == {}
    assert take_answers(run_dir, "干活") == ""  # what a step's start reads
    assert answer_stale(run_dir, "x", "yes") is False
    PendingFile(run_dir).update(ASKED, step="确认需求")  # the run's own write goes on


def test_only_questions_of_the_expected_shape_are_kept(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs"
    planted(run_dir, "shapes")
    (left,) = stale_asks(run_dir)
    assert left == {"id": "ok", "question": "kept?", "options": ["a"], "step": "", "asked_at": None}
