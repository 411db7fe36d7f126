"""No write of flower's goes through a symlinked folder of the workbench.

An agent works in the workspace and can replace ``.flower/spill`` (or ``notes/``,
``scripts/``, ``artifacts/``) with a link; measured before this fix: every session start
then wrote a ``.gitignore`` wherever the spill link led. Now a linked folder is refused
(``WorkbenchError`` / ``LinkedWrite``) or skipped with one line on stderr where failing
would lose the step, whichever folder, and wherever the link leads (even inside the
workspace). The real-CLI tests at the end run a whole session per folder kind.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from flower.human.channel import HumanChannel
from flower.records.handoff import Handoff, save
from flower.records.runstate import mirror_for
from flower.records.sections import save_text
from flower.records.workbench import (
    FOLDERS,
    SPILL_DIRNAME,
    LinkedWrite,
    Workbench,
    WorkbenchError,
    atomic_write,
    check_write,
    keep_out_of_git,
)
from flower.roles.guard import spill_text

pytestmark = pytest.mark.anyio

KINDS = (*FOLDERS, SPILL_DIRNAME)


def digest(root: Path) -> str:
    """Every name, link target and byte under ``root``: equal digests, nothing written."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            h.update(str(path.relative_to(root)).encode())
            if path.is_symlink():
                h.update(os.readlink(path).encode())
            elif path.is_file():
                h.update(path.read_bytes())
    return h.hexdigest()


def linked(workspace: Path, kind: str, target: Path) -> Workbench:
    """A workbench whose ``kind`` folder is a link to ``target`` (made, with one file)."""
    wb = Workbench(workspace)
    wb.root.mkdir(parents=True, exist_ok=True)
    target.mkdir(parents=True, exist_ok=True)
    (target / "mine.txt").write_text("the user's own file\n")
    (wb.root / kind).symlink_to(target)
    return wb


@pytest.mark.parametrize("kind", KINDS)
def test_a_session_start_writes_nothing_through_a_linked_folder(
    workspace: Path, tmp_path: Path, kind: str, capsys: Any
) -> None:
    outside = tmp_path / "outside"
    wb = linked(workspace, kind, outside)
    before = digest(outside)

    block = wb.prompt_block()  # what every session start does
    wb.refresh()  # and every Write into the workbench

    assert digest(outside) == before
    assert "工作台" in block and wb.index.is_file()
    err = capsys.readouterr().err
    assert err.count(f"{wb.root / kind} is a symlink") == 1, err
    for other in KINDS:
        if other != kind:
            assert (wb.root / other).is_dir() and not (wb.root / other).is_symlink()


def test_a_link_to_another_folder_of_the_workspace_is_refused_too(workspace: Path) -> None:
    inside = workspace / "src"
    wb = linked(workspace, SPILL_DIRNAME, inside)
    before = digest(inside)
    wb.ensure()
    with pytest.raises(WorkbenchError, match="symlink"):
        spill_text(wb, "x" * 5000)
    assert digest(inside) == before
    assert not (inside / ".gitignore").exists()


def test_a_spill_already_behind_a_link_is_not_pointed_at(workspace: Path, tmp_path: Path) -> None:
    """The shortcut for a text spilled before must not name a file behind a link."""
    outside = tmp_path / "outside"
    wb = linked(workspace, SPILL_DIRNAME, outside)
    text = "y" * 5000
    name = hashlib.sha256(text.encode()).hexdigest()[:16] + ".txt"
    (outside / name).write_text(text)
    with pytest.raises(WorkbenchError):
        spill_text(wb, text)


def test_keep_out_of_git_refuses_a_link_and_replaces_a_planted_gitignore(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "spill").symlink_to(outside)
    with pytest.raises(WorkbenchError, match="symlink"):
        keep_out_of_git(workspace / "spill")
    assert list(outside.iterdir()) == []
    real = workspace / "real"
    real.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (real / ".gitignore").symlink_to(victim)
    keep_out_of_git(real)
    assert victim.read_text() == "untouched"
    assert not (real / ".gitignore").is_symlink() and "*" in (real / ".gitignore").read_text()


def test_writers_that_name_workbench_paths_themselves_are_refused(
    workspace: Path, tmp_path: Path
) -> None:
    """The brief, the goal, the ledger, the Q&A log and the handoff build
    ``workbench.notes / name`` without ``place``: ``atomic_write`` checks for them."""
    outside = tmp_path / "outside"
    wb = linked(workspace, "notes", outside)
    before = digest(outside)
    with pytest.raises(LinkedWrite, match="symlink") as refused:
        save_text(wb.notes / "需求.md", "# brief\n")
    assert isinstance(refused.value, OSError), "writers that survive an OSError survive this"
    with pytest.raises(OSError):
        atomic_write(wb.notes / "判定记录.md", "# ledger\n")
    with pytest.raises(WorkbenchError):
        save(Handoff(step="干活"), wb)
    channel = HumanChannel(log_path=wb.notes / "问答记录.md", amend_path=wb.notes / "需求.md")
    channel._log("问:x\n")
    assert channel.amend("补充一句") is None
    assert len(channel.ui_errors) == 2 and "symlink" in channel.ui_errors[0]
    assert digest(outside) == before


