"""TrimmingSessionStore: expiry of stale one-off results and spilling of large old ones,
through a real store, with the seed's red lines checked."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import flower.roles.ephemeral
from flower.kernel.policies import glance_classifier
from flower.stores import trim
from flower.stores.spill_memo import SETTLED_NS
from flower.stores.trim import EphemeralPolicy, TrimmingSessionStore, TrimPolicy

from .builder import Transcript, calls, results

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}
SPILLED = re.compile(r"原文完整保存在 (\S+) ")


async def loaded(
    tmp_path: Path, workspace: Path, t: Transcript, **policies: object
) -> tuple[TrimmingSessionStore, list[dict]]:
    store = TrimmingSessionStore(tmp_path / "s.db", workspace, **policies)  # type: ignore[arg-type]
    await store.append(KEY, copy.deepcopy(t.lines))
    out = await store.load(KEY)
    assert out is not None
    return store, out


def test_expiry_uses_the_guards_own_classifier() -> None:
    """The store never imports the glance rules: the guard registers its classifier in
    the kernel, and a policy naming none uses it."""
    assert "is_ephemeral" not in trim.__all__
    assert glance_classifier(EphemeralPolicy()) is flower.roles.ephemeral.is_ephemeral
    mine = EphemeralPolicy(is_glance=lambda cmd: cmd == "date")
    assert glance_classifier(mine) is mine.is_glance


def test_a_store_imported_on_its_own_expires_glances_too(tmp_path: Path) -> None:
    """A process that builds the store straight from ``flower.stores.prune`` and never
    loaded the guard (a script, a benchmark) still expires ``git status``: the kernel
    loads flower's classifier by name when none was registered."""
    script = """
import asyncio, sys
from flower.stores.prune import PruningSessionStore
from flower.kernel.policies import glance_classifier
assert "flower.roles.ephemeral" not in sys.modules
print(glance_classifier()("git status"), glance_classifier()("rm -rf x"))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]


async def test_stale_one_off_results_expire_with_the_template(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("keep an eye on the repo")
    statuses = []
    for n in range(9):
        statuses.append(t.call("git status", f"On branch main, change {n}"))
        t.say(f"noted {n}")
    read = t.call("/w/a.py", "print('a')", tool="Read")
    build = t.call("make build", "built")

    store, out = await loaded(tmp_path, workspace, t)

    got = results(out)
    assert store.last_report == {"expired": 3}
    for n, call_id in enumerate(statuses[:3]):
        age = 2 * (9 - n) - 1 + 2  # replies after it: its own "noted", the later pairs, the tail
        assert (
            got[call_id]
            == f"[git status 的结果已过期(第 {age} 轮前),当前状态可能已变。需要请重新执行]"
        )
    assert [got[i] for i in statuses[3:]] == [f"On branch main, change {n}" for n in range(3, 9)]
    assert got[read] == "print('a')" and got[build] == "built"  # Read and non-ephemeral stay
    assert calls(out) == calls(t.lines)  # every call and every result block is still there


async def test_a_long_ephemeral_result_is_left_to_trimming_not_thrown_away(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("look")
    diff = t.call("git diff", "+" * 5000)
    for _ in range(3):
        t.call("git status", "clean")

    store, out = await loaded(
        tmp_path,
        workspace,
        t,
        policy=TrimPolicy(keep_recent=1),
        ephemeral=EphemeralPolicy(keep_recent=1),
    )

    assert store.last_report == {
        "expired": 2,
        "trimmed": 1,
        "trimmed_chars": store.last_report["trimmed_chars"],
    }
    path = Path(SPILLED.search(results(out)[diff]).group(1))
    assert path.read_text() == "+" * 5000


async def test_large_old_results_spill_byte_for_byte_and_leave_a_pointer(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("build")
    body = "第一行 ünïcode\r\nline two\n" + "".join(f"row {n}\n" for n in range(3000))
    big = t.call("make build", body)
    small = t.call("make lint", "ok " * 100)
    recent = [t.call("make test", "z" * 3000) for _ in range(2)]

    store, out = await loaded(tmp_path, workspace, t, policy=TrimPolicy(keep_recent=2))

    got = results(out)
    pointer = got[big]
    path = Path(SPILLED.search(pointer).group(1))
    assert path.parent == (workspace / ".flower" / "spill").resolve()
    assert path.read_bytes() == body.encode("utf-8")
    assert f"({len(body)} 字符)" in pointer and "第一行 ünïcode" in pointer and len(pointer) < 400
    assert got[small] == "ok " * 100 and [got[i] for i in recent] == ["z" * 3000] * 2
    assert store.last_report["trimmed"] == 1
    assert store.last_report["trimmed_chars"] == len(body) - len(pointer)

    files = sorted(p.name for p in path.parent.iterdir())
    await store.load(KEY)  # reloading writes the same file again, nothing new
    assert sorted(p.name for p in path.parent.iterdir()) == files


@pytest.mark.parametrize("settled", [False, True], ids=["folder-just-written", "settled"])
async def test_a_link_planted_as_a_spill_file_is_replaced_not_trusted(
    tmp_path: Path, workspace: Path, settled: bool
) -> None:
    """The agent works in the workspace and could plant a link where a spill file goes:
    the next load writes the original there again instead of pointing at the link. Also
    when the spill folder had settled and loads trusted its time instead of each file
    (``stores/spill_memo.py``): the link changed that time."""
    t = Transcript()
    t.prompt("build")
    body = "".join(f"row {n}\n" for n in range(3000))
    big = t.call("make build", body)
    t.call("make test", "z" * 3000)
    store, out = await loaded(tmp_path, workspace, t, policy=TrimPolicy(keep_recent=1))
    path = Path(SPILLED.search(results(out)[big]).group(1))
    if settled:  # the loads after the folder's last change, seconds later
        store._memo.clock = lambda: time.time_ns() + 3 * SETTLED_NS
        await store.load(KEY)
        time.sleep(0.05)  # the agent's link comes later than the file system's next tick
    elsewhere = tmp_path / "planted.txt"
    elsewhere.write_text("not what the tool printed", encoding="utf-8")
    path.unlink()
    path.symlink_to(elsewhere)

    again = await store.load(KEY)

    assert Path(SPILLED.search(results(again or [])[big]).group(1)) == path
    assert not path.is_symlink() and path.read_text(encoding="utf-8") == body
    assert elsewhere.read_text(encoding="utf-8") == "not what the tool printed"


async def test_a_settled_spill_folder_stands_for_its_files(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each load names hundreds of spill files again: once the folder's time is old
    enough to stand for them, a load looks at the folder, not at each file. A file that
    went meanwhile is written again (removing it changed the folder's time)."""
    import flower.stores.spill_memo as memo

    t = Transcript()
    t.prompt("build")
    bigs = [t.call(f"make part{n}", f"part {n}\n" * 800) for n in range(4)]
    t.call("make test", "z" * 3000)
    store, out = await loaded(tmp_path, workspace, t, policy=TrimPolicy(keep_recent=1))
    paths = [Path(SPILLED.search(results(out)[i]).group(1)) for i in bigs]
    store._memo.clock = lambda: time.time_ns() + 3 * SETTLED_NS
    await store.load(KEY)  # the first settled load looks at every file once
    looked: list[str] = []
    plain = memo._regular
    monkeypatch.setattr(memo, "_regular", lambda p: looked.append(p) or plain(p))
    again = await store.load(KEY)
    assert looked == [] and results(again or []) == results(out)
    time.sleep(0.05)
    paths[2].unlink()
    third = await store.load(KEY)
    assert paths[2].read_text(encoding="utf-8") == "part 2\n" * 800
    assert results(third or []) == results(out)
    assert sorted(looked) == sorted(map(str, paths))  # the moved time: each looked at once


