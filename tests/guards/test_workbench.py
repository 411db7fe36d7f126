"""Workbench: its defaults, descriptions, the index, the prompt block, and writes that
can never leave it."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import tracemalloc
from dataclasses import fields
from pathlib import Path

import pytest

from flower.records import workbench as workbench_module
from flower.records.workbench import (
    Workbench,
    WorkbenchError,
    atomic_write,
    describe,
    describe_text,
    safe_name,
)
from flower.roles.guard import spill_text


def test_documented_defaults(workspace: Path) -> None:
    wb = Workbench(workspace)
    assert [f.name for f in fields(Workbench)] == [
        "workspace",
        "dirname",
        "max_index_entries",
        "home",
    ]
    assert (wb.dirname, wb.max_index_entries, wb.home) == (".flower", 40, None)
    assert wb.root == workspace / ".flower"
    assert (wb.scripts, wb.artifacts, wb.notes) == (
        wb.root / "scripts",
        wb.root / "artifacts",
        wb.root / "notes",
    )
    assert wb.index == wb.root / "INDEX.md" and wb.spill == wb.root / "spill"
    assert not wb.external


def test_home_outside_the_repository_is_external(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / ".flower-ws"
    wb = Workbench(workspace, home=outside)
    assert wb.root == outside and wb.external
    assert wb.display(wb.scripts) == str(outside / "scripts")
    inside = Workbench(workspace, home=workspace / "bench")
    assert not inside.external and inside.display() == "bench"


def test_display_copes_with_two_spellings_of_one_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "ws").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real)
    wb = Workbench(tmp_path / "alias" / "ws", home=real / "ws" / "bench")
    assert not wb.external
    assert wb.display(wb.artifacts) == "bench/artifacts"


def test_relative_workspace_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert Workbench(Path(".")).root == tmp_path / ".flower"


@pytest.mark.parametrize("dirname", ["", "/abs", "../up", "a/../../b"])
def test_a_dirname_that_leaves_the_workspace_is_refused(workspace: Path, dirname: str) -> None:
    with pytest.raises(WorkbenchError, match="relative folder name"):
        Workbench(workspace, dirname=dirname)


def test_negative_index_size_is_refused(workspace: Path) -> None:
    with pytest.raises(ValueError, match="max_index_entries"):
        Workbench(workspace, max_index_entries=-1)


def test_ensure_makes_the_three_folders_and_spill(workspace: Path) -> None:
    wb = Workbench(workspace)
    assert wb.ensure() == wb.root
    for folder in (wb.scripts, wb.artifacts, wb.notes, wb.spill):
        assert folder.is_dir()


# --- descriptions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# desc: 统计行数\nprint(1)\n", "统计行数"),
        ("#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n# desc: counts\n", "counts"),
        ("// desc: a js helper\nconsole.log(1)\n", "a js helper"),
        ("-- desc: the report query\nselect 1;\n", "the report query"),
        ("# DESC：全角冒号也行\n", "全角冒号也行"),
        ("#desc:no space\n", "no space"),
        ("# first comment\n# desc: the real one\n", "the real one"),
        ("import os\n" * 7 + "# desc: line eight\n", "line eight"),
        ("# just a comment\nx = 1\n", "just a comment"),
        ("#!/bin/sh\n# -*- coding: utf-8 -*-\n# ----\n# builds it\n", "builds it"),
        ('"""Parse the logs.\n\nMore text.\n"""\n', "Parse the logs."),
        ('#!/usr/bin/env python\n"""\nSecond line docstring.\n"""\n', "Second line docstring."),
        ("r'''raw docstring'''\n", "raw docstring"),
        ("# 决定:用 SQLite\n\n理由……\n", "决定:用 SQLite"),
        ("## 标题\n正文\n", "标题"),
        ("print(1)\n", ""),
        ("", ""),
        ("\ufeff# desc: 带 BOM 的脚本\n", "带 BOM 的脚本"),  # Windows editors write a BOM
        ("# desc:\n# counts the errors\n", "counts the errors"),  # an empty desc is no desc
        ("# desc:   \n", ""),
    ],
)
def test_describe_text(text: str, expected: str) -> None:
    assert describe_text(text) == expected


def test_desc_must_be_within_the_first_eight_lines() -> None:
    text = "x = 1\n" * 8 + "# desc: too late\n"
    assert describe_text(text) == ""
    assert describe_text("# note\n" + "x = 1\n" * 7 + "# desc: too late\n") == "note"


def test_desc_is_cut_to_100_characters() -> None:
    long = "长" * 150
    assert describe_text(f"# desc: {long}\n") == "长" * 99 + "…"
    assert len(describe_text(f"# {long}\n")) == 100


def test_describe_reads_only_the_head_of_a_file(workspace: Path) -> None:
    path = workspace / "big.py"
    path.write_text("# desc: big one\n" + "x = 1\n" * 100_000)
    assert describe(path) == "big one"
    assert describe(workspace / "missing.py") == ""
    (workspace / "bin.dat").write_bytes(b"# desc: caf\xe9 \xff\n\x00\x01")
    assert describe(workspace / "bin.dat") == "caf\ufffd \ufffd"
    (workspace / "bom.ps1").write_bytes("\ufeff# desc: PowerShell 脚本\n".encode())
    assert describe(workspace / "bom.ps1") == "PowerShell 脚本"


def test_describe_reads_a_bounded_head_of_a_file_without_newlines(workspace: Path) -> None:
    """A big artifact with no newline (a blob, minified JS) must not be read whole on every
    index refresh: ``readline`` alone would read all of it, eight times over."""
    path = workspace / "blob.bin"
    path.write_bytes(b"\x00" * 20_000_000)
    tracemalloc.start()
    try:
        assert describe(path) == ""
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak
    long_line = workspace / "min.js"
    long_line.write_text("// desc: minified bundle\n" + "var a=1;" * 500_000)
    assert describe(long_line) == "minified bundle"


# --- the index ---------------------------------------------------------------------------


def _touch(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_the_index_lists_the_three_folders_with_descriptions(workspace: Path) -> None:
    wb = Workbench(workspace)
    _touch(wb.scripts / "count.py", "# desc: 统计错误\n")
    _touch(wb.artifacts / "run.log", "x" * 3000)
    _touch(wb.notes / "决定-存储.md", "# 用 SQLite,不用文件\n")
    _touch(wb.scripts / "lib" / "util.sh", "#!/bin/sh\n# desc: nested\n")
    text = wb.refresh()
    assert wb.index.read_text() == text
    assert "## scripts/" in text and "## artifacts/" in text and "## notes/" in text
    assert "- scripts/count.py — 统计错误" in text
    assert "- scripts/lib/util.sh — nested" in text
    assert "- artifacts/run.log — 2.9K" in text
    assert "- notes/决定-存储.md — 用 SQLite,不用文件" in text
    assert text.index("## scripts/") < text.index("## artifacts/") < text.index("## notes/")


def test_the_index_skips_spill_archive_hidden_temp_and_links(
    workspace: Path, tmp_path: Path
) -> None:
    wb = Workbench(workspace)
    _touch(wb.spill / "0123456789abcdef.txt", "spilled")
    _touch(wb.notes / "archive" / "交接" / "old.md", "# old handoff")
    _touch(wb.notes / ".hidden.md", "# hidden")
    _touch(wb.notes / "half.md.tmp", "# half")
    _touch(wb.notes / "需求.md.lock", "")  # a file's lock (filelock), not a document
    _touch(wb.root / "loose.txt", "not in a folder")
    secret = _touch(tmp_path / "secret.txt", "# desc: outside secret\n")
    wb.scripts.mkdir(parents=True, exist_ok=True)
    (wb.scripts / "link.py").symlink_to(secret)
    (wb.scripts / "linkdir").symlink_to(tmp_path)
    text = wb.render_index()
    for absent in ("spill", "archive", "hidden", "half", "loose", "secret", "link", ".lock"):
        assert absent not in text, absent
    assert "(还是空的)" in text


def test_the_index_keeps_the_newest_max_entries(workspace: Path) -> None:
    wb = Workbench(workspace, max_index_entries=3)
    now = time.time()
    for i in range(5):
        _touch(wb.notes / f"n{i}.md", f"# note {i}\n", mtime=now - 100 + i)
    text = wb.render_index()
    assert [f"n{i}.md" in text for i in range(5)] == [False, False, True, True, True]
    assert "(另有 2 个较旧的文件没有列出)" in text
    assert len(Workbench(workspace).entries()) == 5


def test_an_index_of_zero_entries_only_counts(workspace: Path) -> None:
    wb = Workbench(workspace, max_index_entries=0)
    _touch(wb.notes / "a.md", "# a\n")
    text = wb.render_index()
    assert "a.md" not in text and "(另有 1 个较旧的文件没有列出)" in text
    assert "(还是空的)" not in text, "a workbench with a file in it is not empty"


def test_only_the_listed_files_are_opened_for_a_description(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every Write into the workbench refreshes the index: with thousands of artifacts,
    reading each one's head for a line that is not shown would stall the session."""
    wb = Workbench(workspace, max_index_entries=3)
    now = time.time()
    for i in range(10):
        _touch(wb.artifacts / f"a{i}.log", f"# desc: log {i}\n", mtime=now - 100 + i)
    opened: list[str] = []
    real = workbench_module.describe

    def counting(path: Path) -> str:
        opened.append(path.name)
        return real(path)

    monkeypatch.setattr(workbench_module, "describe", counting)
    text = wb.render_index()
    assert sorted(opened) == ["a7.log", "a8.log", "a9.log"]
    assert "- artifacts/a9.log — log 9" in text and "(另有 7 个较旧的文件没有列出)" in text


