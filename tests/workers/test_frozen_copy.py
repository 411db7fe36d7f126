"""Frozen documents against their copy in the store, without a model: keep, check, amend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from flower.records.frozen_copy import check, keep
from flower.records.lineage import Lineage
from flower.runtime.runner import Runtime
from flower.workflow import starter_flow
from flower.workflow.brief import Brief

from ..workflow.test_clarify_and_starter import BRIEF


def opened(make_runtime: Callable[..., Runtime], workspace: Path, tmp_path: Path) -> Runtime:
    """A Runtime whose run has a lasting id (the lineage's), as a workflow's has."""
    Lineage.open(tmp_path / "runs", workspace).bump()
    return make_runtime()


def test_a_changed_or_deleted_document_is_put_back_and_recorded(
    make_runtime: Callable[..., Runtime], workspace: Path, tmp_path: Path
) -> None:
    rt = opened(make_runtime, workspace, tmp_path)
    path = Brief.parse(BRIEF).write(workspace / ".flower" / "notes" / "需求.md")
    frozen = path.read_text(encoding="utf-8")
    keep(rt, path)
    assert check(rt, path) == ""  # as frozen: nothing to say
    path.write_text(frozen + "\n- forged\n", encoding="utf-8")
    seen: list = []
    assert "改过" in check(rt, path, step="确认需求", on_event=seen.append)
    assert path.read_text(encoding="utf-8") == frozen
    assert [e.kind for e in seen] == ["restored"] and seen[0].payload["what"] == "changed"
    path.unlink()
    assert "删掉" in check(rt, path)
    assert path.read_text(encoding="utf-8") == frozen
    rows = [r for r in rt.store.rulings() if r["kind"] == "restored"]  # type: ignore[attr-defined]
    assert [(r["state"], r["step"]) for r in rows] == [("需求.md", "确认需求"), ("需求.md", "")]


def test_a_wake_remark_lands_on_the_frozen_brief_never_on_a_forged_one(
    make_runtime: Callable[..., Runtime], workspace: Path, tmp_path: Path
) -> None:
    rt = opened(make_runtime, workspace, tmp_path)
    notes = workspace / ".flower" / "notes"
    path = Brief.parse(BRIEF).write(notes / "需求.md")
    keep(rt, path)
    path.write_text(path.read_text(encoding="utf-8") + "\nMARK-FORGED\n", encoding="utf-8")
    flow = starter_flow("顺便支持高亮", workspace=workspace, run_dir=tmp_path / "runs")
    assert flow.start is not None and flow.channel is not None
    flow.channel.on_amended = lambda p: keep(rt, p)  # as Workflow.run wires it
    flow.start({"_runtime": rt})
    text = path.read_text(encoding="utf-8")
    assert "MARK-FORGED" not in text and "顺便支持高亮" in text
    assert check(rt, path) == ""  # the amended brief is the frozen one now


def test_a_document_frozen_before_copies_were_kept_is_trusted_once(
    make_runtime: Callable[..., Runtime], workspace: Path, tmp_path: Path
) -> None:
    rt = opened(make_runtime, workspace, tmp_path)
    path = Brief.parse(BRIEF).write(workspace / ".flower" / "notes" / "需求.md")
    assert check(rt, path) == ""  # nothing kept: taken as it is, and kept from now on
    path.write_text("changed\n", encoding="utf-8")
    assert check(rt, path) != ""