async def test_a_long_command_is_shortened_in_the_expiry_note(
    tmp_path: Path, workspace: Path
) -> None:
    t = Transcript()
    t.prompt("look around")
    command = "ls -la " + " ".join(f"dir{n}/sub" for n in range(20))
    stale = t.call(command, "a b c")
    for _ in range(6):
        t.call("git status", "clean")

    _, out = await loaded(tmp_path, workspace, t)

    note = results(out)[stale]
    shown = note[1 : note.index(" 的结果已过期")]
    assert len(shown) == trim.CMD_CHARS and shown == command[: trim.CMD_CHARS - 1] + "…"


async def test_only_text_is_trimmed_images_stay_and_compact_summaries_are_untouched(
    tmp_path: Path, workspace: Path
) -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR" * 900},
    }
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "d" * 5000},
    }
    t = Transcript()
    t.prompt("look at it")
    mixed = t.call(
        "render",
        [{"type": "text", "text": "a" * 4000}, image, document, {"type": "text", "text": "tiny"}],
    )
    summary = t.call("git status", "s" * 4000, isCompactSummary=True)
    t.call("ls", "x")

    _, out = await loaded(
        tmp_path,
        workspace,
        t,
        policy=TrimPolicy(keep_recent=0),
        ephemeral=EphemeralPolicy(keep_recent=0),
    )

    content = results(out)[mixed]
    assert (
        content[1] == image
        and content[2] == document
        and content[3] == {"type": "text", "text": "tiny"}
    )
    assert content[0]["type"] == "text" and "原文完整保存在" in content[0]["text"]
    assert results(out)[summary] == "s" * 4000
    assert "已过期" in results(out)[calls(out)[-1]]


