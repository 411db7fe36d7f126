"""The goal guard: set a goal with checks, then have an independent judge rule each round.

The clarify step guards against building the wrong thing; this guards against "it is
not done, but it says it is". Whoever did the work is optimistic about it (half the
tests run, one place fixed out of three, "should work"), not from dishonesty but
because it cannot see its own blind spots. So a judge that took no part in the work,
in a session of its own, rules after every round:

    work -> judge -- achieved ----> go on
                  -- not yet -----> back to the same work session, with what is missing
                  -- unreachable -> stop and ask the human: accept / change the goal /
                                    you judged wrong

Every ruling, and every time the human overrules one, goes into the judge ledger
(``records/ledger.py``): the store's ``ledger`` table and ``notes/判定记录.md``.

The judge is not a Step: it is a plain ``rt.run`` inside the gate, always a fresh
session, named ``<step>·判定#<n>``, so it never enters the lineage and never continues
a conversation. It does not know how hard the worker tried, so it makes no excuses
for it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.events import Event, EventCallback
from flower.kernel.lang import pick
from flower.plugins import emit
from flower.records.frozen_copy import digest, keep, remember, remembered
from flower.records.ledger import OVERRULED_MARK, override_row, record, rounds_ruled, verdict_row
from flower.roles.factory import judge
from flower.workflow.base import Ctx, Step, StepAbort
from flower.workflow.checking import (
    STUCK_AFTER,
    Stuck,
    ask_when_stuck,
    choice_of,
    failed_by_round,
    prompt_block,
    run_round,
)
from flower.workflow.checking import overrule as hold_to_checks
from flower.workflow.frozen import frozen_step
from flower.workflow.held_out import parse_scripts, replace_scripts
from flower.workflow.verdicts import GOAL_KEY, ROUND_KEY, VERDICT_KEY, Goal, Verdict

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec
    from flower.runtime.runner import StepResult


SET_PROMPT = """\
根据下面这份已经确认的需求,设定这件事的目标和判定清单。只输出两节,标题照抄:

## 目标
一两句话:做成什么样就算完成。

## 判定清单
每行一条检查,每条都是能运行或能亲眼看到结果的检查(写清命令或要看的东西)。
在这个环境里验证不了的条目,在末尾标上 [此环境无法验证:原因]。
能跑的检查尽量写成 flower 自己会跑的样子:行首是反引号里的命令,后面写它必须怎样,例如
- `python -m pytest -q tests/test_cli.py` 退出码为 0
- `python conv.py a.md` 退出码为 0,输出包含 `<h1>`
- 文件 `dist/app.whl` 存在
flower 每一轮都会在一份丢弃式的副本里亲自跑这些命令,跑不过的一律算没达成。

如果有干活的人不该看到的验收脚本(免得照着测试去凑),可以另起一节 `## 暗检脚本`,
每个脚本一个 `### 文件名` 加一个代码块;再在判定清单里写一条
`bash $FLOWER_HELD_OUT/文件名` 退出码为 0,并用一句话说明它验证什么。没有就不写这一节。

需求:

{brief}
"""

CHECK_STATES = ("passed", "failed", "cannot_run")
#: ``ctx[EARLIER_KEY]``: the rounds earlier processes of this run had ruled, so a wake's
#: verdict reads "round 4 (1/3 this time)", never "round 4/3".
EARLIER_KEY = "_goal_rounds_earlier"

#: The store keeps, beside the frozen goal, the hash of the brief it was set from.
SET_FROM = "@brief"

VERIFY_PROMPT = """\
判定这一轮的活做完了没有。

# 目标与判定清单
{goal}

# 干活的一方这一轮的汇报
{report}

汇报只是线索,不是证据。自己去工作区看(能跑命令就跑),逐条核对判定清单;\
找不到证据的条目就是没通过,含糊的一律算没达成。
只输出「结论」「理由」「未通过」三节。
"""

SET_PROMPT_EN = """\
From the requirements below, which have been confirmed, set the goal of this work and its \
checks. Answer with exactly two sections, headings as given:

