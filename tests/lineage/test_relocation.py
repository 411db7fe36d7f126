"""A run follows its folder: moved, it continues; copied, the copy forks; else foreign."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flower.records.lineage import LINEAGE_NAME, Lineage


class Adopter:
    """Stands in for ``Runtime.adopt_sessions``: records what it was asked to copy."""

    def __init__(self, copies: int | None = None, fails: bool = False) -> None:
        self.calls: list[tuple[Path, list[str]]] = []
        self.copies, self.fails = copies, fails

    def __call__(self, old: Path, sessions: list[str]) -> int:
        self.calls.append((old, sessions))
        if self.fails:
            raise RuntimeError("store is read-only")
        return len(sessions) if self.copies is None else self.copies


def started(project: Path) -> Lineage:
    """A project folder with a run in ``project/runs`` that has two steps."""
    project.mkdir(parents=True)
    lineage = Lineage.open(project / "runs", project)
    lineage.remember("确认需求", "sid-clarify")
    lineage.remember("干活", "sid-work")
    lineage.bump()
    return lineage


def disk(project: Path) -> dict:
    return json.loads((project / "runs" / LINEAGE_NAME).read_text(encoding="utf-8"))


def test_a_moved_folder_continues_the_same_run_with_its_sessions_copied(tmp_path: Path) -> None:
    before = started(tmp_path / "proj")
    moved = tmp_path / "proj2"
    shutil.move(tmp_path / "proj", moved)
    adopt = Adopter()
    alive = {"sid-clarify", "sid-work"}

    lineage = Lineage.open(moved / "runs", moved, alive=alive.__contains__, adopt=adopt)

    old = (tmp_path / "proj").resolve()
    assert adopt.calls == [(old, ["sid-clarify", "sid-work"])]
    assert lineage.steps == {"确认需求": "sid-clarify", "干活": "sid-work"}
    assert lineage.run == before.run and lineage.moved_from == old and lineage.woke == 1
    assert "moved here from" in lineage.notice and "2 of 2 sessions re-keyed" in lineage.notice
    assert disk(moved)["workspace"] == str(moved.resolve())  # written for here, at once
    assert disk(moved)["run"] == before.run
    assert not list((moved / "runs").glob("lineage.json.foreign-*"))  # taken over, not set aside

    again = Lineage.open(moved / "runs", moved, alive=alive.__contains__, adopt=adopt)
    assert len(adopt.calls) == 1 and again.notice == ""  # the second wake is an ordinary one


def test_a_copied_folder_forks_and_leaves_the_original_untouched(tmp_path: Path) -> None:
    original = tmp_path / "proj"
    before = started(original)
    untouched = (original / "runs" / LINEAGE_NAME).read_bytes()
    copy = tmp_path / "proj-copy"
    shutil.copytree(original, copy)
    adopt = Adopter()

    lineage = Lineage.open(copy / "runs", copy, adopt=adopt)

    assert adopt.calls == [(original.resolve(), ["sid-clarify", "sid-work"])]
    assert lineage.forked_from == original.resolve() and lineage.moved_from is None
    assert lineage.run and lineage.run != before.run
    assert lineage.steps == {"确认需求": "sid-clarify", "干活": "sid-work"}
    assert "is a copy of" in lineage.notice and "fork" in lineage.notice
    assert disk(copy)["run"] == lineage.run and disk(copy)["workspace"] == str(copy.resolve())
    assert (original / "runs" / LINEAGE_NAME).read_bytes() == untouched
    assert Lineage.open(original / "runs", original, adopt=adopt).notice == ""


def test_a_shared_run_dir_of_a_workspace_that_still_exists_stays_foreign(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    shared = tmp_path / "runs"  # outside both workspaces: it travels with neither
    Lineage.open(shared, first).remember("干活", "sid-a")
    adopt = Adopter()

    lineage = Lineage.open(shared, second, adopt=adopt)

    assert (
        adopt.calls == [] and lineage.steps == {} and "belongs to the workspace" in lineage.notice
    )


def test_a_shared_run_dir_whose_workspace_is_gone_is_taken_over(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    shared = tmp_path / "runs"
    Lineage.open(shared, first).remember("干活", "sid-a")
    first.rmdir()  # moved away: the run dir stayed where it was

    lineage = Lineage.open(shared, second, adopt=Adopter())

    assert lineage.steps == {"干活": "sid-a"} and lineage.moved_from == first.resolve()


@pytest.mark.parametrize(
    ("adopt", "said"),
    [
        (Adopter(copies=0), "0 of 2 sessions re-keyed"),
        (Adopter(fails=True), "could not copy the sessions from"),
    ],
)
def test_sessions_that_could_not_be_copied_start_fresh_and_it_is_said(
    tmp_path: Path, adopt: Adopter, said: str
) -> None:
    started(tmp_path / "proj")
    moved = tmp_path / "proj2"
    shutil.move(tmp_path / "proj", moved)

    lineage = Lineage.open(moved / "runs", moved, alive=lambda sid: False, adopt=adopt)

    assert lineage.steps == {} and said in lineage.notice
    assert "no longer in the session store" in lineage.notice


def test_without_an_adopter_a_moved_run_is_foreign_as_before(tmp_path: Path) -> None:
    started(tmp_path / "proj")
    moved = tmp_path / "proj2"
    shutil.move(tmp_path / "proj", moved)

    lineage = Lineage.open(moved / "runs", moved)

    assert lineage.steps == {} and "belongs to the workspace" in lineage.notice
