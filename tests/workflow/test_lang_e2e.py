"""Languages end to end: the real ``flower`` or SDK, the real CLI, the scripted model.

1. ``flower --lang en "write hello.txt"``: every request any role receives (system prompt,
   prompts, tool descriptions, the tool results flower writes) is English, the roles told
   apart by their English rule texts; the documents it freezes and the notes it keeps are
   English and parse back; the bequest block in CLAUDE.md is English; the terminal shows
   the step names (keys, the seed's) with their English gloss. The only Chinese anywhere
   is those keys: file and step names.
2. A run started in one language continues in the other: round 1 runs in the first and
   is sent back; the next process, in the other, wakes. The brief and the goal frozen in
   the first language are read (nothing is clarified or set again), the work session
   resumes with the new language's resume prompt, and the judge rules round 2 with the
   old goal's checks under the new language's headings.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from flower import Runtime, starter_flow
from flower.kernel.lang import using
from flower.runtime.resilience import Resilience
from flower.testing import ScriptedModel, conversation, text
from flower.workflow import GOAL_KEY, ROUND_KEY, VERDICT_KEY
from flower.workflow.bequest import Bequest
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Goal

from ..commands.terminal import Flower
from . import scripts as ZH
from . import scripts_en as EN

pytestmark = pytest.mark.e2e


def test_an_english_run_speaks_english_to_every_role_and_writes_english(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    scripted_model.play(EN.two_rounds())
    ws = tmp_path / "proj"
    ws.mkdir()
    run = Flower("-w", str(ws), "--lang", "en", "write hello.txt", "--timeout", "0", cwd=tmp_path)
    assert run.finish() == 0, run.text[-3000:]
    assert (ws / "hello.txt").read_text() == "hi"

    # every role was reached through its English rules, and nothing it was sent is Chinese
    served = {r.conversation for r in scripted_model.requests}
    assert {"clarify", "goal", "work", "coder", "verdict-1", "verdict-2", "bequest"} <= served
    for request in scripted_model.requests:
        sent = json.dumps(request.body, ensure_ascii=False)
        assert EN.chinese(sent) == [], (request.conversation, EN.chinese(sent)[:5])
    (asked,) = [r for r in scripted_model.requests_for("clarify") if r.turn == 1]
    assert "Nobody can answer this question now" in " ".join(asked.tool_results().values())
    round2 = next(r for r in scripted_model.requests_for("work") if r.turn == 2)
    assert "The judge found that the last round has not achieved the goal yet" in json.dumps(
        round2.body
    )

    # the documents: English on disk, read back by the parsers
    notes = ws / ".flower" / "notes"
    brief_text = (notes / "需求.md").read_text(encoding="utf-8")
    assert brief_text.startswith("# The brief") and "## Acceptance criteria" in brief_text
    brief = Brief.load(notes / "需求.md")
    assert brief is not None and brief.complete() and brief.goal == "Write hello.txt"
    assert "Line endings: LF, assumed" in brief.unknowns
    goal_text = (notes / "目标.md").read_text(encoding="utf-8")
    assert goal_text.startswith("# Definition of done") and "## Checks" in goal_text
    goal = Goal.load(notes / "目标.md")
    assert goal is not None and goal.checks == ["cat hello.txt prints hi", "no other file changed"]
    ledger = (notes / "判定记录.md").read_text(encoding="utf-8")
    assert ledger.index("round 1 · not yet") < ledger.index("round 2 · achieved")
    log = (notes / "问答记录.md").read_text(encoding="utf-8")
    assert log.startswith("# Questions and answers") and "Q: Which line endings" in log
    index = (ws / ".flower" / "INDEX.md").read_text(encoding="utf-8")
    assert index.startswith("# Workbench index")
    for written in (brief_text, goal_text, ledger, log, index):
        assert EN.chinese(written) == [], EN.chinese(written)

    # the bequest: an English block, parsed back
    claude = (ws / "CLAUDE.md").read_text(encoding="utf-8")
    assert "## flower: where this project stands" in claude and "### Workbench" in claude
    assert EN.chinese(claude) == [], EN.chinese(claude)
    with using("en"):
        said = Bequest.parse(claude)
    assert said.what == "A tiny project with hello.txt" and "hello.txt holds hi" in said.accept
    assert (ws / "AGENTS.md").read_text(encoding="utf-8") == claude

    # the terminal: English words, the step names with their gloss
    shown = run.text
    assert "== 确认需求 (clarify) " in shown and "== 设定目标 (set the goal) " in shown
    assert "* 干活 (work) done" in shown and "verdict (round 1/3): not yet" in shown
    assert EN.chinese(shown) == [], EN.chinese(shown)


SCRIPTS: dict[str, ModuleType] = {"zh": ZH, "en": EN}
#: What each language's resume prompt and verify prompt begin with.
RESUMED = {"zh": "接着上次的进度做", "en": "Carry on from where the last run stopped"}
CHECKS_HEADING = {"zh": "## 判定清单", "en": "## Checks"}
ROUND_2 = {"zh": "第 2 轮 · 已达成", "en": "round 2 · achieved"}
ROUND_1 = {"zh": "第 1 轮 · 未达成", "en": "round 1 · not yet"}


def script(first: ModuleType, then: ModuleType) -> list[Any]:
    """Round 1 in ``first`` (not yet), round 2 in ``then`` (achieved).

    The work session keeps the system prompt it started with when it is resumed (the CLI
    restores it from the transcript: measured, an ``append`` given on resume is ignored),
    so it is routed by the first language's rules in both processes; its second process
    resumes the same transcript, so its reply there is turn 2.
    """
    return [
        first.coder(),
        conversation("verdict-2", text(then.ACHIEVED), system=then.JUDGE, first_user="ROUND-2"),
        conversation("verdict-1", text(first.NOT_YET), system=first.JUDGE, first_user="ROUND-1"),
        first.goal_setter(),
        first.clarifier(ask=False),
        conversation(
            "work", first.DISPATCH, text(first.ROUND1), text(then.ROUND2), system=first.COORDINATOR
        ),
    ]


async def run(lang: str, workspace: Path, run_dir: Path, ask: str, rounds: int) -> dict[str, Any]:
    with using(lang):
        wf = starter_flow(
            ask, workspace=workspace, run_dir=run_dir, rounds=rounds, timeout_s=0, bequest=False
        )
        fast = Resilience(base_delay=0.05, max_delay=0.2)
        with Runtime(workspace=workspace, run_dir=run_dir, resilience=fast) as rt:
            return await wf.run(rt)


@pytest.mark.anyio
@pytest.mark.parametrize(("first", "then"), [("zh", "en"), ("en", "zh")])
async def test_a_run_frozen_in_one_language_continues_in_the_other(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    first: str,
    then: str,
) -> None:
    old, new = SCRIPTS[first], SCRIPTS[then]
    scripted_model.play(script(old, new))
    run_dir = tmp_path / "runs"

    ctx = await run(first, workspace, run_dir, "hello.txt", rounds=1)
    assert ctx.get("_failed_at") == "干活"  # round 1 was sent back and no round was left
    served = len(scripted_model.requests)
    notes = workspace / ".flower" / "notes"
    frozen_goal = (notes / "目标.md").read_text(encoding="utf-8")

    ctx = await run(then, workspace, run_dir, "", rounds=3)
    assert "_failed_at" not in ctx, ctx.get("_failed_why")
    assert ctx[VERDICT_KEY].achieved and ctx[ROUND_KEY] == 2
    later = scripted_model.requests[served:]
    assert {r.conversation for r in later} >= {"work", "verdict-2"}
    assert not {"clarify", "goal"} & {r.conversation for r in later}  # frozen: read, not redone
    # the brief and goal of the first language were read by the second
    assert ctx[GOAL_KEY].checks and all(c in frozen_goal for c in ctx[GOAL_KEY].checks)
    assert (notes / "目标.md").read_text(encoding="utf-8") == frozen_goal  # not rewritten
    resumed = next(r for r in later if r.conversation == "work")
    said = [m for m in resumed.messages if m.get("role") == "user"][-1]  # the CLI may add a
    assert RESUMED[then] in json.dumps(said, ensure_ascii=False)  # system note (the sandbox's)
    assert old.COORDINATOR in resumed.system_text  # the CLI keeps a session's own prompt
    (ruling,) = [r for r in later if r.conversation == "verdict-2"]
    said = ruling.text()
    assert CHECKS_HEADING[then] in said and all(c in said for c in ctx[GOAL_KEY].checks)
    ledger = (notes / "判定记录.md").read_text(encoding="utf-8")
    assert ledger.index(ROUND_1[first]) < ledger.index(ROUND_2[then])
