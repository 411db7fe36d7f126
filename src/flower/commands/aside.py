"""Side questions: "where are we?" asked while a run goes on, answered without touching it.

A line starting with ``?`` goes to a read-only oracle (the ``oracle`` role: Read, Glob,
Grep, capped turns and budget) in a Runtime of its own under ``<run_dir>/aside``, so its
session, cost and manifest row never mix with the run's. It is shown the run's recent
events and the workbench; the run does not pause and never hears of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.core.lang import pick
from flower.core.text import one_line

if TYPE_CHECKING:
    from flower.core.events import Event

#: What the oracle is asked; the events are flower's own summaries, oldest first.
ASIDE_PROMPT = (
    "人在运行进行中问了一个旁路问题:\n\n{question}\n\n这次运行最近发生的事(从旧到新):\n{events}"
)
ASIDE_PROMPT_EN = (
    "While the run goes on, the human asks on the side:\n\n{question}\n\n"
    "What happened in the run lately (oldest first):\n{events}"
)
ASIDE_STEP = "旁路问答"


def summarize(events: list[Event], limit: int = 200) -> str:
    """One line per event, for the oracle: what it is, where, the gist of its payload."""
    lines = []
    for event in events:
        if event.kind in ("context", "system", "unknown", "prompt"):
            continue
        gist = ", ".join(f"{k}={v}" for k, v in event.payload.items() if v not in (None, "", []))
        lines.append(f"- [{event.kind}] {event.step or ''} {one_line(gist, limit)}".rstrip())
    return "\n".join(lines) or pick("(还没有事件)", "(no events yet)")


async def ask_oracle(
    question: str, *, workspace: Path, run_dir: Path, workbench: Any, recent: list[Event]
) -> str:
    """The oracle's answer to a side question, or one line saying why there is none.

    The one way every front end (the terminal, a web page) asks: a read-only session in a
    Runtime of its own under ``run_dir``, shown ``recent`` events. Never raises.
    """
    from flower.core.roles import oracle
    from flower.core.runtime import Runtime

    try:
        with Runtime(workspace=workspace, run_dir=run_dir, workbench=workbench or False) as rt:
            template = pick(ASIDE_PROMPT, ASIDE_PROMPT_EN)
            prompt = template.format(question=question, events=summarize(recent))
            result = await rt.run(oracle(ASIDE_STEP), prompt, step_name=ASIDE_STEP)
    except Exception as exc:  # a side question must never end the run
        return f"could not answer: {type(exc).__name__}: {exc}"
    if result.ok and result.text.strip():
        return result.text.strip()
    return f"could not answer: {result.error or 'no answer'}"


async def answer_aside(
    question: str,
    *,
    workspace: Path,
    run_dir: Path,
    workbench: Any,
    recent: list[Event],
    terminal: Any,
) -> None:
    """Ask the oracle and print its answer (or why there is none); never raises."""
    terminal.line(f"? {question} (asking on the side; the run goes on)", "dim")
    said = await ask_oracle(
        question, workspace=workspace, run_dir=run_dir, workbench=workbench, recent=recent
    )
    failed = said.startswith("could not answer: ")
    for line in said.splitlines():
        terminal.line(f"? {line}", "yellow" if failed else "cyan")


__all__ = ["ASIDE_PROMPT", "answer_aside", "ask_oracle", "summarize"]
