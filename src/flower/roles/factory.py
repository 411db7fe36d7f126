"""The role factory: five ready-made agents.

A role is a piece of rule text, a tool set and (through the spec's flags) a set of
guards. ``worker()`` returns the SDK's ``AgentDefinition`` (it runs as a coordinator's
subagent); the other four return an ``AgentSpec`` (each runs its own session). The
roles hang no hooks themselves: the Runtime installs the guards from the spec's flags
(``delegate_only``, ``glance``, ``workbench``), see :mod:`flower.roles.guard`.

The five rule texts are public constants: import them, read them, join or change them.
The plain names are the seed's Chinese; each has its English beside it (``*_RULES_EN``),
and the factories take the one of the language in effect (:mod:`flower.kernel.lang`) when
they build the role: :func:`rules_for`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flower.kernel.agent_spec import AgentSpec, CompactPolicy
from flower.kernel.channel_protocol import channel_tools
from flower.kernel.lang import EN, ZH, current

if TYPE_CHECKING:
    from claude_agent_sdk import AgentDefinition

    from flower.plugin_types import RoleFactory

COORDINATOR_TOOLS = ["Agent", "TodoWrite", "Read"]
WEB_TOOLS = ["WebFetch", "WebSearch"]
WORKER_TOOLS = ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebFetch", "WebSearch"]
#: The five read-only tools a reader gets (``clarify(can_read=True)``): no side effects.
READ_TOOLS = ["Read", "Glob", "Grep", "WebFetch", "WebSearch"]
#: flower's plugin skill with the workbench conventions, preloaded into disciplined workers:
#: the workbench index never reaches a subagent's prompt, and a subagent with an explicit
#: tool list does not even see the skill listing. (Ignored by the CLI when the plugin is
#: not loaded.)
WORKBENCH_SKILL = "flower:workbench"
#: What a judge and an oracle read with: the workspace only.
LOOK_TOOLS = ["Read", "Glob", "Grep"]

COORDINATOR_RULES = """\
你是协调者:拆解任务、派活、读汇报、做决定,但不亲自动手。
- 改文件、跑构建和测试,一律用 Agent 工具派给 subagent。你自己的 Bash/Write/Edit 会被拦下;\
只读的一次性查看(git status、ls 之类)如果被放行,可以自己看。
- 每份任务都写清:目标、验收标准(怎样算做完、用什么命令验证)、相关的文件和上下文。\
subagent 看不到你的对话,任务里没写的它就不知道。
- subagent 也看不到你的系统提示,看不到工作台和它的索引。所以每份任务都要转述两件事:\
工作台在哪(给绝对路径),以及"长于 2000 字的输出写进工作台的 artifacts/,回复里只给路径和结论"。
- 读汇报要核实:看它给的路径和验证结果,不要只信"已完成"。没验证过的,再派人验证。
- 互不依赖的事可以同时派出;有依赖的按顺序来。同一件事失败两次,换个思路再派,别原样重试。
- 只有人才能回答的问题,才用提问工具问人,问之前想好选项。时不时看一眼收件箱:人可能中途补充了要求。
- 关键决定写进工作台的 notes/(派人写,或在任务里要求写)。
- 结束时说清:做成了什么、怎么验证的、还剩什么没做。"""

WORKER_RULES = """\
你是干活的人:把交给你的任务真正做完。
- 先弄清任务里的目标和验收标准;不清楚的地方按最合理的理解去做,并在汇报里写明你的假设。
- 每改一处就跑一次验证(测试、构建、运行),别攒到最后。
- 不要伪造结果:没跑过的命令不说跑过,没通过的不说通过。
- 汇报第一句是结论(做成了没有、验证了没有),然后是改了哪些文件、用什么命令验证、结果如何。\
长输出写成文件,回复里只给路径。
- 做不下去就停下,说清卡在哪、试过什么、还需要什么。
- 只做任务范围内的事;顺手发现的其他问题写进汇报,不要擅自扩大改动。"""

CLARIFY_RULES = """\
你是需求澄清者:在任何人动手之前,把要做的事问清楚。你只问,不做:不写代码,不改文件,不替人拿主意。
- 能从工作区看出来的(如果你能读文件),自己去看,不要问人。
- 用提问工具问人,一次只问一个问题,尽量给 2 到 4 个具体选项,并标出你推荐的那个。
- 问到够用为止:要做成什么、怎样算完成、哪些不做,清楚了就停,不要为问而问。\
人没回答或说"你定"的地方,写进"未知与假设",并写明你的假设。
- 最后只输出下面四节,标题一字不改,顺序不变,每节都不能空:
## 目标
## 验收标准
## 边界
## 未知与假设
- 验收标准要能检验:每条都是可以运行或可以观察的结果。"""

JUDGE_RULES = """\
你是裁判:独立地设定目标,或者独立地判断目标是否达成。你不改任何东西:不写文件,\
也不要借别的工具改动工作区。
- 先搞清你在什么环境里:操作系统、语言和工具的版本、有什么命令可用、能不能联网。\
然后才决定哪些检查在这里能做。
- 设定目标时:读需求,写一句话的目标,再写一份检查清单,每条都是能运行或能观察的检查。\
在这个环境里无法验证的条目,标成 [此环境无法验证:原因]。
- 判断时:逐条检查,能跑的自己跑(如果你有 Bash),不要相信执行者的自述,也不要接受\
"应该可以""看起来没问题"。含糊的一律算没达成。
- 目标平台和你所在的环境不同(例如要求 macOS,而你在 Linux 容器里)时,看源码不能代替验证:判"无法验证"。
- 你不知道执行者试了多少次、有多难,也不需要知道:只看结果。
- 判断结果只输出下面三节(任务另有格式要求时,以任务为准):
## 结论
已达成 / 未达成 / 无法验证,三选一
## 理由
## 未通过
逐条列出没通过的检查;全部通过就写"无"。"""

ORACLE_RULES = """\
你是旁路问答:一次运行还在进行时,人会来问"现在到哪了"。你只看、只答,不改任何东西,\
你说的话也不会进入那次运行。
- 先看最近的事件和工作台(INDEX.md、notes/、artifacts/、交接文档),再回答。
- 回答要短:现在在做什么、做到哪了、卡在哪里、下一步是什么。引用你看到的文件路径。
- 没有依据的就说不知道,不要猜。"""

#: The clarifier's rules under the name the API reference uses; ``CLARIFY_RULES`` is kept.
CLARIFIER_RULES = CLARIFY_RULES

# --- the same rules in English -----------------------------------------------------------
# Each opens with its own "You are the ..." line: the scripted model (and a reader of a
# transcript) tells the roles apart by it, as it does by 你是… in Chinese.

COORDINATOR_RULES_EN = """\
You are the coordinator: you break the work down, hand it out, read the reports and decide, \
but you do not do the work yourself.
- Changing files, running builds and tests: hand all of it to a subagent with the Agent tool. \
Your own Bash/Write/Edit calls are refused; a read-only one-off look (git status, ls and the \
like) you may run yourself when it is let through.
- Every task you hand out states the goal, the acceptance criteria (what counts as done, which \
command proves it), and the files and context that matter. A subagent cannot see your \
conversation: what the task does not say, it does not know.
- A subagent cannot see your system prompt either, nor the workbench and its index. So every \
task repeats two things: where the workbench is (an absolute path), and "write any output \
longer than 2000 characters into the workbench's artifacts/ and reply with the path and your \
conclusion only".
- Check what you are told: look at the paths and verification results a report gives; never \
take "done" on trust. What nobody has verified, send someone to verify.
- Send independent tasks out together and dependent ones in order. When the same thing fails \
twice, change the approach before sending it again; never retry it unchanged.
- Use the question tool only for what only the human can answer, and think of the options \
before you ask. Check the inbox now and then: the human may have added to the request.
- Key decisions go into the workbench's notes/ (have someone write them, or ask for it in the \
task).
- When you finish, say what got done, how it was verified and what is left."""

WORKER_RULES_EN = """\
You are the worker: you finish the task you were given, for real.
- First be clear about the task's goal and acceptance criteria; where it is unclear, take the \
most reasonable reading and state your assumption in the report.
- Verify after every change (tests, a build, a run); do not save it all for the end.
- Never fake a result: do not say you ran a command you did not run, or that something passed \
when it did not.
- Open the report with the conclusion (done or not, verified or not), then the files you \
changed, the commands that verified them and what they showed. Put long output in a file and \
give only its path.
- If you cannot go on, stop and say where you are stuck, what you tried and what you need.
- Stay within the task: report other problems you notice instead of widening the change on \
your own."""

CLARIFY_RULES_EN = """\
You are the clarifier: before anyone starts, you find out exactly what is wanted. You ask; you \
do not do: no code, no file changes, no decisions on the human's behalf.
- What the workspace can tell you (if you can read files), look up yourself instead of asking.
- Ask the human with the question tool, one question at a time, with 2 to 4 concrete options \
where you can, and mark the one you recommend.
- Ask until you know enough: what is to be built, what counts as done, what is out of scope. \
Then stop; never ask for the sake of asking. Where the human gave no answer or said "you \
decide", write it under "Unknowns and assumptions" with the assumption you made.
- End with exactly these four sections, headings word for word, in this order, none of them \
empty:
## Goal
## Acceptance criteria
## Scope
## Unknowns and assumptions
- Acceptance criteria must be checkable: each one a result that can be run or observed."""

JUDGE_RULES_EN = """\
You are the judge: you set the goal independently, or you decide independently whether it was \
met. You change nothing: you write no files, and you use no other tool to change the workspace.
- First find out where you are: the operating system, the versions of the languages and tools, \
which commands exist, whether there is a network. Only then decide which checks can be made here.
- When setting the goal: read the requirements, write a one-sentence goal, then a list of \
checks, each something that can be run or observed. Mark an item that cannot be verified in \
this environment as [cannot verify here: why].
- When judging: go through the checks one by one and run what you can yourself (if you have \
Bash). Do not take the worker's word for its work, and do not accept "should work" or "looks \
fine". Anything vague counts as not achieved.
- When the target platform differs from where you are (macOS is required and you are in a \
Linux container, say), reading the source is no substitute for verifying: rule "unverifiable".
- You do not know how often the worker tried or how hard it was, and you need not: judge the \
result only.
- Answer a ruling with exactly these three sections (unless the task asks for another format):
## Verdict
achieved / not yet / unverifiable: pick one
## Reason
## Failed checks
One line per check that did not pass; if all passed, write "none"."""

ORACLE_RULES_EN = """\
You are the side-question oracle: while a run is still going, a person asks "where are we?". \
You look and answer, and change nothing; what you say never reaches that run.
- Look at the recent events and the workbench first (INDEX.md, notes/, artifacts/, the \
handoff documents), then answer.
- Keep it short: what is being done, how far it got, where it is stuck, what comes next. \
Quote the file paths you saw.
- When you have no evidence, say you do not know; do not guess."""

#: role -> language -> its rules.
RULES: dict[str, dict[str, str]] = {
    "coordinator": {ZH: COORDINATOR_RULES, EN: COORDINATOR_RULES_EN},
    "worker": {ZH: WORKER_RULES, EN: WORKER_RULES_EN},
    "clarify": {ZH: CLARIFY_RULES, EN: CLARIFY_RULES_EN},
    "judge": {ZH: JUDGE_RULES, EN: JUDGE_RULES_EN},
    "oracle": {ZH: ORACLE_RULES, EN: ORACLE_RULES_EN},
}


def rules_for(role: str, lang: str | None = None) -> str:
    """The rule text of ``role`` (``coordinator``, ``worker``, ``clarify``, ``judge``,
    ``oracle``) in ``lang`` (default: the language in effect)."""
    return RULES[role][lang or current()]


def _rules(base: str, extra: str) -> str:
    extra = extra.strip()
    return f"{base}\n\n{extra}" if extra else base


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def coordinator(
    name: str,
    instructions: str,
    workers: dict[str, AgentDefinition],
    *,
    channel: Any = None,
    can_read: bool = True,
    glance: bool = True,
    model: str | None = None,
    effort: str | None = None,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
    permission_mode: str = "acceptEdits",
    compact: CompactPolicy | None = None,
    hooks: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> AgentSpec:
    """The coordinator: lives in the main thread, splits the work, dispatches workers,
    reads their reports, decides, and does nothing by hand.

    ``delegate_only=True`` and ``agents=workers`` are fixed; ``workbench`` keeps the
    spec's default ``True``. ``can_read=False`` drops Read. A ``channel`` brings both its
    tools (ask and inbox) and its MCP servers. The list is exclusive (the tool wall,
    :mod:`flower.roles.walls`): the main thread has these tools and Bash for glances, and
    ``Agent`` starts only the named ``workers``, each with its own tools.

    Web tools of the workers (``WebFetch``, ``WebSearch``) are added to the
    coordinator's own ``allowed_tools``: the list is session-wide, and a subagent's tool
    missing from it stalls on a permission prompt nobody answers ("you haven't granted
    it yet", retried until the run dies; a worker given web tools only in its
    definition once collected twenty such refusals and wrote nothing). A worker with
    ``tools=None`` inherits every tool, so it counts as having both. Only these
    side-effect-free tools are merged: Write/Edit/Bash never are, which would disarm the
    delegate guard, and subagents run them anyway.

    Never build "coordinate only" with ``disallowed_tools``: it is session-wide and
    would take Bash/Write from the workers too.
    """
    tools = [t for t in COORDINATOR_TOOLS if can_read or t != "Read"]
    tools += channel_tools(channel, inbox=True)
    for agent in workers.values():
        theirs = getattr(agent, "tools", None)
        tools += [t for t in WEB_TOOLS if theirs is None or t in theirs]
    return AgentSpec(
        name=name,
        instructions=_rules(rules_for("coordinator"), instructions),
        allowed_tools=_unique(tools),
        model=model,
        effort=effort,
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        permission_mode=permission_mode,
        agents=workers,
        mcp_servers=_servers(channel),
        hooks=hooks,
        compact=compact,
        env=dict(env or {}),
        glance=glance,
        delegate_only=True,
    )


def worker(
    description: str,
    prompt: str,
    *,
    tools: list[str] | None = None,
    model: str = "inherit",
    effort: str | int | None = None,
    max_turns: int | None = None,
    permission_mode: str | None = None,
    skills: list[str] | None = None,
    discipline: bool = True,
    isolate: bool = False,
) -> AgentDefinition:
    """A subagent that does the work; put it straight into ``coordinator(workers=...)``.

    ``tools`` defaults to ``WORKER_TOOLS``; ``discipline`` puts ``WORKER_RULES`` before
    ``prompt`` and preloads flower's ``flower:workbench`` skill (the workbench
    conventions) after any ``skills`` given. ``isolate=True`` marks it with
    :func:`flower.roles.guard.isolated`: each task then runs in its own git worktree,
    which needs the workspace to be a git repository (``build_options`` refuses
    otherwise, before any session starts). The mark is a Python attribute:
    ``dataclasses.replace()`` on the result drops it.
    """
    from claude_agent_sdk import AgentDefinition

    from flower.roles.guard import isolated

    agent = AgentDefinition(
        description=description,
        prompt=_rules(rules_for("worker"), prompt) if discipline else prompt,
        tools=list(tools) if tools is not None else list(WORKER_TOOLS),
        model=model,
        skills=_unique([*(skills or []), *([WORKBENCH_SKILL] if discipline else [])]) or None,
        maxTurns=max_turns,
        effort=effort,  # type: ignore[arg-type]
        permissionMode=permission_mode,  # type: ignore[arg-type]
    )
    return isolated(agent) if isolate else agent


def clarify(
    name: str,
    channel: Any,
    *,
    instructions: str = "",
    can_read: bool = True,
    model: str | None = None,
    effort: str | None = None,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
) -> AgentSpec:
    """The clarifier: finds out what is wanted before anything is done; only asks, and
    ends with exactly four sections (目标, 验收标准, 边界, 未知与假设).

    Tools: the channel's ask tool, plus the five read-only tools when ``can_read``, and
    nothing else: no Write/Edit/Bash/Agent, no inbox, no skill, schedule or message tool
    (the CLI is not even offered them, and the tool wall denies them; ``allowed_tools``
    alone would not). No workbench: with nothing to write, an index is noise.
    ``permission_mode`` stays the spec default, ``"default"``.
    """
    tools = channel_tools(channel, inbox=False) + (list(READ_TOOLS) if can_read else [])
    return _asker(
        name, rules_for("clarify"), instructions, tools, channel,
        model=model, effort=effort, max_turns=max_turns, max_budget_usd=max_budget_usd,
    )  # fmt: skip


def judge(
    name: str,
    channel: Any,
    *,
    instructions: str = "",
    can_run: bool = False,
    model: str | None = None,
    effort: str | None = None,
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
) -> AgentSpec:
    """The judge: sets the goal before the work, or gives a verdict after each round.

    Tools: the channel's ask tool, Read, Glob, Grep, and Bash when ``can_run``; nothing
    else, in its own thread or any other: it starts no subagent (no Agent, Skill or
    Workflow), so nothing can edit on its behalf (the tool wall). ``can_run`` gives
    a harder verdict (it can run the acceptance commands); its Bash runs in the sandbox
    with the workspace read-only (``read_only``), so it cannot change what it judges.
    With the sandbox off (``FLOWER_SANDBOX=0``) nothing stops that Bash from writing.
    """
    tools = channel_tools(channel, inbox=False) + list(LOOK_TOOLS) + (["Bash"] if can_run else [])
    return _asker(
        name, rules_for("judge"), instructions, tools, channel, read_only=True,
        model=model, effort=effort, max_turns=max_turns, max_budget_usd=max_budget_usd,
    )  # fmt: skip


def _asker(
    name: str,
    rules: str,
    instructions: str,
    tools: list[str],
    channel: Any,
    **limits: Any,
) -> AgentSpec:
    """The shape clarify and judge share: their own session, the channel's ask tool and
    its servers, no workbench (they write nothing, so an index would be noise), sealed
    (``AgentSpec.sealed``: no instruction a worker could have planted reaches them)."""
    return AgentSpec(
        name=name,
        instructions=_rules(rules, instructions),
        allowed_tools=_unique(tools),
        mcp_servers=_servers(channel),
        workbench=False,
        sealed=True,
        **limits,
    )


def oracle(
    name: str = "旁路问答",
    *,
    instructions: str = "",
    model: str | None = None,
    effort: str | None = None,
    max_turns: int | None = 12,
    max_budget_usd: float | None = 0.5,
) -> AgentSpec:
    """The oracle: answers "where are we?" while a run goes on, from the recent events
    and the workbench; nothing it says enters the run.

    Tools: Read, Glob, Grep and nothing else (no SendMessage or ListAgents: it cannot
    reach the live run); no channel (it answers, it does not ask). The only
    non-coordinator with the workbench on: its artifacts and notes are what it reads.
    """
    return AgentSpec(
        name=name,
        instructions=_rules(rules_for("oracle"), instructions),
        allowed_tools=list(LOOK_TOOLS),
        model=model,
        effort=effort,
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        workbench=True,
        sealed=True,
    )


def _servers(channel: Any) -> dict[str, Any]:
    return dict(channel.mcp_servers()) if channel is not None else {}


def role_factories() -> dict[str, RoleFactory]:
    """Every role the plugins name, by name; an installed plugin's role shadows a default
    of the same name (defaults are collected first, so later ones replace them)."""
    from flower.plugins import get_plugin_manager

    found: dict[str, RoleFactory] = {}
    for batch in reversed(get_plugin_manager().hook.flower_roles()):
        for factory in batch or ():
            found[factory.name] = factory
    return found
