"""The bequest: when a run ends, leave the next tool what it needs in CLAUDE.md and AGENTS.md.

A finished run leaves a project that the next tool (Claude Code, Codex, a human with an
editor) opens cold: it does not know what was asked, which acceptance checks passed,
which files are generated and must not be edited by hand, which approaches were dead
ends, or where flower's workbench is. So when a run ends (the goal met, or the workflow
stopped), one short read-only round writes that down, and flower puts it in a managed
block of the project's ``CLAUDE.md`` and ``AGENTS.md`` (``workflow/bequest_block.py``: only the
text between flower's markers is ever changed).

The round sees the brief, the goal, the last verdict and the dead ends the handoffs
recorded, and may read the workspace (Read, Glob, Grep; nothing that writes). When it
fails or leaves out a required section, a mechanical version assembled from the same
facts is written instead, marked as such: the next tool always finds something true.
The block holds no timestamp, so a rerun that learns nothing new changes no byte.

The round's rules and prompt and the block's headings are in the language in effect
(:mod:`flower.kernel.lang`); a block written in one language is replaced whole by a run in
the other (the markers, which are English in both, are what find it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.kernel.agent_spec import AgentSpec
from flower.kernel.events import Event
from flower.kernel.files import relative_posix
from flower.kernel.lang import EN, current, pick
from flower.kernel.text import one_line
from flower.plugins import emit
from flower.records.handoff import Handoff
from flower.records.ledger import LEDGER_NAME
from flower.records.sections import parse_sections
from flower.roles.factory import LOOK_TOOLS
from flower.workflow.base import Ctx
from flower.workflow.bequest_block import NAMES, Placement, place_everywhere
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Goal, Verdict

__all__ = [
    "BEQUEST_PROMPT",
    "BEQUEST_PROMPT_EN",
    "BEQUEST_RULES",
    "BEQUEST_RULES_EN",
    "BEQUEST_STEP",
    "Bequest",
    "bequeath",
    "bequest",
]

BEQUEST_STEP = "收尾"
#: How much of a reason (an error, the judge's words) the block quotes.
SHORT = 200

BEQUEST_RULES = """\
你是收尾记录者:一次运行刚结束,你给下一个打开这个项目的工具(Claude Code 读 CLAUDE.md,\
别的代理读 AGENTS.md)留一段话。它看不到这次运行,只能看到你写的。
- 只看不改:可以读工作区核对,不要改任何文件。
- 写事实,不写感想;每节几行;具体到文件和命令。"""

BEQUEST_PROMPT = """\
这次运行结束了:{outcome}。按下面四节写,标题照抄:

## 这是什么
这个项目是什么、这次做了什么。

## 验收
逐条写验收标准:已满足 / 未满足,以及依据。

## 生成的文件
哪些文件是生成的、由什么生成(命令或来源),哪些不该手改。没有就写"无"。

## 死路
试过但走不通的做法和原因。没有就写"无",不要编。

下面是这次运行留下的材料。

# 需求
{brief}

# 目标与判定清单
{goal}

# 裁判最后的判定
{verdict}

# 交接文档里记下的死路
{deadends}
"""

BEQUEST_RULES_EN = """\
You are the bequest writer: a run has just ended, and you leave a note for the next tool that \
opens this project (Claude Code reads CLAUDE.md, other agents read AGENTS.md). It cannot see \
this run, only what you write.
- Look, do not touch: you may read the workspace to check, but change no file.
- Write facts, not impressions; a few lines per section; name files and commands."""

BEQUEST_PROMPT_EN = """\
This run has ended: {outcome}. Write these four sections, headings exactly as given:

## What this is
What this project is and what this run did.

## Acceptance
Each acceptance criterion in turn: met / not met, and how you know.

## Generated files
Which files are generated and from what (a command or a source), and which must not be \
edited by hand. If there are none, write "none".

## Dead ends
Approaches that were tried and did not work, and why. If there are none, write "none"; do \
not make any up.

Below is what the run left behind.

# Requirements
{brief}

