"""The starter flow behind ``flower "make X"``, and the read-only look before it runs.

Three steps, with no domain knowledge in them:

    确认需求  clarify: ask the human, freeze the four-section brief (``需求.md``)
    设定目标  a judge turns the brief into a goal with checks, frozen (``目标.md``)
    干活      the coordinator 协调者 dispatches the worker ``coder`` until the judge,
              ruling after every round, says the goal is met

It is a working example rather than the recommended design: write your own ``Step``s
for your domain. What it wires up that is easy to miss by hand: the brief, the goal and
the Q&A log live in the workbench's ``notes/`` (the coordinator is shown that
workbench's index, so it can point its workers at them); with ``isolate`` the workbench
moves out of the repository (a worker in its own worktree cannot write into the shared
checkout); the channel is on the workflow, so a driver knows whom to answer.

Running it again in the same folder is a wake-up: the frozen brief and goal skip their
steps, and the work step continues its session from the lineage. Whatever the human
says on waking lands in three places, and losing any one silently breaks the run: it
is appended to the brief (once), the goal is set again from the amended brief (or the
judge keeps checking the old list), and the coordinator is told directly (its context
holds the old goal).

Every prompt is in the language in effect (:mod:`flower.kernel.lang`), read when it is sent;
the step names, the coordinator's name and the file names stay the seed's in every
language, since the lineage and the manifest are keyed by them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from flower.kernel.lang import localized, pick
from flower.records.frozen_copy import check
from flower.records.lineage import LINEAGE_NAME, Lineage
from flower.records.runstate import MARKER_NAME
from flower.records.workbench import ARCHIVE_DIRNAME, Workbench
from flower.roles.agent import worktree_problem
from flower.roles.factory import coordinator, worker
from flower.runtime.budget import BUDGET_KEY, env_budget, parse_budget
from flower.workflow.base import Ctx, Step, Workflow
from flower.workflow.bequest import bequest as write_bequest
from flower.workflow.brief import Brief
from flower.workflow.clarify import BRIEF_KEY, clarify_resume, clarify_step
from flower.workflow.goal import GOAL_KEY, goal_step, with_goal
from flower.workflow.verdicts import Goal

DEFAULT_WORKER_PROMPT = "你负责实现。每改一处就跑一次验证,别攒到最后。"
WORKER_DESCRIPTION = "写代码、跑测试:需要动手实现和验证的活派给它。"
COORDINATOR_NAME = "协调者"
WORK_STEP = "干活"
#: The label the wake phrase is appended to the brief under.
WAKE_LABEL = "唤醒时追加"
#: Raised when there is nothing to do: no request and nothing to continue.
NO_ASK = "say what to do, e.g. flower 'make X' (要给一句诉求,例如 flower '帮我做一个 X')"
NO_ASK_EN = "say what to do, e.g. flower 'make X'"

WORK_PROMPT = "照这份已经确认的需求把事情做完:\n\n{brief}"
GOAL_PART = "做完后,独立的裁判会按下面的目标和判定清单逐条核对:\n\n{goal}"
RESUME_PLAIN = (
    "接着上次的进度做。先看工作台和工作区里已经落盘的东西,弄清做到了哪一步,不要从头开始。"
)
RESUME_SAID = (
    "人回来了,又说了一句:{said}\n\n"
    "这句话已经追加进需求文档。接着上次的进度做,把这句话的要求也做到。"
)
RESUME_GOAL = "目标和判定清单已经按更新后的需求重新设定,以这一份为准:\n\n{goal}"
#: The clarify session continued (no brief frozen yet) while the human said something
#: this time: with no brief to append it to, this is the only place the words can go.
CLARIFY_SAID = (
    "{resume}\n\n人这次启动时说:{said}\n"
    "和之前说的是一回事就照常接着澄清;有新的要求,就一并问清、写进需求。"
)

# --- the same in English ----------------------------------------------------------------------

DEFAULT_WORKER_PROMPT_EN = "You implement. Verify after every change; do not save it for the end."
WORKER_DESCRIPTION_EN = "Writes code and runs tests: give it anything to build and verify by hand."
WAKE_LABEL_EN = "added on waking"
WORK_PROMPT_EN = "Get this done as the confirmed requirements below say:\n\n{brief}"
GOAL_PART_EN = (
    "When it is done, an independent judge checks it item by item against this goal and"
    " these checks:\n\n{goal}"
)
RESUME_PLAIN_EN = (
    "Carry on from where the last run stopped. First look at what is already saved on the"
    " workbench and in the workspace to see how far the work got; do not start over."
)
RESUME_SAID_EN = (
    "The human is back and said one more thing: {said}\n\n"
    "It has been appended to the requirements. Carry on from where the last run stopped, and"
    " do what it asks as well."
)
RESUME_GOAL_EN = (
    "The goal and its checks were set again from the updated requirements; this one now"
    " counts:\n\n{goal}"
)
CLARIFY_SAID_EN = (
    "{resume}\n\nStarting this time, the human said: {said}\n"
    "If it is the same thing as before, carry on clarifying as usual; if it asks for"
    " something new, ask about that too and put it in the requirements."
)
NO_BRIEF_EN = "(no requirements document)"


def workbench_for(workspace: str | Path, *, isolate: bool = False) -> Workbench:
    """Where the starter flow's workbench is: the one place that decides it.

    ``<ws>/.flower``, or with ``isolate`` ``<ws>.parent/.flower-<ws.name>`` (outside the
    repository, where isolated workers can still write). Nothing is created here.
    """
    ws = Path(workspace).expanduser().absolute()
    home = ws.parent / f".flower-{ws.name}" if isolate else None
    return Workbench(ws, home=home)


def starter_flow(
    ask: str,
    *,
    workspace: str | Path = ".",
    run_dir: str | Path = "runs",
    new: bool = False,
    isolate: bool = False,
    clarify_only: bool = False,
    goal: bool = True,
    rounds: int = 3,
    stuck_after: int = 3,
    judge_can_run: bool = False,
    max_asks: int | None = None,
    timeout_s: float | None = 1800.0,
    instructions: str = "",
    worker_prompt: str = DEFAULT_WORKER_PROMPT,
    brief_name: str = "需求.md",
    goal_name: str = "目标.md",
    log_name: str = "问答记录.md",
    bequest: bool = True,
    budget_usd: float | None = None,
) -> Workflow:
    """The ready-to-run workflow ``flower "make X"`` uses: clarify -> goal -> work.

    Args:
        ask: The human's request, one sentence is enough. On a wake-up it is the new
            remark (appended to the brief, the goal set again, the coordinator told);
            empty on a wake-up changes nothing and costs nothing. When an unfinished
            clarify session continues (no brief frozen yet), the clarifier is told it.
        workspace: The project folder (must exist).
        run_dir: Where the lineage is (relative to the current folder, like the
            Runtime's); used here for ``new``.
        new: Do not continue: archive ``lineage.json``, the brief and the goal into
            ``notes/archive/<YYYYmmdd-HHMMSS>/`` and start over (nothing is deleted).
        isolate: Give each worker task its own git worktree (the workspace must be a
            git repository with a commit); the workbench moves out of the repository.
        clarify_only: Only the clarify step.
        goal: Set a goal and judge every round (``False``: the work step ends when the
            coordinator says so).
        rounds: Total work rounds the judge may send back (1 or more).
        stuck_after: Rounds in a row with the same failed checks (the ones flower runs
            itself) before the run asks the human what to do, or stops as stuck where
            nobody can answer; 0: never.
        judge_can_run: Let the judge run commands (a harder verdict; its Bash runs with the
            workspace read-only in the sandbox).
        max_asks: Most questions the agents may ask (``None``: no limit; 0: none).
        timeout_s: How long a question waits (``None``: forever; ``<= 0``: nobody is
            here, questions settle at once and the agents decide and record why).
        instructions: Rules added to the clarifier's and the coordinator's.
        worker_prompt: The worker's task prompt (after the worker rules); the default
            is the seed's Chinese, and in English its English.
        brief_name, goal_name, log_name: File names in the workbench's ``notes/``.
        bequest: When the work step has run (goal met or stopped), write what the next
            tool needs into a managed block of ``CLAUDE.md`` and ``AGENTS.md`` at the
            workspace root (``flower.workflow.bequest``); ``False``: leave them alone.
        budget_usd: The most the whole run may spend, in USD, every session of every
            wake counted (``flower.runtime.budget``); kept with the run, so a later run
            without it keeps the cap. ``None``: ``FLOWER_BUDGET`` when set, else the cap
            the run kept (if any); ``math.inf``: clear the kept cap. When the budget is
            spent, ``Runtime.run`` raises ``BudgetReached`` at the next safe point.

    Raises:
        ValueError: no ``ask`` on a first run; ``isolate`` outside a git repository
            (or one without a commit); a missing workspace; ``rounds`` below 1;
            ``max_asks`` below 0; a ``budget_usd`` (or ``FLOWER_BUDGET``) that is no
            amount above 0.
    """
    ws = Path(workspace).expanduser().absolute()
    if not ws.is_dir():
        raise ValueError(f"workspace {ws} is not a folder: create it or pass another")
    if max_asks is not None and (isinstance(max_asks, bool) or max_asks < 0):
        raise ValueError(f"max_asks is None (no limit) or 0 or more, not {max_asks!r}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds is the total number of work rounds: 1 or more, not {rounds!r}")
    cap = env_budget() if budget_usd is None else parse_budget(budget_usd)
    context = {BUDGET_KEY: cap} if cap is not None else {}  # what Runtime sessions read
    if isolate:
        problem = worktree_problem(ws)
        if problem:
            raise ValueError(f"isolate needs a git repository: {ws} {problem}, or drop isolate")
    said = (ask or "").strip()
    worker_prompt = localized(worker_prompt, DEFAULT_WORKER_PROMPT, DEFAULT_WORKER_PROMPT_EN)
    wb = workbench_for(ws, isolate=isolate)
    brief_path = wb.notes / brief_name
    goal_path = wb.notes / goal_name
    lineage = Lineage.open(run_dir, ws)
    if new:
        if not said:
            raise ValueError(pick(NO_ASK, NO_ASK_EN))
        if any(p.exists() for p in (lineage.path, brief_path, goal_path)):
            # the run id too: left behind, it would bring the old lineage back from the store
            marker = wb.root / MARKER_NAME
            lineage.archive(wb.notes / ARCHIVE_DIRNAME, extra=[brief_path, goal_path, marker])
    waking = _complete(Brief.load(brief_path))
    if not said and not waking and "确认需求" not in lineage.steps:
        raise ValueError(pick(NO_ASK, NO_ASK_EN))
    wb.ensure()

    channel = _channel(wb.notes / log_name, brief_path, max_asks, timeout_s)

    def remark(ctx: Ctx) -> None:
        """The wake remark into the brief, once the run is open: the brief is checked
        against its frozen copy first (a forged one is put back, never amended), and the
        amendment is kept as the frozen brief (the channel's ``on_amended``)."""
        if not (waking and said):
            return
        runtime = ctx.get("_runtime")
        if runtime is not None:
            check(runtime, brief_path, step=clarify.name, on_event=ctx.get("_on_event"))
        if said not in _text(brief_path):
            channel.amend(said, label=pick(WAKE_LABEL, WAKE_LABEL_EN))

    clarify = clarify_step(
        channel, brief_path=brief_path, prompt=said or clarify_resume(), instructions=instructions
    )
    if said and not waking:
        told = pick(CLARIFY_SAID, CLARIFY_SAID_EN).format(resume=clarify_resume(), said=said)
        clarify = replace(clarify, resume_prompt=told)
    steps = [clarify]
    if clarify_only:
        return Workflow(
            steps, name="starter", channel=channel, workbench=wb, context=context, start=remark
        )
    if goal:
        steps.append(
            goal_step(
                channel,
                goal_path=goal_path,
                brief_key=clarify.name,
                always_set=waking and bool(said),
                can_run=judge_can_run,
            )
        )

    crew = coordinator(
        COORDINATOR_NAME,
        instructions,
        {
            "coder": worker(
                pick(WORKER_DESCRIPTION, WORKER_DESCRIPTION_EN), worker_prompt, isolate=isolate
            )
        },
        channel=channel,
    )

    def work_prompt(ctx: Ctx) -> str:
        brief = ctx.get(clarify.name) or _brief_block(ctx)
        parts = [pick(WORK_PROMPT, WORK_PROMPT_EN).format(brief=brief)]
        if isinstance(ctx.get(GOAL_KEY), Goal):
            parts.append(pick(GOAL_PART, GOAL_PART_EN).format(goal=ctx[GOAL_KEY].prompt_block()))
        return "\n\n---\n\n".join(parts)

    def resume_prompt(ctx: Ctx) -> str:
        if not (waking and said):
            return pick(RESUME_PLAIN, RESUME_PLAIN_EN)
        parts = [pick(RESUME_SAID, RESUME_SAID_EN).format(said=said)]
        if isinstance(ctx.get(GOAL_KEY), Goal):
            goal_block = ctx[GOAL_KEY].prompt_block()
            parts.append(pick(RESUME_GOAL, RESUME_GOAL_EN).format(goal=goal_block))
        return "\n\n".join(parts)

    work = Step(WORK_STEP, crew, work_prompt, resume_prompt=resume_prompt)
    if goal:
        work = with_goal(
            work, channel, goal_path=goal_path, rounds=rounds, can_run=judge_can_run,
            stuck_after=stuck_after,
        )  # fmt: skip
    steps.append(work)
    finish = write_bequest(ws, wb, after=WORK_STEP) if bequest else None
    return Workflow(
        steps, name="starter", channel=channel, workbench=wb, finish=finish, context=context,
        start=remark,
    )  # fmt: skip


def wake_state(
    workspace: str | Path = ".",
    *,
    run_dir: str | Path = "runs",
    isolate: bool = False,
    brief_name: str = "需求.md",
    goal_name: str = "目标.md",
) -> dict[str, Any]:
    """What a run in this folder would continue, read before it starts; writes nothing.

    Returns ``waking`` (a complete brief is frozen: this is a wake-up), ``continuing``
    (there is a conversation to continue: a frozen brief, or any step's session, such as
    a clarification a crash cut short), ``brief`` and
    ``goal`` (their paths), ``checks`` (goal checks, 0 without a goal), ``woke`` (wake-ups
    so far), ``steps`` (a copy of the lineage's step -> session id), ``drift`` (one line:
    what changed in the workspace since the last step ended, "" when nothing did or
    nothing is known), plus ``workbench`` and ``lineage`` (paths).
    """
    from flower.records.drift import since

    ws = Path(workspace).expanduser().absolute()
    wb = workbench_for(ws, isolate=isolate)
    brief_path, goal_path = wb.notes / brief_name, wb.notes / goal_name
    lineage = Lineage.open(run_dir, ws)
    found = Goal.load(goal_path)
    waking = _complete(Brief.load(brief_path))
    return {
        "waking": waking,
        "continuing": waking or bool(lineage.steps),
        "brief": str(brief_path),
        "goal": str(goal_path),
        "checks": len(found.checks) if found is not None else 0,
        "woke": lineage.woke,
        "steps": dict(lineage.steps),
        "drift": since(ws, Path(run_dir).expanduser().absolute()).summary(),
        "workbench": str(wb.root),
        "lineage": str(Path(run_dir).expanduser().absolute() / LINEAGE_NAME),
    }


def _channel(log: Path, brief: Path, max_asks: int | None, timeout_s: float | None) -> Any:
    """The channel the installed plugins build (default: ``HumanChannel``)."""
    from flower.human.channel import HumanChannel
    from flower.plugins import get_plugin_manager

    built = get_plugin_manager().hook.flower_human_channel(
        log_path=log, amend_path=brief, max_asks=max_asks, timeout_s=timeout_s
    )
    if built is None:
        built = HumanChannel(log_path=log, amend_path=brief, max_asks=max_asks, timeout_s=timeout_s)
    return built


def _complete(brief: Brief | None) -> bool:
    return brief is not None and brief.complete()


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _brief_block(ctx: Ctx) -> str:
    brief = ctx.get(BRIEF_KEY)
    return brief.prompt_block() if isinstance(brief, Brief) else pick("(没有需求文档)", NO_BRIEF_EN)


__all__ = ["starter_flow", "wake_state", "workbench_for"]