def test_the_run_id_is_not_written_into_a_root_linked_out_of_the_workspace(
    workspace: Path, tmp_path: Path, capsys: Any
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (workspace / ".flower").symlink_to(outside)
    wb = Workbench(workspace)
    mirror_for(None, wb.root)({"run": "r1"})
    assert list(outside.iterdir()) == []
    assert "could not write the run id" in capsys.readouterr().err


def test_paths_outside_every_workbench_are_the_users_choice(
    workspace: Path, tmp_path: Path
) -> None:
    """The run folder may be a link on purpose (a bigger disk): only workbenches are walled."""
    Workbench(workspace)
    disk = tmp_path / "disk"
    disk.mkdir()
    (workspace / "runs").symlink_to(disk)
    check_write(workspace / "runs" / "manifest.json")
    atomic_write(workspace / "runs" / "manifest.json", "{}")
    assert (disk / "manifest.json").read_text() == "{}"


async def test_the_trim_spill_refuses_any_link_on_its_way(tmp_path: Path, workspace: Path) -> None:
    from flower.stores.trim import TrimmingSessionStore, TrimPolicy

    from ..stores.builder import Transcript, results

    inside = workspace / "src"
    inside.mkdir()
    (workspace / ".flower").mkdir()
    (workspace / ".flower" / "spill").symlink_to(inside)
    t = Transcript()
    t.prompt("build")
    big = t.call("make build", "y" * 5000)
    store = TrimmingSessionStore(tmp_path / "s.db", workspace, policy=TrimPolicy(keep_recent=0))
    key = {"project_key": "p", "session_id": "s"}
    try:
        await store.append(key, t.lines)
        out = await store.load(key)
        assert results(out or [])[big] == "y" * 5000
        assert store.last_report == {"spill_failed": 1}
        assert list(inside.iterdir()) == []
        (workspace / ".flower" / "spill").unlink()
        (workspace / ".flower").rmdir()
        (workspace / ".flower").symlink_to(inside)  # the root a link too: refused as well
        await store.load(key)
        assert store.last_report == {"spill_failed": 1} and list(inside.iterdir()) == []
    finally:
        store.close()


# --- the real CLI: a session start, a spill, an index refresh and a trim per folder kind ---

BIG = "".join(f"row {i:05d} of a long build log\n" for i in range(400))


@pytest.mark.e2e
@pytest.mark.parametrize("kind", KINDS)
async def test_a_real_session_writes_nothing_through_a_linked_folder(
    scripted_model: Any,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    kind: str,
    capsys: Any,
) -> None:
    from claude_agent_sdk import project_key_for_directory

    from flower.roles.agent import AgentSpec, build_options
    from flower.stores.prune import PruningSessionStore
    from flower.stores.trim import TrimPolicy
    from flower.testing import bash, conversation, text, tool

    from .conftest import run_query

    outside = tmp_path / "outside"
    wb = linked(workspace, kind, outside)
    (workspace / "big.txt").write_text(BIG)
    before = digest(outside)
    real = "artifacts" if kind == "notes" else "notes"
    scripted_model.play(
        [
            conversation(
                "main",
                bash("cat big.txt"),
                tool("Write", {"file_path": str(wb.root / real / "n.md"), "content": "# n\n"}),
                text("done"),
            )
        ]
    )
    store = PruningSessionStore(
        tmp_path / "runs" / "sessions.db",
        workspace=workspace,
        policy=TrimPolicy(keep_recent=0, min_chars=500),
    )
    spec = AgentSpec("工人", "work", allowed_tools=["Bash", "Read", "Write"])
    try:
        options = build_options(spec, cwd=workspace, workbench=wb, session_store=store)
        result = await run_query("build", options)
        key = {"project_key": project_key_for_directory(str(workspace))}
        sessions = await store.list_sessions(key["project_key"])
        await store.load({**key, "session_id": sessions[0]["session_id"]})  # the trim spill
        report = dict(store.last_report)
    finally:
        store.close()

    assert result.subtype == "success"
    assert digest(outside) == before
    seen = scripted_model.last("main").tool_results()["toolu_main_0_0"]
    err = capsys.readouterr().err
    assert f"{wb.root / kind} is a symlink" in err
    if kind == SPILL_DIRNAME:
        assert "全文已存到" not in seen and seen.count("row ") == 400, "kept whole instead"
        assert "could not spill" in err and report.get("spill_failed", 0) >= 1
    else:
        assert "全文已存到" in seen and str(wb.spill) in seen
        assert (wb.spill / ".gitignore").is_file() and report.get("trimmed", 0) >= 1
        assert f"{real}/n.md" in wb.index.read_text()
    assert json.loads(json.dumps(report)) == report