# Goal and checks
{goal}

# The judge's last verdict
{verdict}

# Dead ends recorded in the handoff documents
{deadends}
"""

#: Section field -> its heading in the block, in order; the first two are required.
SECTIONS = {"what": "这是什么", "accept": "验收", "generated": "生成的文件", "deadends": "死路"}
SECTIONS_EN = {
    "what": "What this is",
    "accept": "Acceptance",
    "generated": "Generated files",
    "deadends": "Dead ends",
}
REQUIRED = ("what", "accept")
_ALIASES = {
    "这是什么": "what", "项目是什么": "what", "what this is": "what",
    "验收": "accept", "验收情况": "accept", "验收标准": "accept", "acceptance": "accept",
    "生成的文件": "generated", "生成文件": "generated", "generated files": "generated",
    "死路": "deadends", "走不通的路": "deadends", "dead ends": "deadends",
}  # fmt: skip
TITLE = "## flower: 这个项目的现状"
TITLE_EN = "## flower: where this project stands"
NONE = "无"
NONE_EN = "none"
#: flower's own words in the block and the facts, by language: (Chinese, English).
WORDS: dict[str, tuple[str, str]] = {
    "note": (
        "> 一次 flower 运行结束时写给下一个打开这个项目的工具:{outcome}。",
        "> Written for the next tool that opens this project, when a flower run ended: {outcome}.",
    ),
    "mechanical": (
        "\n> 收尾的一轮没能写出来({why}),这份是 flower 按记录机械拼装的。",
        "\n> The closing round could not write it ({why}); flower assembled this one"
        " mechanically from its records.",
    ),
    "workbench": ("工作台", "Workbench"),
    "no_runtime": ("没有 Runtime", "no Runtime"),
    "failed": ("这一轮失败了", "the round failed"),
    "lacked": ("缺少:", "it lacked "),
    "no_brief": ("(没有需求文档)", "(no requirements document)"),
    "no_goal": ("(没有目标)", "(no goal)"),
    "no_verdict": ("(没有判定)", "(no verdict)"),
    "unclear": ("不明确", "unclear"),
    "failed_check": ("\n- 未通过:{check}", "\n- failed: {check}"),
    "stopped": ("停在「{step}」:{why}", 'stopped at "{step}": {why}'),
    "step_failed": ("这一步没有成功", "the step did not succeed"),
    "met": ("目标已达成(独立裁判核对过)", "the goal is met (checked by an independent judge)"),
    "accepted": (
        "人接受了结果,裁判判为无法达成:{reason}",
        "the human accepted the result; the judge had found it unreachable: {reason}",
    ),
    "done": ("完成", "done"),
    "check_met": ("已满足", "met"),
    "check_failed": ("未满足", "not met"),
    "check_unlisted": ("裁判没有列为未通过", "not listed as failed by the judge"),
    "no_acceptance": ("(没有验收记录)", "(no acceptance record)"),
    "no_generated": (
        "(机械版本不知道哪些文件是生成的:看 git 的改动和判定记录)",
        "(the mechanical version cannot tell which files are generated: see the git changes"
        " and the verdict record)",
    ),
    "unknown_why": ("原因不明", "reason unknown"),
    "where": (
        "- flower 的工作台在 `{shown}`:notes/ 里有需求(需求.md)、目标(目标.md)、"
        "问答记录、判定记录({ledger})和交接文档。",
        "- flower's workbench is at `{shown}`: notes/ holds the requirements (需求.md), the"
        " goal (目标.md), the Q&A log, the verdict record ({ledger}) and the handoff"
        " documents.",
    ),
    "again": (
        "- 在项目目录里再运行 `flower`,会接着这次运行的对话继续。",
        "- Run `flower` again in the project folder to continue this run's conversation.",
    ),
}


def _say(key: str, **values: str) -> str:
    """flower's own words ``key`` in the language in effect, filled in with ``values``."""
    text = pick(*WORDS[key])
    return text.format(**values) if values else text