## Goal
One or two sentences: what it looks like when it is done.

## Checks
One check per line, each something that can be run or seen with your own eyes (name the \
command or what to look at). End an item that cannot be verified in this environment with \
[cannot verify here: why].
Write every check you can as one flower runs itself: the command in backticks first, then \
what it must do, for example
- `python -m pytest -q tests/test_cli.py` exits 0
- `python conv.py a.md` exits 0 and prints `<h1>`
- file `dist/app.whl` exists
flower runs these commands itself after every round, in a throwaway copy; one that fails \
means not achieved.

If there are acceptance scripts the workers should not see (so they build to the goal, not \
to the test), add a section `## Held-out checks`: each script a `### filename` and one code \
block; then list it among the checks as `bash $FLOWER_HELD_OUT/filename` exits 0, with one \
sentence on what it verifies. Leave the section out when there are none.

Requirements:

{brief}
"""

VERIFY_PROMPT_EN = """\
Decide whether this round's work is done.

# Goal and checks
{goal}

# The worker's report on this round
{report}

The report is a lead, not evidence. Look at the workspace yourself (run commands if you \
can) and go through the checks one by one; an item you find no evidence for has not \
passed, and anything vague counts as not achieved.
Answer with the three sections "Verdict", "Reason" and "Failed checks" only.
"""

#: The reason given to the worker when the judge's answer named no state.
VAGUE_REASON = "裁判没有给出明确结论,按未达成处理。"
VAGUE_REASON_EN = "The judge gave no clear verdict; it counts as not achieved."

UNREACHABLE_QUESTION = "The judge found the goal unreachable: {reason}\nWhat now?"
ACCEPT = "Accept this result and go on"
CHANGE = "Change the goal"
MISJUDGED = "The judge is wrong: keep working"
NEW_GOAL_QUESTION = "What is the new goal? (One sentence; it is added to the current goal.)"
#: The label a changed goal is appended to the brief under.
GOAL_CHANGE_LABEL = "修改目标"
GOAL_CHANGE_LABEL_EN = "goal changed"
#: Said in a prompt where a document is missing, by language.
NO_BRIEF = ("(没有需求文档)", "(no requirements document)")
NO_GOAL = ("(没有目标文件)", "(no goal file)")
NO_REPORT = ("(这一轮没有汇报)", "(no report this round)")
NOBODY_ANSWERED = (
    "the judge found the goal unreachable and {why}, so the step stopped"
    " rather than spend more rounds; reason: {reason} (goal: {path})"
)
NO_NEW_GOAL = (
    "the goal was to be changed but no new goal came ({why}), so the step stopped (goal: {path})"
)
#: Why one of the guard's own questions brought no decision, by the ask's state: the
#: human may be right there, and "nobody answered" would be the wrong thing to tell them.
NO_DECISION = {
    "timeout": "nobody answered",
    "declined": "the human skipped the question",
    "over_budget": "no question could be asked: max_asks is used up",
    "cancelled": "the question was cancelled",
}
NO_RUNTIME = "no Runtime in ctx['_runtime'] to judge the goal with: run the step in a Workflow"


def goal_step(
    channel: Any,
    *,
    goal_path: str | Path,
    brief_key: str = "确认需求",
    name: str = "设定目标",
    spec: AgentSpec | None = None,
    instructions: str = "",
    always_set: bool = False,
    on_fail: str = "stop",
    retries: int = 0,
    **spec_kw: Any,
) -> Step:
    """A step in which a judge turns the brief into a goal with checks, frozen on disk.

    Same shape as ``clarify_step``: a complete goal at ``goal_path`` skips the step
    (unless ``always_set``) but is loaded into ``ctx``; the gate parses the answer
    into a :class:`Goal`, writes it (the freeze) and loads it into ``ctx``; ``reduce``
    hands on the parsed goal. Checks marked ``[此环境无法验证:…]`` raise one
    ``Event("task", {"unverifiable", "total", "path"})`` at once: their fate is sealed
    now, and finding out at the verdict costs a whole round of work.

    The judge gets Bash only through ``can_run=True`` in ``spec_kw``. There is no
    ``resume_prompt``: re-setting a goal needs the whole brief again.
    """
    path = Path(goal_path)
    agent = spec or judge(name, channel, instructions=instructions, **spec_kw)

    def announce(goal: Goal, ctx: Ctx) -> None:
        unverifiable = goal.unverifiable
        if unverifiable:
            payload = {"unverifiable": unverifiable, "total": len(goal.checks), "path": str(path)}
            emit(Event("task", payload, step=name), ctx.get("_on_event"))

    def prompt(ctx: Ctx) -> str:
        template = pick(SET_PROMPT, SET_PROMPT_EN)
        return template.format(brief=ctx.get(brief_key) or pick(*NO_BRIEF))

    step = frozen_step(
        name,
        agent,
        prompt,
        document=Goal,
        path=path,
        key=GOAL_KEY,
        always=always_set,
        on_frozen=announce,
        retries=retries,
        on_fail=on_fail,
    )
    frozen, skips = step.gate, step.when
    assert frozen is not None and skips is not None
    mark = f"{path.name}{SET_FROM}"

    def gate(result: StepResult, ctx: Ctx) -> bool:
        if not frozen(result, ctx):  # type: ignore[truthy-bool]
            return False
        runtime = ctx.get("_runtime")
        if runtime is not None:  # the scripts no worker sees, frozen with the goal
            replace_scripts(runtime, parse_scripts(result.text))
            remember(runtime, mark, _brief_text(ctx, brief_key))
        return True

    def when(ctx: Ctx) -> bool:
        """As frozen_step's (a complete goal skips the step), except that a goal set from
        another brief than today's is set again: a remark that amended the brief whose
        re-set failed (the budget, a broken answer) must not leave the old goal standing
        as if it were done."""
        runs = bool(skips(ctx))
        runtime = ctx.get("_runtime")
        if runs or runtime is None:
            return runs
        set_from = remembered(runtime, mark)
        return set_from is not None and set_from != digest(_brief_text(ctx, brief_key))

    return replace(step, gate=gate, when=when)


def _brief_text(ctx: Ctx, brief_key: str) -> str:
    """The brief a goal is set from, as its file holds it (the same whatever language the
    run speaks), else as the step handed it on."""
    from flower.records.sections import load_text

    brief = ctx.get("_brief")
    path = getattr(brief, "path", None)
    text = load_text(path) if path else None
    return text if text is not None else str(ctx.get(brief_key) or "")


def _summed_up(on_event: EventCallback) -> EventCallback:
    """``on_event`` with the ruling's own words marked ``summed_up``: the ``verdict`` event
    that follows says the same (state, reason, failed checks), so a view shows them only
    when asked for everything (``flower -v``); the record keeps them whole."""

    def deliver(event: Event) -> None:
        if event.kind == "text" and not event.payload.get("subagent"):
            event = Event(event.kind, {**event.payload, "summed_up": True}, event.step, event.at)
        on_event(event)

    return deliver


def with_goal(
    step: Step,
    channel: Any,
    *,
    goal_path: str | Path,
    spec: AgentSpec | None = None,
    rounds: int = 3,
    instructions: str = "",
    can_run: bool = False,
    name: str | None = None,
    stuck_after: int = STUCK_AFTER,
    **spec_kw: Any,
) -> Step:
    """``step`` with the goal guard on: a judge rules after every round.

    ``rounds`` is the total number of work rounds (3 = at most two more after the
    first). ``can_run=True`` lets the judge run commands: a harder verdict (its Bash
    sees the workspace read-only in the sandbox). The judge is ``spec`` or
    ``judge(<name>, channel, can_run=…, **spec_kw)``, named ``name`` or ``<step>·判定``.

    Before the judge, flower runs the goal's runnable checks itself
    (:mod:`flower.workflow.checking`): the judge is shown what they showed, and a check
    that failed makes the round ``not_yet`` whatever the judge says. The same checks
    failing ``stuck_after`` rounds in a row (0: never) ask the human what to do, or stop
    the step with ``ctx["_stuck"]`` set (``flower`` exits 4).

    The result is ``dataclasses.replace(step, retries=rounds - 1, gate=…,
    on_reject=…)``: everything else of ``step`` (its ``resume_prompt`` above all) stays.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds is the total number of work rounds: 1 or more, not {rounds!r}")
    if isinstance(stuck_after, bool) or not isinstance(stuck_after, int) or stuck_after < 0:
        raise ValueError(
            f"stuck_after is a number of rounds, 0 (never) or more, not {stuck_after!r}"
        )
    path = Path(goal_path)
    label = name or f"{step.name}·判定"
    stuck = Stuck(after=stuck_after)
    judger = spec or judge(label, channel, instructions=instructions, can_run=can_run, **spec_kw)

    def current_goal(ctx: Ctx) -> Goal:
        goal = ctx.get(GOAL_KEY)
        if isinstance(goal, Goal) and goal.complete():
            return goal
        return Goal.load(path) or Goal()

    async def gate(result: StepResult, ctx: Ctx) -> bool:
        runtime = ctx.get("_runtime")
        if runtime is None:
            raise StepAbort(NO_RUNTIME)
        seed_rounds(ctx)
        round_ = ctx[ROUND_KEY] = int(ctx.get(ROUND_KEY) or 0) + 1
        goal = current_goal(ctx)
        on_event = ctx.get("_on_event")
        ran = await run_round(runtime, goal, step=step.name, round_=round_, on_event=on_event)
        asked = pick(VERIFY_PROMPT, VERIFY_PROMPT_EN).format(
            goal=goal.prompt_block() or pick(*NO_GOAL),
            report=result.text.strip() or pick(*NO_REPORT),
        )
        ruling = await runtime.run(
            judger,
            f"{asked}\n{prompt_block(ran)}\n" if ran else asked,
            step_name=f"{label}#{round_}",
            on_event=None if on_event is None else _summed_up(on_event),
        )
        verdict = Verdict.parse(ruling.text if ruling.ok else "")
        if not ruling.ok:
            verdict.reason = pick(
                f"裁判这一轮没能完成判定({ruling.error}),按未达成处理。",
                f"The judge could not finish this round's ruling ({ruling.error});"
                " it counts as not achieved.",
            )
        elif not verdict.ok:  # vague: never a pass; say so, keep what the judge did say
            said, vague = verdict.reason.strip(), pick(VAGUE_REASON, VAGUE_REASON_EN)
            quoted = pick(f"裁判的原话:{said}", f" The judge's own words: {said}")
            verdict.reason = vague + quoted if said else vague
        by = hold_to_checks(verdict, ran)  # what the checks showed outranks what was said
        ctx[VERDICT_KEY] = verdict
        report = {
            "round": round_,
            "rounds": rounds,
            "earlier": int(ctx.get(EARLIER_KEY) or 0),
            "state": verdict.state,
            "reason": verdict.reason,
            "failed": list(verdict.failed),
            "session_id": ruling.session_id,
            "cost_usd": ruling.cost_usd,
            "overruled_by": by.index if by is not None else None,
            "checks": {state: sum(1 for r in ran if r.state == state) for state in CHECK_STATES},
        }
        emit(Event("verdict", report, step=step.name), on_event)
        row = verdict_row(
            step.name, round_, verdict, cost_usd=ruling.cost_usd, session_id=ruling.session_id
        )
        if by is not None:
            row["said"] = f"{OVERRULED_MARK}{by.index}"
        record(runtime, row)
        if verdict.achieved:
            return True
        if ran and stuck.after and stuck.see(ran):
            return await ask_when_stuck(channel, stuck, ran, ctx)
        if not verdict.unreachable:
            return False

        def overrule(choice: str, said: str) -> None:
            payload = {"round": round_, "choice": choice, "said": said}
            emit(Event("override", payload, step=step.name), on_event)
            record(runtime, override_row(step.name, round_, choice, said))

        return await _ask_about_unreachable(channel, verdict, goal, path, ctx, overrule)

    def on_reject(result: StepResult, ctx: Ctx) -> str:
        verdict = ctx.get(VERDICT_KEY)
        return verdict.feedback() if isinstance(verdict, Verdict) else ""

    def seed_rounds(ctx: Ctx) -> None:
        """Count on from the rounds earlier processes of this run had ruled (the store's
        ledger): a wake numbers its first round after them, never "round 1" again; and
        the checks they failed, so "stuck" counts rounds across wakes too."""
        if ROUND_KEY not in ctx:
            ctx[ROUND_KEY] = ctx[EARLIER_KEY] = rounds_ruled(ctx.get("_runtime"), step.name)
            stuck.rounds[:] = failed_by_round(ctx.get("_runtime"), step.name)

    async def when(ctx: Ctx) -> bool:
        seed_rounds(ctx)  # before the work round: its refusals belong to the right round
        if step.when is None:
            return True
        decided = step.when(ctx)
        return bool(await decided) if inspect.isawaitable(decided) else bool(decided)

    return replace(step, retries=rounds - 1, gate=gate, on_reject=on_reject, when=when)