def test_refresh_does_not_rewrite_an_unchanged_index(workspace: Path) -> None:
    wb = Workbench(workspace)
    wb.refresh()
    os.utime(wb.index, (1, 1))
    wb.refresh()
    assert wb.index.stat().st_mtime == 1
    _touch(wb.notes / "new.md", "# new\n")
    wb.refresh()
    assert wb.index.stat().st_mtime > 1 and "new.md" in wb.index.read_text()


# --- the prompt block --------------------------------------------------------------------


def test_prompt_block_has_the_three_rules_and_the_index(workspace: Path) -> None:
    wb = Workbench(workspace)
    _touch(wb.scripts / "x.py", "# desc: 做 x\n")
    block = wb.prompt_block()
    assert ".flower/scripts/" in block and "# desc:" in block
    assert ".flower/artifacts/" in block and "2000" in block and "路径和结论" in block
    assert ".flower/notes/" in block and "一个决定一个文件" in block
    assert "- scripts/x.py — 做 x" in block
    assert "绝对路径" not in block
    assert wb.index.is_file()


def test_external_prompt_block_says_to_use_absolute_paths(workspace: Path, tmp_path: Path) -> None:
    wb = Workbench(workspace, home=tmp_path / "outside")
    block = wb.prompt_block()
    assert "绝对路径" in block
    assert f"{tmp_path / 'outside' / 'artifacts'}/" in block


