"""The run's state beyond its folder: the lineage mirrored into the store on every write,
the run id in the workbench, and the lineage restored from the store when runs/ is
missing, never over an existing file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flower.records.lineage import LINEAGE_NAME, Lineage
from flower.records.runstate import MARKER_NAME, marked_run, mirror_for, restore
from flower.stores.sqlite import SqliteSessionStore


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = SqliteSessionStore(str(tmp_path / "store.db"))
    yield opened
    opened.close()


def test_every_lineage_write_reaches_the_store_and_the_workbench(
    tmp_path: Path, store: Any
) -> None:
    ws, wb = tmp_path / "ws", tmp_path / "ws" / ".flower"
    ws.mkdir()
    lineage = Lineage.open(ws / "runs", ws, mirror=mirror_for(store, wb))
    lineage.bump()
    lineage.remember("干活", "s-1")
    assert marked_run(wb) == lineage.run
    kept = store.load_lineage(lineage.run)
    assert kept == json.loads((ws / "runs" / LINEAGE_NAME).read_text(encoding="utf-8"))
    assert kept["steps"] == {"干活": "s-1"} and kept["woke"] == 1


def test_a_missing_lineage_comes_back_from_the_store(tmp_path: Path, store: Any) -> None:
    doc = {"workspace": "/elsewhere/proj", "run": "run-a", "woke": 2, "steps": {"干活": "s-1"}}
    store.save_lineage("run-a", "m1", doc)
    wb = tmp_path / ".flower"
    wb.mkdir()
    (wb / MARKER_NAME).write_text(json.dumps({"run": "run-a"}))
    run_dir = tmp_path / "runs"
    assert restore(run_dir, wb, store) == "run-a"
    assert json.loads((run_dir / LINEAGE_NAME).read_text(encoding="utf-8")) == doc
    other = json.dumps({"workspace": "/elsewhere/proj", "run": "run-b", "steps": {}})
    (run_dir / LINEAGE_NAME).write_text(other)  # a readable file is never replaced
    assert restore(run_dir, wb, store) == "" and (run_dir / LINEAGE_NAME).read_text() == other
    (run_dir / LINEAGE_NAME).write_text("{}")  # an unreadable one is kept aside, then restored
    assert restore(run_dir, wb, store) == "run-a"
    assert [p.read_text() for p in run_dir.glob(f"{LINEAGE_NAME}.corrupt-*")] == ["{}"]


@pytest.mark.parametrize("marker", [None, "not json", '{"run": 7}', '{"run": "unknown"}'])
def test_nothing_is_restored_without_a_run_the_store_knows(
    tmp_path: Path, store: Any, marker: str | None
) -> None:
    wb = tmp_path / ".flower"
    wb.mkdir()
    if marker is not None:
        (wb / MARKER_NAME).write_text(marker)
    assert restore(tmp_path / "runs", wb, store) == ""
    assert not (tmp_path / "runs" / LINEAGE_NAME).exists()


class Broken:
    def save_lineage(self, *args: Any) -> None:
        raise RuntimeError("store down")

    def load_lineage(self, run: str) -> None:
        raise RuntimeError("store down")


def test_a_broken_store_costs_the_mirror_never_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    lineage = Lineage.open(ws / "runs", ws, mirror=mirror_for(Broken(), ws / ".flower"))
    lineage.remember("干活", "s-1")
    assert lineage.last_error is None and lineage.steps == {"干活": "s-1"}
    assert restore(tmp_path / "other", ws / ".flower", Broken()) == ""
    assert capsys.readouterr().err.count("store down") == 2


def test_a_marker_names_a_run_only_with_a_plausible_id(tmp_path: Path) -> None:
    for text, run in [('{"run": "%s"}' % ("r" * 64), "r" * 64), ('{"run": "%s"}' % ("r" * 65), ""),
                      ('{"run": ""}', ""), ("[1]", "")]:  # fmt: skip
        (tmp_path / MARKER_NAME).write_text(text)
        assert marked_run(tmp_path) == run, text
    assert marked_run(None) == ""


def test_without_a_workbench_only_the_store_keeps_the_lineage(
    tmp_path: Path, store: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror_for(store, None)({"run": "run-a", "workspace": "/p", "steps": {}})
    assert store.load_lineage("run-a") == {"run": "run-a", "workspace": "/p", "steps": {}}
    assert capsys.readouterr().err == ""


def test_an_unwritable_workbench_or_run_dir_is_said_and_costs_nothing_else(
    tmp_path: Path, store: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where a folder should be")
    mirror_for(store, blocked / ".flower")({"run": "run-a", "workspace": "/p", "steps": {}})
    assert "could not write the run id" in capsys.readouterr().err
    assert store.load_lineage("run-a") is not None  # the store still has it
    wb = tmp_path / ".flower"
    wb.mkdir()
    (wb / MARKER_NAME).write_text('{"run": "run-a"}')
    assert restore(blocked / "runs", wb, store) == ""
    assert "could not restore" in capsys.readouterr().err
