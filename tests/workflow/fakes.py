"""Stand-ins for tests of flower's own orchestration: a Runtime without the CLI, and a UI
thread that answers a channel's questions."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from flower.roles.agent import AgentSpec
from flower.runtime.runner import StepResult


@dataclass
class Call:
    step: str
    prompt: str
    resume: str | None
    fork: bool
    on_session: Any
    spec: Any = None


@dataclass
class FakeRuntime:
    """Answers ``run`` from a per-label table; new sessions get ids s1, s2…"""

    workspace: Path
    run_dir: Path
    replies: dict[str, Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    on_session: Callable[[str], None] | None = None
    workbench: Any = None
    alive: set[str] | None = None
    store: Any = None
    run_id: str = "fake-run"
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def has_session(self, sid: str | None) -> bool:
        return self.alive is None or sid in self.alive

    async def run(
        self,
        spec: AgentSpec,
        prompt: str,
        *,
        step_name: str | None = None,
        resume: str | None = None,
        fork: bool = False,
        resume_at: str | None = None,
        on_event: Any = None,
    ) -> StepResult:
        label = step_name or spec.name
        self.calls.append(Call(label, prompt, resume, fork, self.on_session, spec))
        sid = resume if resume and not fork else f"s{next(self._ids)}"
        if self.on_session is not None:
            self.on_session(sid)
        reply = self.replies.get(label, "ok")
        if isinstance(reply, StepResult):
            reply.step, reply.session_id = label, reply.session_id or sid
            return reply
        return StepResult(step=label, session_id=sid, ok=True, text=str(reply))


def failed(text: str = "boom") -> StepResult:
    return StepResult(step="", ok=False, error=text, text=text)


@pytest.fixture
def rt(tmp_path: Path) -> FakeRuntime:
    ws = tmp_path / "ws"
    ws.mkdir()
    return FakeRuntime(workspace=ws, run_dir=tmp_path / "runs")


class Answerer:
    """A UI thread: answers every pending question from a table (or declines it)."""

    def __init__(self, channel: Any, answers: dict[str, str]) -> None:
        self.channel, self.answers = channel, answers
        self.answered: list[tuple[str, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            for ask in self.channel.pending():
                reply = next((a for q, a in self.answers.items() if q in ask.question), None)
                if reply is None:
                    continue
                if self.channel.answer(ask.id, reply):
                    self.answered.append((ask.question, reply))
            time.sleep(0.02)

    def __enter__(self) -> Answerer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


class Rulings:
    """A stand-in for the session store's judge ledger: keeps what it is given."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def record_ruling(self, row: dict[str, Any]) -> None:
        self.rows.append(row)

    def of(self, kind: str) -> list[tuple[Any, ...]]:
        return [(r["round"], r["state"], r["said"]) for r in self.rows if r["kind"] == kind]