async def test_disabled_policies_change_nothing(tmp_path: Path, workspace: Path) -> None:
    t = Transcript()
    t.prompt("x")
    for _ in range(10):
        t.call("git status", "y" * 3000)
    store, out = await loaded(
        tmp_path,
        workspace,
        t,
        policy=TrimPolicy(enabled=False),
        ephemeral=EphemeralPolicy(enabled=False),
    )
    assert out == t.lines and store.last_report == {}


def test_the_spill_folder_must_stay_inside_the_workspace(tmp_path: Path, workspace: Path) -> None:
    with pytest.raises(ValueError, match="leaves the workspace"):
        TrimmingSessionStore(
            tmp_path / "s.db", workspace, policy=TrimPolicy(spill_dirname="../out")
        )


@pytest.mark.parametrize(
    ("link", "target"),
    [(".flower/spill", "outside"), (".flower", "workspace/src")],
    ids=["spill-to-outside", "flower-to-inside"],
)
async def test_a_link_planted_on_the_spill_path_is_never_written_through(
    tmp_path: Path, workspace: Path, link: str, target: str
) -> None:
    """The agent can write in the workspace: a link on the spill folder's path made after
    the store was built must not carry spill files anywhere, out of the workspace or to
    another folder inside it (it could point at a file the run keeps). The result stays
    whole instead."""
    there = workspace / "src" if target == "workspace/src" else tmp_path / target
    there.mkdir()
    store = TrimmingSessionStore(tmp_path / "s.db", workspace, policy=TrimPolicy(keep_recent=0))
    (workspace / link).parent.mkdir(parents=True, exist_ok=True)
    (workspace / link).symlink_to(there)
    t = Transcript()
    t.prompt("build")
    big = t.call("make build", "y" * 5000)
    await store.append(KEY, copy.deepcopy(t.lines))

    out = await store.load(KEY)

    assert out is not None and results(out)[big] == "y" * 5000
    assert list(there.iterdir()) == []
    assert store.last_report == {"spill_failed": 1}


async def test_a_spill_folder_that_cannot_be_made_leaves_results_whole_and_resume_working(
    tmp_path: Path, workspace: Path
) -> None:
    """Trimming only saves context: when the spill file cannot be written the result
    stays in place (nothing lost) and ``load()`` still answers, so the resume goes on."""
    (workspace / ".flower").write_text("a file where the folder should be")
    t = Transcript()
    t.prompt("build")
    big = t.call("make build", "y" * 5000)
    other = t.call("make test", [{"type": "text", "text": "z" * 3000}])

    store, out = await loaded(tmp_path, workspace, t, policy=TrimPolicy(keep_recent=0))

    assert results(out)[big] == "y" * 5000
    assert results(out)[other] == [{"type": "text", "text": "z" * 3000}]
    assert store.last_report == {"spill_failed": 2}
    assert [p.name for p in workspace.iterdir()] == [".flower"]


async def test_spilled_originals_stay_out_of_git(tmp_path: Path, workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    t = Transcript()
    t.prompt("build")
    t.call("make build", "row\n" * 3000)
    t.call("make test", "z" * 3000)

    await loaded(tmp_path, workspace, t, policy=TrimPolicy(keep_recent=1))

    spill = workspace / ".flower" / "spill"
    assert any(p.suffix == ".txt" for p in spill.iterdir())
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=workspace, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert ".flower/spill" not in status


def test_trim_report_says_what_the_latest_load_did_in_one_line() -> None:
    from types import SimpleNamespace

    from flower import trim_report

    assert trim_report(SimpleNamespace(last_report={})) == "nothing trimmed"
    assert trim_report(object()) == "nothing trimmed"
    line = trim_report(
        SimpleNamespace(
            last_report={"trimmed": 2, "trimmed_chars": 48_000, "expired": 3, "denials": 1}
        )
    )
    assert line == (
        "2 large tool result(s) replaced by pointers to files (~12,000 tokens saved);"
        " 3 stale one-off result(s) marked expired; 1 old refused call(s) left out"
    )
    assert "\n" not in line
