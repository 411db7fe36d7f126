"""The words a resumed coordinator reads about the workers an outage cut off.

In the language in effect (:mod:`flower.kernel.lang`: the seed's Chinese, or English), and
bounded: a night's outage can cut off a
dozen workers with hundreds of calls, and the report rides on the resume prompt, so each
part has a cap (workers, files, commands, calls, characters) and the whole text one more.
What is left out is counted, never silently dropped, and the closing instruction always
survives the cut.

The report quotes the workers' own transcripts; it is not their report and nothing in it
has been checked, which the text says. Every call without a recorded result is worded as
the pruning store words it in a resumed context: it may or may not have taken effect,
verify (:data:`flower.stores.prune.UNSURE`).

:func:`cut_off_report` is the Runtime's entry: it reads what was cut off
(:mod:`flower.runtime.cutoff`, which holds the data and never imports these words) and
words it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from flower.kernel.lang import pick
from flower.kernel.text import one_line
from flower.runtime.cutoff import Call, Cutoff, Worker, can_message, read_cut_off
from flower.stores.prune import UNSURE, UNSURE_EN

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec

__all__ = ["MAX_CHARS", "cut_off_report", "render"]

#: Workers described in full; the rest are named by id only.
MAX_WORKERS = 6
MAX_FILES = 12
MAX_COMMANDS = 6
#: The newest calls shown per worker, each with the start of its result.
RECENT_CALLS = 5
CALL_CHARS = 160
RESULT_CHARS = 160
PROMPT_CHARS = 400
TEXT_CHARS = 300
#: The coordinator's own calls without a result that are listed.
MAX_OWN_CALLS = 8
#: Calls without a result listed per worker.
MAX_CUT = 8
#: The whole report, closing instruction included.
MAX_CHARS = 6000

HEAD = (
    "【被中断的 subagent】中断发生时,下面这些 subagent 还在干活,它们的汇报没能送到你这里。"
    "以下摘自它们自己的记录,不是汇报,也没有人核实过:"
)
OWN_HEAD = f"【你自己被中断的调用】下面这些调用在中断时还没有结果,{UNSURE}:"
CLOSING = (
    "接下来:先核实上面这些改动(看文件、跑验证),再决定接着做、重派还是撤销。"
    "已经落盘的部分不要从头重做,半成品也不要当成做完了。"
)
CUT = "\n   …(太长,后面的略去了;完整记录在 session store 里)"

HEAD_EN = (
    "[Subagents cut off] When the interruption came, these subagents were still working,"
    " and their reports never reached you. What follows is taken from their own records: it"
    " is not their report, and nobody has checked it:"
)
OWN_HEAD_EN = f"[Your own calls cut off] These calls had no result when it came: each {UNSURE_EN}:"
CLOSING_EN = (
    "Next: verify the changes above first (look at the files, run the checks), then decide"
    " whether to carry on, hand the task out again or undo it. Do not redo from scratch what"
    " is already saved, and do not take half-done work for done."
)
CUT_EN = "\n   … (too long, the rest is left out; the full record is in the session store)"
#: The report's other words: (Chinese, English).
WORDS: dict[str, tuple[str, str]] = {
    "others": (
        "另有 {n} 个 subagent 也被中断(没有展开):{ids}",
        "{n} more subagent(s) were cut off too (not shown): {ids}",
    ),
    "calls": ("个调用", "call(s)"),
    "task": ("   交给它的任务:{task}", "   Its task: {task}"),
    "no_task": ("(记录里没有)", "(not in the record)"),
    "progress": (
        "   做到哪一步:调用了 {n} 次工具,最后一轮回复没有完成就被中断了。",
        "   How far it got: {n} tool call(s); it was cut off before it finished its last reply.",
    ),
    "changed": ("   改过的文件:", "   Files it changed: "),
    "files": ("个文件", "file(s)"),
    "cut": (
        "   中断时还没有结果的调用({unsure}):",
        "   Calls with no result when it was cut off (each {unsure}):",
    ),
    "cut_calls": ("个这样的调用", "such call(s)"),
    "said": ("   它最后说的话:{said}", "   Its last words: {said}"),
    "silent": (
        "   它最后说的话:(还没说过话,只调用了工具)",
        "   Its last words: (none yet; it only called tools)",
    ),
    "resume": (
        "   要它从断点接着做:{resume},它会带着自己的记录继续。",
        "   To have it carry on from where it stopped: {resume}; it continues with its own record.",
    ),
    "commands": ("   写过文件的命令:", "   Commands that wrote files:"),
    "older": ("条更早的命令", "earlier command(s)"),
    "steps": ("   最后几步:", "   Its last steps:"),
    "no_output": ("(没有输出)", "(no output)"),
    "error": ("出错:{result}", "error: {result}"),
    "more": ("{indent}…还有 {n} {what}没列出", "{indent}… {n} more {what} not listed"),
}


def _say(key: str, **values: object) -> str:
    text = pick(*WORDS[key])
    return text.format(**values) if values else text


async def cut_off_report(
    store: Any, project_key: str, session_id: str, *, spec: AgentSpec | None = None
) -> str:
    """The report for a resumed coordinator (``"\\n\\n" + text``), or ``""``: what
    :func:`flower.runtime.cutoff.read_cut_off` finds in ``store`` for ``session_id``, worded.

    The Runtime's entry. ``spec`` decides whether the report offers ``SendMessage``.
    Never raises: a footnote that cannot be made is no footnote.
    """
    try:
        found = await read_cut_off(store, project_key, session_id)
        if not found:
            return ""
        return "\n\n" + render(found, can_message=can_message(spec))
    except Exception as exc:  # a footnote must never stop the resume
        print(f"flower: could not report the cut-off workers: {exc!r}", file=sys.stderr)
        return ""


def render(found: Cutoff, *, can_message: bool = False) -> str:
    """The report for ``found``; ``can_message`` adds how to resume each worker.

    Each worker shown gets an equal share of :data:`MAX_CHARS` (what it left out is
    said), so the last worker and the coordinator's own calls are never the part cut.
    """
    head, own_head, closing = pick((HEAD, OWN_HEAD, CLOSING), (HEAD_EN, OWN_HEAD_EN, CLOSING_EN))
    tail: list[str] = []
    rest = found.workers[MAX_WORKERS:]
    if rest:
        ids = ", ".join(w.agent_id for w in rest)
        tail.append(one_line(_say("others", n=len(rest), ids=ids), 600))
    if found.calls:
        lines = [own_head]
        lines += [f"- {c.shown(CALL_CHARS)}" for c in found.calls[:MAX_OWN_CALLS]]
        lines += _more(len(found.calls) - MAX_OWN_CALLS, _say("calls"))
        tail.append("\n".join(lines))
    shown = found.workers[:MAX_WORKERS]
    parts = [head] if shown else []
    fixed = len(head) + len(closing) + sum(len(t) for t in tail)
    room = MAX_CHARS - fixed - 2 * (len(shown) + len(tail) + 1)
    share = room // max(1, len(shown))
    for n, worker in enumerate(shown, 1):
        parts.append(_fit(_worker(n, worker, can_message), share))
    return "\n\n".join([*parts, *tail, closing])


def _worker(n: int, worker: Worker, can_message: bool) -> str:
    """One worker, the parts that matter most first (a cut keeps them)."""
    title = worker.kind or "subagent"
    if worker.description:
        described = one_line(worker.description, 80)
        title += pick(f"「{described}」", f' "{described}"')
    lines = [f"{n}. {title}" + pick(f"(agent {worker.agent_id})", f" (agent {worker.agent_id})")]
    lines.append(_say("task", task=one_line(worker.prompt, PROMPT_CHARS) or _say("no_task")))
    lines.append(_say("progress", n=len(worker.calls)))
    changed = worker.changed
    if changed:
        lines.append(_say("changed") + pick("、", ", ").join(changed[:MAX_FILES]))
        lines += _more(len(changed) - MAX_FILES, _say("files"), indent="   ")
    cut = worker.cut_calls
    if cut:
        lines.append(_say("cut", unsure=pick(UNSURE, UNSURE_EN)))
        lines += [f"   - {c.shown(CALL_CHARS)}" for c in cut[:MAX_CUT]]
        lines += _more(len(cut) - MAX_CUT, _say("cut_calls"), indent="   ")
    said = one_line(worker.last_text, TEXT_CHARS)
    lines.append(_say("said", said=said) if said else _say("silent"))
    if can_message:
        lines.append(_say("resume", resume=f'SendMessage(to="{worker.agent_id}")'))
    commands = worker.writing_commands
    if commands:
        lines.append(_say("commands"))
        lines += [f"   - {one_line(c, CALL_CHARS)}" for c in commands[-MAX_COMMANDS:]]
        lines += _more(len(commands) - MAX_COMMANDS, _say("older"), indent="   ")
    done = [c for c in worker.calls if not c.cut]
    if done:
        lines.append(_say("steps"))
        lines += [f"   - {_step(c)}" for c in done[-RECENT_CALLS:]]
    return "\n".join(lines)


def _fit(section: str, limit: int) -> str:
    """``section`` cut at a line end to ``limit`` characters, saying so."""
    if len(section) <= limit:
        return section
    mark = pick(CUT, CUT_EN)
    cut = section.rfind("\n", 0, max(0, limit - len(mark)))
    return (section[:cut] if cut > 0 else section[: max(0, limit - len(mark))]) + mark


def _step(call: Call) -> str:
    result = one_line(call.result or "", RESULT_CHARS) or _say("no_output")
    if call.error:
        result = _say("error", result=result)
    return f"{call.shown(CALL_CHARS)} → {result}"


def _more(extra: int, what: str, *, indent: str = "") -> list[str]:
    return [_say("more", indent=indent, n=extra, what=what)] if extra > 0 else []
