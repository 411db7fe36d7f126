"""What the walls say: every deny text a guard returns, and the pointer left for a spilled
result, in Chinese (the seed's) and English.

A refused call reaches the model as an error tool result holding one of these texts, so
the text has one job: say that the refusal is deliberate and what to do instead (write
the conclusion in the reply, hand the work to a worker), or the model rephrases the call
five times. The English texts address the model as "you" and name no role: role names
are keys (``干活·判定``) and would put Chinese into an English prompt.

:data:`REFUSAL_MARKS` holds one phrase of each text in both languages: the Runtime tells
a refused call from a tool that failed by them (``walls.is_refusal``), whatever the
language of the run that wrote the transcript.
"""

from __future__ import annotations

from pathlib import Path

from flower.kernel.lang import EN, current

__all__ = [
    "GLANCE_REASON",
    "GLANCE_REASON_EN",
    "REFUSAL_MARKS",
    "SPILL_HEAD",
    "confined_text",
    "counting_text",
    "delegate_text",
    "dispatch_text",
    "glance_reason",
    "missing_text",
    "reach_text",
    "remote_text",
    "spill_pointer",
    "state_text",
    "stranger_text",
]

#: Characters of a spilled result kept in the conversation after the pointer.
SPILL_HEAD = 400

GLANCE_REASON = "只读的一次性查看(glance),协调者可以自己跑"
GLANCE_REASON_EN = "a read-only one-off look (a glance): the coordinator may run it itself"

#: One phrase of every refusal, flower's in both languages and the CLI's own for a tool the
#: session does not have.
REFUSAL_MARKS: tuple[str, ...] = (
    "工具。这是有意为之",  # missing_text, the whitelist guard's text
    "只能派给自己的 worker",  # dispatch_text
    "只在这台机器上干活",  # remote_text
    "它不能用任何工具",  # stranger_text
    "主线程不亲自动手",  # the delegate guard's text
    "是 flower 自己的记录",  # state_text
    "在工作区以外、藏起来的地方",  # reach_text
    "数匹配次数或只列文件名",  # counting_text
    "隔离的 worker 只在自己的 worktree 里写",  # confined_text
    "This is on purpose, not a gap in the configuration",  # missing_text (English)
    "hand work only to your own workers",  # dispatch_text
    "workers run only on this machine",  # remote_text
    "so it may use no tool at all",  # stranger_text
    "The main thread does not do the work itself",  # delegate_text
    "is flower's own record",  # state_text
    "lies outside the workspace, where",  # reach_text
    "Counting matches or listing files over",  # counting_text
    "An isolated worker writes only in its own worktree",  # confined_text
    "No such tool available",  # the CLI: a tool outside the session's tool set
)


def _english() -> bool:
    return current() == EN


def missing_text(who: str, tool: str) -> str:
    """A thread asked for a tool its role does not list (the whitelist guard, the wall)."""
    if _english():
        return (
            f"You have no {tool} tool. This is on purpose, not a gap in the configuration."
            " Write your conclusion in the body of your reply, where the framework picks it"
            " up; do not try to get around this with other wording or another tool."
        )
    return (
        f"{who}没有 {tool} 工具。这是有意为之,不是配置里漏掉了。"
        "把你的结论直接写在回复正文里,框架会从那里取走;"
        "不要换一种说法或换一个工具去绕开这条限制。"
    )


def dispatch_text(role: str, wanted: str, workers: list[str]) -> str:
    """``Agent`` was asked to start something other than one of the role's workers."""
    if _english():
        names = ", ".join(workers) if workers else "(none)"
        return (
            f"You may hand work only to your own workers: {names}. {wanted} is not one of"
            " them: the built-in general-purpose, claude, fork, Explore and Plan, and agents"
            " the project or the user defined, cannot be started. Give the task to one of"
            " the workers above, with its goal and acceptance criteria."
        )
    names = "、".join(workers) if workers else "(没有)"
    return (
        f"{role}只能派给自己的 worker:{names}。{wanted} 不在其中:内置的 general-purpose、"
        "claude、fork、Explore、Plan,以及项目或用户自己定义的 agent 都不能派。"
        "把任务交给上面的某个 worker,写清目标和验收标准。"
    )


def remote_text(role: str, isolation: str) -> str:
    """A worker was to run remotely (``isolation: "remote"``)."""
    if _english():
        return (
            f"Your workers run only on this machine (isolation={isolation} is not allowed):"
            " a remote session is outside flower's budget, records and walls. Drop isolation"
            " and hand the task out again."
        )
    return (
        f"{role}的 worker 只在这台机器上干活(isolation={isolation} 不行):远程会话不在 flower 的"
        "预算、记录和拦截之内。去掉 isolation 再派一次。"
    )


