"""The words a resumed coordinator reads about the workers an outage cut off.

Chinese, like every text flower shows a model, and bounded: a night's outage can cut off a
dozen workers with hundreds of calls, and the report rides on the resume prompt, so each
part has a cap (workers, files, commands, calls, characters) and the whole text one more.
What is left out is counted, never silently dropped, and the closing instruction always
survives the cut.

The report quotes the workers' own transcripts; it is not their report and nothing in it
has been checked, which the text says. Every call without a recorded result is worded as
the pruning store words it in a resumed context: it may or may not have taken effect,
verify (:data:`flower.stores.prune.UNSURE`).
"""

from __future__ import annotations

from flower.core.cutoff import Call, Cutoff, Worker
from flower.core.text import one_line
from flower.stores.prune import UNSURE

__all__ = ["MAX_CHARS", "render"]

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


def render(found: Cutoff, *, can_message: bool = False) -> str:
    """The report for ``found``; ``can_message`` adds how to resume each worker.

    Each worker shown gets an equal share of :data:`MAX_CHARS` (what it left out is
    said), so the last worker and the coordinator's own calls are never the part cut.
    """
    tail: list[str] = []
    rest = found.workers[MAX_WORKERS:]
    if rest:
        ids = ", ".join(w.agent_id for w in rest)
        tail.append(one_line(f"另有 {len(rest)} 个 subagent 也被中断(没有展开):{ids}", 600))
    if found.calls:
        lines = [OWN_HEAD]
        lines += [f"- {c.shown(CALL_CHARS)}" for c in found.calls[:MAX_OWN_CALLS]]
        lines += _more(len(found.calls) - MAX_OWN_CALLS, "个调用")
        tail.append("\n".join(lines))
    shown = found.workers[:MAX_WORKERS]
    parts = [HEAD] if shown else []
    fixed = len(HEAD) + len(CLOSING) + sum(len(t) for t in tail)
    room = MAX_CHARS - fixed - 2 * (len(shown) + len(tail) + 1)
    share = room // max(1, len(shown))
    for n, worker in enumerate(shown, 1):
        parts.append(_fit(_worker(n, worker, can_message), share))
    return "\n\n".join([*parts, *tail, CLOSING])


def _worker(n: int, worker: Worker, can_message: bool) -> str:
    """One worker, the parts that matter most first (a cut keeps them)."""
    title = worker.kind or "subagent"
    if worker.description:
        title += f"「{one_line(worker.description, 80)}」"
    lines = [f"{n}. {title}(agent {worker.agent_id})"]
    lines.append(f"   交给它的任务:{one_line(worker.prompt, PROMPT_CHARS) or '(记录里没有)'}")
    calls = len(worker.calls)
    lines.append(f"   做到哪一步:调用了 {calls} 次工具,最后一轮回复没有完成就被中断了。")
    changed = worker.changed
    if changed:
        lines.append("   改过的文件:" + "、".join(changed[:MAX_FILES]))
        lines += _more(len(changed) - MAX_FILES, "个文件", indent="   ")
    cut = worker.cut_calls
    if cut:
        lines.append(f"   中断时还没有结果的调用({UNSURE}):")
        lines += [f"   - {c.shown(CALL_CHARS)}" for c in cut[:MAX_CUT]]
        lines += _more(len(cut) - MAX_CUT, "个这样的调用", indent="   ")
    said = one_line(worker.last_text, TEXT_CHARS)
    lines.append(f"   它最后说的话:{said}" if said else "   它最后说的话:(还没说过话,只调用了工具)")
    if can_message:
        resume = f'SendMessage(to="{worker.agent_id}")'
        lines.append(f"   要它从断点接着做:{resume},它会带着自己的记录继续。")
    commands = worker.writing_commands
    if commands:
        lines.append("   写过文件的命令:")
        lines += [f"   - {one_line(c, CALL_CHARS)}" for c in commands[-MAX_COMMANDS:]]
        lines += _more(len(commands) - MAX_COMMANDS, "条更早的命令", indent="   ")
    done = [c for c in worker.calls if not c.cut]
    if done:
        lines.append("   最后几步:")
        lines += [f"   - {_step(c)}" for c in done[-RECENT_CALLS:]]
    return "\n".join(lines)


def _fit(section: str, limit: int) -> str:
    """``section`` cut at a line end to ``limit`` characters, saying so."""
    if len(section) <= limit:
        return section
    cut = section.rfind("\n", 0, max(0, limit - len(CUT)))
    return (section[:cut] if cut > 0 else section[: max(0, limit - len(CUT))]) + CUT


def _step(call: Call) -> str:
    result = one_line(call.result or "", RESULT_CHARS) or "(没有输出)"
    if call.error:
        result = f"出错:{result}"
    return f"{call.shown(CALL_CHARS)} → {result}"


def _more(extra: int, what: str, *, indent: str = "") -> list[str]:
    return [f"{indent}…还有 {extra} {what}没列出"] if extra > 0 else []
