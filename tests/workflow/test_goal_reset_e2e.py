"""A goal set again for a remark, whose re-set failed, is set again at the next wake.

Three ``flower`` processes on one folder. The first finishes (achieved). The second
brings a remark: the brief is amended and the goal must be set again from it, but the
goal setter's answer is no goal (the step stops). The third has nothing to add: it must
not find the old goal complete and skip the step ("already done"), judging the old goal
while the remark is in no goal at all; it sets the goal again.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flower.testing import ScriptedModel, conversation, text

from . import scripts as S

pytestmark = pytest.mark.e2e

FLOWER = str(Path(sys.executable).with_name("flower"))
REMARK = "ALSO-UPPERCASE 顺便把 HI 也写上"
NEW_GOAL = "## 目标\nhello.txt 写好,还有 HI\n## 判定清单\n- cat hello.txt 输出 hi\n- 也写了 HI"


def flower(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FLOWER, "-w", str(ws), *args, "--timeout", "0", "--no-bequest"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
    )  # fmt: skip


def test_a_failed_goal_reset_is_never_counted_as_done(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    scripted_model.play(S.one_round(S.ACHIEVED, S.DISPATCH, text(S.ROUND1)))
    first = flower(ws, "写个 hello.txt")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]

    scripted_model.play(
        [
            conversation(
                "goal-broken", text("I will not."), system=S.JUDGE, first_user="ALSO-UPPERCASE"
            )
        ]
    )
    second = flower(ws, REMARK)
    assert second.returncode == 1, second.stdout[-2000:]  # the goal step stopped
    goal_file = ws / ".flower" / "notes" / "目标.md"
    assert "HI" not in goal_file.read_text(encoding="utf-8")  # the old goal is still there

    scripted_model.play(
        [
            conversation("goal-again", text(NEW_GOAL), system=S.JUDGE, after_user="ALSO-UPPERCASE"),
            S.coder(),
            S.judge("verdict", S.ROUND2, S.ACHIEVED),
            S.coordinator(text(S.ROUND2)),
        ]
    )
    third = flower(ws)
    assert "设定目标 skipped" not in third.stdout, third.stdout[-3000:]
    assert scripted_model.requests_for("goal-again"), third.stdout[-3000:]
    assert "也写了 HI" in goal_file.read_text(encoding="utf-8")
    # the wake counts its round on from the first process's, against its own limit
    assert "verdict (round 2, 1/3 this time):" in third.stdout, third.stdout[-3000:]
