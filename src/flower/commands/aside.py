"""Side questions: "where are we?" asked while a run goes on, answered without touching it.

A line starting with ``?`` goes to a read-only oracle (the ``oracle`` role: Read, Glob,
Grep, capped turns and budget) in a Runtime of its own under ``<run_dir>/aside``, so its
session, cost and manifest row never mix with the run's. It is shown the run's recent
events and the workbench; the run does not pause and never hears of it.

Whoever asks (the terminal, a web page) says so with two ``aside`` events, the question
(``answer`` ``None``) and then its answer with what it cost, so every view shows both,
and the run's closing total counts side questions wherever they were asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.kernel.events import Event
from flower.kernel.lang import pick
from flower.kernel.text import one_line

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


#: How an answer that is not one begins (the oracle could not answer, and why).
NO_ANSWER = "could not answer: "


@dataclass
class SideAnswer:
    """The oracle's answer to a side question (or one line saying why there is none),
    and what its session cost."""

    text: str
    ok: bool = True
    cost_usd: float = 0.0


async def consult(
    question: str, *, workspace: Path, run_dir: Path, workbench: Any, recent: list[Event]
) -> SideAnswer:
    """Ask the read-only oracle; never raises.

    The one way every front end (the terminal, a web page) asks: a read-only session in a
    Runtime of its own under ``run_dir``, shown ``recent`` events.
    """
    from flower.roles.factory import oracle
    from flower.runtime.runner import Runtime

    try:
        with Runtime(workspace=workspace, run_dir=run_dir, workbench=workbench or False) as rt:
            template = pick(ASIDE_PROMPT, ASIDE_PROMPT_EN)
            prompt = template.format(question=question, events=summarize(recent))
            result = await rt.run(oracle(ASIDE_STEP), prompt, step_name=ASIDE_STEP)
    except Exception as exc:  # a side question must never end the run
        return SideAnswer(f"{NO_ANSWER}{type(exc).__name__}: {exc}", ok=False)
    cost = float(result.cost_usd or 0.0)
    if result.ok and result.text.strip():
        return SideAnswer(result.text.strip(), cost_usd=cost)
    return SideAnswer(f"{NO_ANSWER}{result.error or 'no answer'}", ok=False, cost_usd=cost)


async def ask_oracle(
    question: str, *, workspace: Path, run_dir: Path, workbench: Any, recent: list[Event]
) -> str:
    """The oracle's answer to a side question, or one line saying why there is none
    (:func:`consult` without the cost). Never raises."""
    said = await consult(
        question, workspace=workspace, run_dir=run_dir, workbench=workbench, recent=recent
    )
    return said.text


def asked(question: str, *, via: str = "") -> Event:
    """The ``aside`` event of a side question just asked (``via``: the front end, when it
    is not the run's own terminal: ``"page"``)."""
    return Event("aside", {"question": question, "answer": None, "via": via})


def answered(question: str, said: SideAnswer, *, via: str = "") -> Event:
    """The ``aside`` event of its answer, with what it cost."""
    payload = {"question": question, "answer": said.text, "ok": said.ok,
               "cost_usd": said.cost_usd, "via": via}  # fmt: skip
    return Event("aside", payload)


async def answer_aside(
    question: str,
    *,
    workspace: Path,
    run_dir: Path,
    workbench: Any,
    recent: list[Event],
    tell: Callable[[Event], None],
) -> None:
    """Ask the oracle; the question and then the answer (or why there is none) go to
    ``tell`` as ``aside`` events, which the run's view shows. Never raises."""
    tell(asked(question))
    said = await consult(
        question, workspace=workspace, run_dir=run_dir, workbench=workbench, recent=recent
    )
    tell(answered(question, said))


__all__ = [
    "ASIDE_PROMPT",
    "NO_ANSWER",
    "SideAnswer",
    "answer_aside",
    "answered",
    "ask_oracle",
    "asked",
    "consult",
    "summarize",
]
