"""``flower rewind`` end to end: the real CLI against the scripted model, several processes.

A three-round run in which round 2's worker deletes ``keep.txt`` with Bash and writes
``new.txt``. Then: ``flower rewind`` lists the checkpoints; a rewind is refused while
another flower holds the run, and where the folder changed since the newest checkpoint
without ``--yes`` (both with nothing changed); ``flower rewind 2`` brings ``keep.txt``
back, removes ``new.txt`` and ``r3.txt``, and the coordinator's next request holds the
conversation as it stood when round 2 began plus the human's words, nothing of rounds 2
and 3; the judge rules on the frozen goal. ``flower diff 2`` shows what round 2 did;
``--undo`` gives back the round-3 folder exactly (the hash of the whole tree).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flower.records.runlock import run_lock
from flower.testing import ScriptedModel, bash, conversation, text, tool

from ..workflow import scripts as S

pytestmark = pytest.mark.e2e

FLOWER = str(Path(sys.executable).with_name("flower"))
WORDS = "REWIND-WORDS 这次别删 keep.txt"
R1, R2, R3, R4 = (f"ROUND-{n}-REPORT done" for n in (1, 2, 3, 4))


def not_yet(why: str) -> str:
    return f"## 结论\n未达成\n## 理由\n{why}\n## 未通过\n- {why}"


def dispatch(task: str) -> object:
    return tool(
        "Agent",
        {"description": task[:20], "prompt": task, "subagent_type": "coder",
         "run_in_background": False},
    )  # fmt: skip


def script() -> list[object]:
    coder = [
        conversation("coder-1", bash("printf hi > hello.txt"), text("done"),
                     subagent=True, first_user="TASK-1"),
        conversation("coder-2", bash("rm keep.txt"), bash("printf new > new.txt"), text("done"),
                     subagent=True, first_user="TASK-2"),
        conversation("coder-3", bash("printf three > r3.txt"), text("done"),
                     subagent=True, first_user="TASK-3"),
    ]  # fmt: skip
    return [
        *coder,
        conversation("rewound", text(R4), system=S.COORDINATOR, subagent=False, after_user=WORDS),
        S.judge("verdict-1", R1, not_yet("R1-MISSING")),
        S.judge("verdict-2", R2, not_yet("R2-MISSING")),
        S.judge("verdict-3", R3, S.ACHIEVED),
        S.judge("verdict-4", R4, S.ACHIEVED),
        S.goal_setter(),
        S.clarifier(ask=False),
        S.coordinator(
            dispatch("TASK-1 write hello.txt"),
            text(R1),
            dispatch("TASK-2 delete keep.txt, write new.txt"),
            text(R2),
            dispatch("TASK-3 write r3.txt"),
            text(R3),
        ),
    ]


def flower(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FLOWER, *args], cwd=ws, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        timeout=300,
    )  # fmt: skip


def tree_hash(ws: Path) -> str:
    """The whole folder but the run's store and the verdict record flower appends to."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(ws):
        rel = Path(folder).relative_to(ws)
        dirs[:] = sorted(d for d in dirs if not (rel == Path(".") and d == "runs"))
        h.update(f"D {rel.as_posix()}\n".encode())
        for name in sorted(files):
            path = Path(folder) / name
            if (rel / name).as_posix() == ".flower/notes/判定记录.md":
                continue
            mode = os.lstat(path).st_mode & 0o7777
            h.update(f"F {rel / name} {mode:o} ".encode() + path.read_bytes())
    return h.hexdigest()


def refs(ws: Path) -> str:
    where = f"--git-dir={ws / 'runs' / 'checkpoints.git'}"
    return subprocess.run(["git", where, "for-each-ref"], capture_output=True, text=True).stdout


def said(done: subprocess.CompletedProcess[str]) -> str:
    return f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"


def test_rewind_to_round_two_and_undo(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    (ws / "keep.txt").write_text("the human's file\n")
    scripted_model.play(script())
    first = flower(ws, "写个 hello.txt", "--timeout", "0", "--no-bequest")
    assert first.returncode == 0, said(first)
    assert not (ws / "keep.txt").exists() and (ws / "new.txt").read_text() == "new"
    assert (ws / "r3.txt").exists()

    listed = flower(ws, "rewind")
    assert listed.returncode == 0, said(listed)
    for line in ("设定目标", "round 1", "round 2", "round 3", "judge: not_yet", "judge: achieved"):
        assert line in listed.stdout, said(listed)
    diffed = flower(ws, "diff", "2")
    assert diffed.returncode == 0, said(diffed)
    assert "D keep.txt" in diffed.stdout and "A new.txt" in diffed.stdout, said(diffed)
    assert "r3.txt" not in diffed.stdout  # round 3's, not round 2's

    (ws / "human.txt").write_text("written after the run by the human\n")
    round3 = tree_hash(ws)
    ref = refs(ws)
    with run_lock(ws / "runs"):  # another flower holds the run
        busy = flower(ws, "rewind", "2", "--yes", "--say", WORDS)
    assert busy.returncode == 2, said(busy)
    assert "cannot rewind while active in another flower" in busy.stderr
    assert len(busy.stderr.strip().splitlines()) == 1
    asked = flower(ws, "rewind", "2", "--say", WORDS)  # nobody here to ask about human.txt
    assert asked.returncode == 2, said(asked)
    assert "human.txt (added)" in asked.stderr and "--yes" in asked.stderr
    missing = flower(ws, "rewind", "9", "--yes")
    assert missing.returncode == 2 and "no checkpoint '9'" in missing.stderr, said(missing)
    assert tree_hash(ws) == round3  # refusals change nothing
    assert refs(ws) == ref

    back = flower(ws, "rewind", "2", "--yes", "--say", WORDS, "--", "--timeout", "0",
                  "--no-bequest")  # fmt: skip
    assert back.returncode == 0, said(back)
    assert "rewound to round 2" in back.stdout, said(back)
    assert (ws / "keep.txt").read_text() == "the human's file\n"
    assert not (ws / "new.txt").exists() and not (ws / "r3.txt").exists()
    assert not (ws / "human.txt").exists()
    assert (ws / "hello.txt").read_text() == "hi"

    (request,) = scripted_model.requests_for("rewound")
    asked_now = request.text()
    assert R1 in asked_now and "R1-MISSING" in asked_now and WORDS in asked_now
    for later in (R2, "TASK-2", "R2-MISSING", R3, "TASK-3"):
        assert later not in asked_now, later
    assert "verdict (round 4" in back.stdout, said(back)
    (ruling,) = scripted_model.requests_for("verdict-4")
    assert "hello.txt 写好" in ruling.text()  # the frozen goal
    notes = (ws / ".flower" / "notes" / "判定记录.md").read_text()
    assert "倒回 #" in notes and WORDS in notes

    undone = flower(ws, "rewind", "--undo", "--yes")
    assert undone.returncode == 0, said(undone)
    assert tree_hash(ws) == round3, said(undone)
    assert (ws / "human.txt").exists() and not (ws / "keep.txt").exists()

    shown = flower(ws, "status")
    assert shown.returncode == 0, said(shown)
    assert "checkpoints: " in shown.stdout and "(newest: undo)" in shown.stdout, said(shown)
    pruned = flower(ws, "rewind", "--prune", "--keep", "2")
    assert pruned.returncode == 0 and "dropped" in pruned.stdout, said(pruned)
    relisted = flower(ws, "rewind")
    assert relisted.stdout.count("\n  #") == 2, said(relisted)
    assert tree_hash(ws) == round3  # pruning never touches the folder
