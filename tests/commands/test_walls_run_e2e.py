"""A whole ``flower`` run in which the roles try to break their walls.

The coordinator tries to delete files with a "glance" (``find -rm``, bfs's ``-delete``
by another name, which once passed as read-only); the judge tries to change what it
judges, by hand and through a subagent, then rules "achieved". Through the real
``flower`` process and the real CLI: the run ends well, nothing but the worker's own
file changed, and the judge ledger (the notes file, and ``flower status`` from the
store) records every refusal.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from flower.testing import ScriptedModel, bash, conversation, text, tool

from ..guards.hostile import changes, snapshot
from ..workflow import scripts as S
from .terminal import FLOWER, Flower

pytestmark = pytest.mark.e2e

TAMPER = "TAMPER: make kept.txt say what the goal wants"


def tampering_judge() -> list:
    """The round-1 judge: four ways to change the workspace, then its verdict."""
    return [
        conversation(
            "intruder",  # what a subagent of the judge would do, were one started
            tool("Write", {"file_path": "forged.txt", "content": "x"}),
            bash("rm -f kept.txt"),
            text("done"),
            after_user="TAMPER",
        ),
        conversation(
            "verdict-1",
            tool("Write", {"file_path": "kept.txt", "content": "forged\n"}),
            tool("Edit", {"file_path": "kept.txt", "old_string": "kept", "new_string": "x"}),
            bash("rm kept.txt"),
            tool(
                "Agent",
                {
                    "description": "fix",
                    "prompt": TAMPER,
                    "subagent_type": "general-purpose",
                    "run_in_background": False,
                },
            ),
            text(S.ACHIEVED),
            system=S.JUDGE,
            first_user=S.ROUND1,
        ),
    ]


def test_a_run_whose_roles_push_at_the_walls_changes_nothing_and_says_so(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    (ws / "sub").mkdir(parents=True)
    (ws / "kept.txt").write_text("kept\n")
    (ws / "sub" / "deep.txt").write_text("deep\n")
    scripted_model.play(
        [
            *tampering_judge(),
            S.coder(),
            S.goal_setter(),
            S.clarifier(ask=False),
            S.coordinator(
                bash("find . -name kept.txt -rm"),
                bash("find sub -rm"),
                S.DISPATCH,
                text(S.ROUND1),
            ),
        ]
    )
    before = snapshot(ws)
    run = Flower("-w", str(ws), "写个 hello.txt", "--timeout", "0", "--no-bequest", cwd=tmp_path)
    assert run.finish() == 0, run.text[-3000:]

    after = snapshot(ws, skip=(".flower/", "runs/", ".claude/"))
    assert changes({**before, "hello.txt": after.get("hello.txt", "")}, after) == []
    assert (ws / "hello.txt").read_text() == "hi"  # the worker's, the one legitimate change
    assert not [r for r in scripted_model.requests if r.conversation == "intruder"]
    assert "walls refused" in run.text

    notes = (ws / ".flower" / "notes" / "判定记录.md").read_text(encoding="utf-8")
    for tool_name in ("Write", "Edit", "Bash", "Agent"):
        assert f"## 干活·判定#1 · 第 1 轮 · 拦下 {tool_name}" in notes, notes
    assert notes.count("## 干活 · 第 1 轮 · 拦下 Bash") == 2, notes  # the two glances
    assert "find -rm deletes" in notes or "-rm" in notes.split("拦下 Bash")[1][:400], notes
    status = subprocess.run(
        [FLOWER, "-w", str(ws), "status", "--json"], capture_output=True, text=True, check=True
    )
    judge = json.loads(status.stdout)["judge"]
    assert judge["refused"] == {"Agent": 1, "Bash": 3, "Edit": 1, "Write": 1}, judge