@dataclass
class Bequest:
    """What the block says; ``mechanical`` with ``why`` when flower assembled it itself."""

    what: str = ""
    accept: str = ""
    generated: str = ""
    deadends: str = ""
    outcome: str = ""
    workbench: str = ""
    mechanical: bool = False
    why: str = ""

    @classmethod
    def parse(cls, text: str) -> Bequest:
        found = parse_sections(text, _ALIASES)
        said = cls()
        for name in SECTIONS:
            setattr(said, name, found.get(name, ""))
        return said

    def missing(self) -> list[str]:
        headings = pick(SECTIONS, SECTIONS_EN)
        return [headings[name] for name in REQUIRED if not getattr(self, name).strip()]

    def body(self) -> str:
        """The block's text (no timestamp: the same facts give the same bytes)."""
        note = _say("note", outcome=self.outcome)
        if self.mechanical:
            note += _say("mechanical", why=self.why)
        parts = [pick(TITLE, TITLE_EN), "", note, ""]
        for name, heading in pick(SECTIONS, SECTIONS_EN).items():
            parts += [f"### {heading}", "", getattr(self, name).strip() or pick(NONE, NONE_EN), ""]
        parts += [f"### {_say('workbench')}", "", self.workbench.strip()]
        return "\n".join(parts)


def bequest(
    workspace: str | Path,
    workbench: Any,
    *,
    after: str | None = None,
    spec: AgentSpec | None = None,
    names: tuple[str, ...] = NAMES,
) -> Callable[[Ctx], Any]:
    """A ``Workflow(finish=…)`` that writes the bequest when the workflow ends.

    ``after``: only when this step ran (the starter flow's work step: a run stopped
    while clarifying has nothing to leave). ``spec``: the agent of the round (default: a
    read-only one). ``names``: the files, at the workspace's root.
    """

    async def finish(ctx: Ctx) -> None:
        if after is not None and after not in ctx.get("_results", {}):
            return
        await bequeath(ctx, workspace=Path(workspace), workbench=workbench, spec=spec, names=names)

    return finish


async def bequeath(
    ctx: Ctx,
    *,
    workspace: Path,
    workbench: Any,
    spec: AgentSpec | None = None,
    names: tuple[str, ...] = NAMES,
) -> list[Placement]:
    """Run the round, place the block in each file, emit ``Event("bequest", …)``."""
    runtime, on_event = ctx.get("_runtime"), ctx.get("_on_event")
    facts = _facts(ctx, workbench)
    written = Bequest(mechanical=True, why=_say("no_runtime"))
    if runtime is not None:
        agent = spec or AgentSpec(
            name=BEQUEST_STEP,
            instructions=pick(BEQUEST_RULES, BEQUEST_RULES_EN),
            allowed_tools=list(LOOK_TOOLS),
            disallowed_tools=["Bash", "Write", "Edit", "NotebookEdit", "Agent"],
            max_turns=8,
            max_budget_usd=0.5,
            workbench=False,
            sealed=True,  # it reads the CLAUDE.md it writes into: nothing in it instructs it
        )
        try:
            prompt = pick(BEQUEST_PROMPT, BEQUEST_PROMPT_EN).format(**facts)
            ruling = await runtime.run(agent, prompt, step_name=BEQUEST_STEP, on_event=on_event)
            written = Bequest.parse(ruling.text) if ruling.ok else written
            if not ruling.ok:
                written.why = one_line(ruling.error or _say("failed"), SHORT)
            elif written.missing():
                lacked = _say("lacked") + pick("、", ", ").join(written.missing())
                written = Bequest(mechanical=True, why=lacked)
        except Exception as exc:  # a bequest must never fail the run it closes
            written = Bequest(mechanical=True, why=one_line(f"{type(exc).__name__}: {exc}", SHORT))
    if written.mechanical:
        written = _mechanical(ctx, facts, why=written.why)
    written.outcome, written.workbench = facts["outcome"], _where(workspace, workbench)
    placed = place_everywhere(workspace, written.body(), names)
    for place in placed:
        if place.warning:
            print(f"flower: {place.warning}", file=sys.stderr)
    payload = {
        "files": [{"path": str(p.path), "action": p.action, "warning": p.warning} for p in placed],
        "mechanical": written.mechanical,
        "why": written.why,
    }
    emit(Event("bequest", payload, step=BEQUEST_STEP), on_event)
    return placed