# --- writes stay inside ------------------------------------------------------------------


@pytest.mark.parametrize(
    "parts",
    [("..", "x"), ("notes", "../../x"), ("/etc/passwd",), ("notes", "/tmp/x"), ("a/../../b",)],
)
def test_place_refuses_names_that_leave_the_workbench(
    workspace: Path, parts: tuple[str, ...]
) -> None:
    with pytest.raises(WorkbenchError):
        Workbench(workspace).place(*parts)


def test_place_refuses_a_symlink_that_leads_out(workspace: Path, tmp_path: Path) -> None:
    wb = Workbench(workspace)
    wb.ensure()
    outside = tmp_path / "outside"
    outside.mkdir()
    (wb.notes / "escape").symlink_to(outside)
    with pytest.raises(WorkbenchError, match="symlink"):
        wb.write("x", "notes", "escape", "f.md")
    assert list(outside.iterdir()) == []
    shutil.rmtree(wb.root / "spill")
    (wb.root / "spill").symlink_to(outside)
    with pytest.raises(WorkbenchError):
        wb.place("spill", "0123456789abcdef.txt")


def test_a_root_replaced_by_a_link_out_of_the_workspace_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (workspace / ".flower").symlink_to(outside)
    wb = Workbench(workspace)
    with pytest.raises(WorkbenchError, match="outside the workspace"):
        wb.refresh()
    assert list(outside.iterdir()) == []
    chosen = Workbench(workspace, home=workspace / ".flower")  # home= is a choice
    chosen.refresh()
    assert (outside / "INDEX.md").is_file()


