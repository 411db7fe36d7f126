"""SpillMemo: an earlier load's spill is named again only while its file is in place,
and a settled spill folder's time stands for its files (one stat, not one per file)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import flower.stores.spill_memo as memo
from flower.stores.spill_folder import SpillFolder
from flower.stores.spill_memo import SETTLED_NS, SpillMemo


@pytest.fixture
def folder(tmp_path: Path) -> SpillFolder:
    return SpillFolder(tmp_path, ".flower/spill")


@pytest.fixture
def looked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the memo looked at, one by one."""
    seen: list[str] = []
    plain = memo._regular
    monkeypatch.setattr(memo, "_regular", lambda p: seen.append(p) or plain(p))
    return seen


def spilled(folder: SpillFolder, memo_: SpillMemo, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        path = folder.write(f"call{i}", f"body {i}\n" * 50)
        memo_.remember(("m", "", i, i, True), f"[placeholder {i}]", path)
        paths.append(path)
    return paths


def key(i: int) -> memo.MemoKey:
    return ("m", "", i, i, True)


def load(memo_: SpillMemo, folder: SpillFolder, n: int) -> list[tuple[str, str] | None]:
    folder.forget()
    memo_.start()
    return [memo_.recall(key(i)) for i in range(n)]


def test_a_fresh_folder_is_looked_at_file_by_file(folder: SpillFolder, looked: list[str]) -> None:
    """Right after the writes the folder's time cannot tell a change from none."""
    m = SpillMemo(folder)
    paths = spilled(folder, m, 3)
    assert load(m, folder, 3) == [(f"[placeholder {i}]", str(p)) for i, p in enumerate(paths)]
    assert load(m, folder, 3)[1] == ("[placeholder 1]", str(paths[1]))
    assert looked == [str(p) for p in paths] * 2
    assert m.recall(key(7)) is None  # never spilled


def test_a_gone_file_is_forgotten(folder: SpillFolder, looked: list[str]) -> None:
    m = SpillMemo(folder)
    paths = spilled(folder, m, 3)
    paths[1].unlink()
    assert [hit is not None for hit in load(m, folder, 3)] == [True, False, True]
    looked.clear()
    paths[1].write_text("again", encoding="utf-8")  # even if it comes back
    assert load(m, folder, 3)[1] is None and str(paths[1]) not in looked


def test_a_settled_folder_stands_for_its_files(folder: SpillFolder, looked: list[str]) -> None:
    m = SpillMemo(folder)
    paths = spilled(folder, m, 4)
    since = os.stat(folder.check()).st_mtime_ns
    m.clock = lambda: since + SETTLED_NS  # exactly old enough
    first = load(m, folder, 4)
    assert sorted(looked) == sorted(map(str, paths))  # trusting a new time: each once
    looked.clear()
    assert load(m, folder, 4) == first and looked == []
    assert load(m, folder, 4) == first and looked == []


def test_a_moved_time_is_checked_again(folder: SpillFolder, looked: list[str]) -> None:
    m = SpillMemo(folder)
    paths = spilled(folder, m, 4)
    m.clock = lambda: time.time_ns() + 2 * SETTLED_NS
    load(m, folder, 4)
    time.sleep(0.05)  # past the file system's next tick
    paths[3].unlink()
    looked.clear()
    hits = load(m, folder, 4)
    assert [hit is not None for hit in hits] == [True, True, True, False]
    assert sorted(looked) == sorted(map(str, paths))


def test_a_recent_time_is_not_trusted(folder: SpillFolder, looked: list[str]) -> None:
    """A time younger than SETTLED_NS, even one verified before, stands for nothing new."""
    m = SpillMemo(folder)
    paths = spilled(folder, m, 2)
    m.clock = lambda: os.stat(folder.check()).st_mtime_ns + SETTLED_NS - 1
    load(m, folder, 2)
    load(m, folder, 2)
    assert looked == [str(p) for p in paths] * 2


def test_a_change_while_verifying_is_not_trusted(
    folder: SpillFolder, looked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another file appearing while the memo looked at each: the time it read is stale."""
    m = SpillMemo(folder)
    paths = spilled(folder, m, 2)
    m.clock = lambda: time.time_ns() + 2 * SETTLED_NS
    counting = memo._regular

    def and_a_change(path: str) -> bool:
        if path == str(paths[0]) and not (Path(folder.check()) / "late.txt").exists():
            time.sleep(0.02)
            (Path(folder.check()) / "late.txt").write_text("x", encoding="utf-8")
        return counting(path)

    monkeypatch.setattr(memo, "_regular", and_a_change)
    load(m, folder, 2)
    # the verification looked at both, and each recall once more: not trusted
    assert sorted(looked) == sorted(map(str, paths * 2))


def test_the_memo_is_bounded(folder: SpillFolder) -> None:
    m = SpillMemo(folder, limit=2)
    spilled(folder, m, 2)
    assert [hit is not None for hit in load(m, folder, 2)] == [True, True]
    path = folder.write("third", "three\n" * 50)
    m.remember(key(2), "[placeholder 2]", path)  # full: forgets the others first
    assert [hit is not None for hit in load(m, folder, 3)] == [False, False, True]


def test_clear_forgets_everything(folder: SpillFolder) -> None:
    m = SpillMemo(folder)
    spilled(folder, m, 2)
    m.clear()
    assert load(m, folder, 2) == [None, None]


def test_a_folder_gone_under_the_memo_stands_for_nothing(
    folder: SpillFolder, tmp_path: Path
) -> None:
    m = SpillMemo(folder)
    spilled(folder, m, 1)
    m.clock = lambda: time.time_ns() + 2 * SETTLED_NS
    assert m._settled(str(tmp_path / "gone")) is False