# --- the facts --------------------------------------------------------------------------------


def _documents(ctx: Ctx) -> tuple[Brief | None, Goal | None, Verdict | None]:
    """The brief, the goal and the last verdict the workflow left in ``ctx``, if any."""
    from flower.workflow.clarify import BRIEF_KEY
    from flower.workflow.goal import GOAL_KEY, VERDICT_KEY

    brief, goal, verdict = ctx.get(BRIEF_KEY), ctx.get(GOAL_KEY), ctx.get(VERDICT_KEY)
    return (
        brief if isinstance(brief, Brief) else None,
        goal if isinstance(goal, Goal) else None,
        verdict if isinstance(verdict, Verdict) else None,
    )


def _facts(ctx: Ctx, workbench: Any) -> dict[str, str]:
    brief, goal, verdict = _documents(ctx)
    return {
        "outcome": _outcome(ctx, verdict),
        "brief": brief.prompt_block() if brief else _say("no_brief"),
        "goal": goal.prompt_block() if goal else _say("no_goal"),
        "verdict": _verdict_text(verdict),
        "deadends": "\n".join(_deadends(workbench)) or pick(NONE, NONE_EN),
    }


def _outcome(ctx: Ctx, verdict: Verdict | None) -> str:
    failed_at = ctx.get("_failed_at")
    if failed_at:
        why = ctx.get("_aborted") or _say("step_failed")
        return _say("stopped", step=str(failed_at), why=one_line(str(why), SHORT))
    if verdict is not None and verdict.achieved:
        return _say("met")
    if verdict is not None and verdict.unreachable:
        return _say("accepted", reason=one_line(verdict.reason, SHORT))
    return _say("done")


def _verdict_text(verdict: Verdict | None) -> str:
    if verdict is None:
        return _say("no_verdict")
    failed = "".join(_say("failed_check", check=check) for check in verdict.failed)
    colon = ": " if current() == EN else ":"
    return f"{verdict.state or _say('unclear')}{colon}{verdict.reason.strip()}{failed}"


def _deadends(workbench: Any) -> list[str]:
    """The dead ends every handoff of the run recorded (current and archived), once each."""
    notes = getattr(workbench, "notes", None)
    if notes is None:
        return []
    found: list[str] = []
    for path in sorted(Path(notes).rglob("交接-*.md")):
        doc = Handoff.load(path)
        text = doc.deadends.strip() if doc is not None else ""
        if text and text.lower() not in (NONE, NONE_EN) and text not in found:
            found.append(text)
    return found


def _mechanical(ctx: Ctx, facts: dict[str, str], *, why: str) -> Bequest:
    brief, goal, verdict = _documents(ctx)
    what = brief.goal.strip() if brief else ""
    checks = goal.checks if goal else []
    failed = set(verdict.failed) if verdict else set()
    passed = verdict is not None and verdict.achieved
    lines = []
    for check in checks:
        key = "check_met" if passed else "check_failed" if check in failed else "check_unlisted"
        colon = ": " if current() == EN else ":"
        lines.append(f"- {check}{colon}{_say(key)}")
    if not checks and brief:
        lines.append(brief.accept.strip())
    return Bequest(
        what=what or _say("no_brief"),
        accept="\n".join(lines) or _say("no_acceptance"),
        generated=_say("no_generated"),
        deadends=facts["deadends"],
        mechanical=True,
        why=why or _say("unknown_why"),
    )


def _where(workspace: Path, workbench: Any) -> str:
    root = Path(getattr(workbench, "root", workspace / ".flower"))
    shown = relative_posix(root, workspace) or str(root)
    return "\n".join([_say("where", shown=shown, ledger=LEDGER_NAME), _say("again")])