def stranger_text(role: str, agent_type: str) -> str:
    """A subagent that is none of the role's workers called a tool."""
    if _english():
        return (
            f"This subagent ({agent_type}) is not one of the workers this role may start, so"
            " it may use no tool at all. Stop, and write what you already know in your reply."
        )
    return (
        f"这个 subagent({agent_type})不是{role}派出的 worker,它不能用任何工具。"
        "停下来,把你已经知道的写进回复。"
    )


def delegate_text(tool: str, *, artifacts: str, glance: bool, why: str | None = None) -> str:
    """The delegate guard's deny text; ``why`` (first, so it is read) says why a command
    was no glance."""
    if _english():
        text = (
            f"The main thread does not do the work itself (this time {tool} was refused)."
            " Start a subagent with the Agent tool to do it: give the task its goal and"
            f" acceptance criteria, and ask it to write long output into {artifacts} and to"
            " reply with the path and its conclusion only."
        )
        if glance:
            text += (
                " A read-only one-off look (git status, ls, cat of a file) you may run with"
                " Bash yourself, without a worker."
            )
        if why:
            text = (
                f"This command is not a read-only look: {why}. If it can be written read-only,"
                " run that yourself; otherwise hand it to a worker. " + text
            )
        return text
    text = (
        f"主线程不亲自动手(这次被拦下的是 {tool})。用 Agent 工具派一个 subagent 去做:"
        "在任务里写清目标和验收标准,并要求它把长输出写进 "
        f"{artifacts},回复里只给路径和结论。"
    )
    if glance:
        text += "只读的一次性查看命令(如 git status、ls、cat 某个文件)可以直接用 Bash 跑,不用派人。"
    if why:
        text = f"这条命令不算只读查看:{why}。能改成只读的写法就自己重跑,否则派人。" + text
    return text


def state_text(path: str) -> str:
    """A write into flower's own state (the store, the frozen brief and goal, the ledger)."""
    if _english():
        return (
            f"{path} is flower's own record of this run (its store, the frozen requirements"
            " and goal, the judge's ledger): no agent may change it. Change the requirements"
            " or the goal by saying so in your reply; write your own notes elsewhere."
        )
    return (
        f"{path} 是 flower 自己的记录(会话库、冻结的需求和目标、裁判记录),任何 agent 都不能改。"
        "要改需求或目标,在回复里说出来;自己的笔记写到别处。"
    )


def reach_text(path: str) -> str:
    """A read of a hidden folder (a home, the system's secrets)."""
    if _english():
        return (
            f"{path} lies outside the workspace, where flower hides credentials (SSH keys,"
            " cloud and API logins): no agent reads there. Work from the workspace; if the"
            " task truly needs a file from there, say so in your reply."
        )
    return (
        f"{path} 在工作区以外、藏起来的地方(SSH 密钥、云和 API 的登录凭据都在这类地方),"
        "任何 agent 都不读。在工作区里干活;任务真的需要那里的文件,在回复里说出来。"
    )


def counting_text(path: str) -> str:
    """A counting or file-listing Grep over a scope that holds the run's keys (.env)."""
    if _english():
        return (
            f"Counting matches or listing files over {path} is refused: it holds a file with"
            " the run's keys, and a count cannot be redacted. Use output_mode content (what"
            " it prints is redacted), or search a path that holds no .env file."
        )
    return (
        f"对 {path} 数匹配次数或只列文件名不行:那里有存着密钥的文件,次数没法隐去。"
        "用 output_mode content(打印出来的内容会隐去密钥),或者搜一个没有 .env 的路径。"
    )


def confined_text(names: list[str], moved_to: str, worktree: str) -> str:
    """An isolated worker's command created ``names`` at the top of the shared checkout;
    flower moved them to ``moved_to``."""
    listed = ", ".join(names)
    if _english():
        return (
            f"An isolated worker writes only in its own worktree ({worktree}). This command"
            f" created {listed} in the shared checkout; flower moved it to {moved_to}. Do it"
            " again inside your worktree, with paths relative to it."
        )
    return (
        f"隔离的 worker 只在自己的 worktree 里写({worktree})。这条命令在共享的工作区里建了"
        f" {listed},flower 已把它挪到 {moved_to}。在你自己的 worktree 里重做,路径相对于它。"
    )


def glance_reason() -> str:
    """Why a glance was let through (the allow decision's reason)."""
    return GLANCE_REASON_EN if _english() else GLANCE_REASON


def spill_pointer(path: Path, original: str) -> str:
    """What stays in the conversation of a result spilled to ``path``: a pointer and the
    first :data:`SPILL_HEAD` characters."""
    head = original[:SPILL_HEAD]
    if _english():
        return (
            f"[The result was too long ({len(original)} characters); all of it is saved at"
            f" {path} . Read that file with Read when you need all of it; below are only the"
            f" first {len(head)} characters]\n{head}"
        )
    return (
        f"[结果太长({len(original)} 字),全文已存到 {path} 。"
        f"需要全文就用 Read 读这个文件;下面只是前 {len(head)} 字]\n{head}"
    )