async def _ask_about_unreachable(
    channel: Any,
    verdict: Verdict,
    goal: Goal,
    path: Path,
    ctx: Ctx,
    overrule: Callable[[str, str], None],
) -> bool:
    """The framework's own decision point: ask the human what an unreachable goal means.

    Whatever the human decides is an override of the ruling, and ``overrule(choice,
    said)`` puts it in the judge ledger: ``accept``, ``change_goal`` (with the new goal)
    or ``misjudged`` (with the human's words when they typed more than the option).
    """
    reason = verdict.reason.strip() or "(no reason given)"
    options = [ACCEPT, CHANGE, MISJUDGED]
    ask = await channel.ask(UNREACHABLE_QUESTION.format(reason=reason), options)
    if ask.state != "answered":
        raise StepAbort(NOBODY_ANSWERED.format(why=_why(ask.state), reason=reason, path=path))
    answer = (ask.answer or "").strip()
    choice = choice_of(answer, options)
    if choice == ACCEPT:
        overrule("accept", "")
        return True
    if choice == CHANGE:
        new = await channel.ask(NEW_GOAL_QUESTION)
        text = (new.answer or "").strip() if new.state == "answered" else ""
        if not text:
            raise StepAbort(NO_NEW_GOAL.format(why=_why(new.state), path=path))
        goal.amend(text).write(path)
        if ctx.get("_runtime") is not None:  # the human's change is the frozen goal now
            keep(ctx["_runtime"], path)
        ctx[GOAL_KEY] = goal
        overrule("change_goal", text)
        # In the brief too: a wake with a remark sets the goal again from the brief, and
        # a change kept only in 目标.md would be overwritten without a trace.
        amend = getattr(channel, "amend", None)
        if callable(amend):
            amend(text, label=pick(GOAL_CHANGE_LABEL, GOAL_CHANGE_LABEL_EN))
        verdict.reason = (
            pick(
                "人修改了目标。按新的目标接着做:",
                "The human changed the goal. Carry on towards it:",
            )
            + f"\n\n{goal.prompt_block()}"
        )
        return False
    said = "" if choice == MISJUDGED else pick(f"人的原话:{answer}", f" In their words: {answer}")
    overrule("misjudged", "" if choice == MISJUDGED else answer)
    verdict.reason = (
        pick(
            "人认为目标能达成,是裁判判错了,接着做。",
            "The human thinks the goal can be met and the judge got it wrong: keep working.",
        )
        + said
    )
    return False


def _why(state: str) -> str:
    return NO_DECISION.get(state, f"the question ended {state!r}")


__all__ = ["GOAL_KEY", "ROUND_KEY", "VERDICT_KEY", "goal_step", "with_goal"]