def test_a_link_that_stays_inside_is_refused_too(workspace: Path) -> None:
    """A link is refused wherever it leads: even inside, the write would land where an
    agent pointed it, not where flower meant it to go."""
    wb = Workbench(workspace)
    wb.ensure()
    (wb.notes / "to-artifacts").symlink_to(wb.artifacts)
    with pytest.raises(WorkbenchError, match="symlink"):
        wb.write("ok", "notes", "to-artifacts", "f.md")
    assert list(wb.artifacts.iterdir()) == []


def test_write_is_atomic_and_replaces_a_planted_link(workspace: Path, tmp_path: Path) -> None:
    wb = Workbench(workspace)
    wb.ensure()
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (wb.notes / "交接-干活.md").symlink_to(victim)
    wb.write("handoff", "notes", safe_name("交接-干活") + ".md")
    assert victim.read_text() == "untouched"
    assert (wb.notes / "交接-干活.md").read_text() == "handoff"
    assert not (wb.notes / "交接-干活.md").is_symlink()
    assert [p.name for p in wb.notes.iterdir()] == ["交接-干活.md"]


def test_a_planted_index_link_is_replaced_not_followed(workspace: Path, tmp_path: Path) -> None:
    wb = Workbench(workspace)
    wb.ensure()
    victim = tmp_path / "victim.md"
    victim.write_text("untouched")
    wb.index.symlink_to(victim)
    wb.refresh()
    assert victim.read_text() == "untouched" and not wb.index.is_symlink()


def test_a_failed_write_leaves_no_temp_file_and_the_old_text(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = workspace / "f.txt"
    target.write_text("old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in workspace.iterdir()] == ["f.txt"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("干活", "干活"),
        ("干活#round2", "干活#round2"),
        ("../../etc/passwd", "_.._etc_passwd"),
        ("/abs/path", "_abs_path"),
        ("a\\b:c", "a_b_c"),
        ("..", "untitled"),
        ("", "untitled"),
        ("x" * 150, "x" * 150),
    ],
)
def test_safe_name(text: str, expected: str) -> None:
    name = safe_name(text)
    assert name == expected
    assert "/" not in name and not name.startswith(".")


@pytest.mark.parametrize("text", ["x" * 300, "干活" * 60, "步骤" * 26 + "x"])
def test_long_names_fit_the_file_system_and_stay_distinct(text: str, tmp_path: Path) -> None:
    name = safe_name(text)
    assert len(name.encode()) <= 150
    assert name != safe_name(text + "又一个") and name == safe_name(text)
    (tmp_path / f"交接-{name}-20261129-223000.md").write_text("fits")  # no ENAMETOOLONG


def test_spill_folders_are_kept_out_of_git(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    wb = Workbench(workspace)
    wb.ensure()
    spilled = spill_text(wb, "x" * 5000)
    (wb.scripts / "keep.py").write_text("# desc: kept\n")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=workspace, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert spilled.is_file() and spilled.name not in status
    assert ".flower/scripts/keep.py" in status  # only spilled output is ignored


def test_atomic_write_keeps_line_endings_byte_for_byte(tmp_path: Path) -> None:
    atomic_write(tmp_path / "f.txt", "a\r\nb\rc\n")
    assert (tmp_path / "f.txt").read_bytes() == b"a\r\nb\rc\n"
