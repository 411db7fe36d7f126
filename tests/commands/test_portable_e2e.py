"""A run follows its folder, through the real ``flower`` and the real CLI.

``mv`` the project and run ``flower`` there: the same conversation goes on (its sessions
were re-keyed to the new path, and the wake line says so), and what a human changed in
the folder meanwhile is on the wake banner and in the resumed agent's next request.
``cp -r`` it and run ``flower`` in the copy: the copy forks (a new run id, the same
history), the original's files stay as they were.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from flower.records.lineage import LINEAGE_NAME
from flower.testing import ScriptedModel, conversation, text
from flower.workflow.starter import RESUME_PLAIN

from ..workflow import scripts as S
from .terminal import FLOWER, Flower

pytestmark = pytest.mark.e2e


#: A first run that is done in one round, and the coordinator's reply when a wake resumes it.
ONE_ROUND_THEN_RESUMED = [
    conversation("resumed", text(S.ROUND1), after_user=RESUME_PLAIN, system=S.COORDINATOR),
    *S.one_round(S.ACHIEVED, S.DISPATCH, text(S.ROUND1)),
]


def manifest_rows(project: Path) -> list[dict[str, Any]]:
    return json.loads((project / "runs" / "manifest.json").read_text(encoding="utf-8"))


def lineage(project: Path) -> dict[str, Any]:
    return json.loads((project / "runs" / LINEAGE_NAME).read_text(encoding="utf-8"))


def wake(project: Path, cwd: Path, env: dict[str, str] | None = None) -> Flower:
    """``flower`` in ``project`` again; it finished, so ``/again`` (not Enter, which leaves
    a finished run as it is) carries on; it must end well."""
    run = Flower("-w", str(project), "--timeout", "0", cwd=cwd, env=env)
    run.expect("It finished")
    run.type("/again")
    assert run.finish() == 0, run.text[-3000:]
    return run


def test_a_moved_folder_continues_and_says_what_changed_and_a_copy_forks(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    scripted_model.play(ONE_ROUND_THEN_RESUMED)
    first = tmp_path / "proj"
    first.mkdir()
    (first / "keep.txt").write_text("v1", encoding="utf-8")
    (first / "gone.txt").write_text("old", encoding="utf-8")
    run = Flower("-w", str(first), "写个 hello.txt", "--timeout", "0", cwd=tmp_path)
    assert run.finish() == 0, run.text[-3000:]
    (first / "keep.txt").write_text("v2, edited by hand", encoding="utf-8")  # while away
    (first / "gone.txt").unlink()
    work_session = lineage(first)["steps"]["干活"]
    run_id = lineage(first)["run"]

    moved = tmp_path / "moved"
    shutil.move(first, moved)
    woken = wake(moved, tmp_path)
    assert "moved here from" in woken.text and "re-keyed" in woken.text
    banner = woken.text.split("Continue?")[0]  # shown before the human decides
    assert "keep.txt modified" in banner and "gone.txt deleted" in banner
    (resumed,) = scripted_model.requests_for("resumed")  # the same conversation goes on
    assert "照这份已经确认的需求" in resumed.text() and RESUME_PLAIN in resumed.text()
    told = resumed.text()
    assert "- modified: keep.txt" in told and "- deleted: gone.txt" in told
    assert lineage(moved)["steps"]["干活"] == work_session
    assert lineage(moved)["run"] == run_id and lineage(moved)["workspace"] == str(moved)
    assert len(scripted_model.requests_for("clarify")) == 1  # nobody asked again

    copy = tmp_path / "copy"
    shutil.copytree(moved, copy)
    original = (moved / "runs" / LINEAGE_NAME).read_bytes()
    forked = wake(copy, tmp_path)
    assert "is a copy of" in forked.text and "fork" in forked.text
    assert len(scripted_model.requests_for("resumed")) == 2  # the copy has the history too
    assert lineage(copy)["run"] != run_id and lineage(copy)["workspace"] == str(copy)
    assert (moved / "runs" / LINEAGE_NAME).read_bytes() == original


@pytest.mark.postgres
def test_another_machine_on_the_same_postgres_continues_the_run(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path, pg_url: str
) -> None:
    """Machine one runs in /one with its own HOME; a clone of the project (without runs/)
    then lives on at /two under another HOME (nothing of machine one's ~/.claude comes
    along): the lineage and the transcripts come from the shared store, re-keyed to the
    new path, and the conversation goes on."""
    scripted_model.play(ONE_ROUND_THEN_RESUMED)
    homes = {}
    for name in ("home-one", "home-two"):
        home = tmp_path / name
        (home / ".claude").mkdir(parents=True)
        homes[name] = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                       "FLOWER_STORE_URL": pg_url}  # fmt: skip
    one = tmp_path / "one"
    one.mkdir()
    first = Flower(
        "-w", str(one), "写个 hello.txt", "--timeout", "0", cwd=tmp_path, env=homes["home-one"]
    )
    assert first.finish() == 0, first.text[-3000:]
    assert not (one / "runs" / "sessions.db").exists()  # the transcripts are in Postgres
    work_session = lineage(one)["steps"]["干活"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = subprocess.run(
        [FLOWER, "status", "--all", "--json"], capture_output=True, text=True, timeout=60,
        cwd=elsewhere, env={**os.environ, **homes["home-two"]},
    )  # fmt: skip  # another machine, another folder: the store lists the run
    (run,) = json.loads(listed.stdout)
    assert run["run"] == lineage(one)["run"] and run["workspace"] == str(one)
    rows = manifest_rows(one)
    assert run["steps"] == len(rows) and run["last_step"] == rows[-1]["step"] == "收尾"
    # the store keeps a run's cost to six decimals (a millionth of a dollar), summed per step
    assert run["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows), abs=1e-5)

    two = tmp_path / "two"
    # a clone on the other machine: the project and its workbench (.flower: the brief, the
    # goal, the run id), not runs/; the first machine is gone
    shutil.copytree(one, two, ignore=shutil.ignore_patterns("runs"))
    assert not (two / "runs").exists() and (two / ".flower" / "run.json").is_file()
    shutil.rmtree(one)
    shutil.rmtree(tmp_path / "home-one")
    again = wake(two, tmp_path, homes["home-two"])
    flat = " ".join(again.text.split())
    assert f"run {run['run'][:8]} came from the session store" in flat, again.text[-2000:]
    assert "moved here from" in flat
    assert lineage(two)["run"] == run["run"]  # the same run, not a fork
    (resumed,) = scripted_model.requests_for("resumed")
    assert "照这份已经确认的需求" in resumed.text()  # the same conversation, from the store
    assert lineage(two)["steps"]["干活"] == work_session
