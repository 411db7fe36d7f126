"""The span tree from flower's events and sessions, in this process, without the CLI:
the plugin's hooks called as flower calls them, the spans read from an in-memory
exporter. Fast; the real run against a real backend is test_backend_e2e.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from flower.kernel.agent_spec import AgentSpec
from flower.kernel.events import Event
from flower.plugin_types import SessionRequest
from flower.plugins import emit
from flower.runtime.attempt import Attempt
from flower.runtime.scope import SessionScopes

from .conftest import Traced

SECRET = "sk-ant-api03-otel-test-secret-value-1234"
MARKER = "MARKER-CONTENT-8812"


class FakeRuntime:
    """What the plugin reads from a Runtime: where the run lives and its ids."""

    def __init__(self, tmp_path: Path) -> None:
        self.run_dir = tmp_path / "runs"
        self.run_dir.mkdir(exist_ok=True)
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.run_id = "20260101-000000-abcdef"


def session(
    rt: FakeRuntime, step: str, *, attempt: int = 1, watch: bool = True, **outcome: Any
) -> SessionRequest:
    got = Attempt(
        session_id=outcome.pop("session_id", f"sid-{step}-{attempt}"),
        ok=outcome.pop("ok", True),
        cost_usd=outcome.pop("cost_usd", 0.01),
        num_turns=1,
        model="claude-test",
        usage={"input_tokens": 1000, "output_tokens": 10, "cache_read_input_tokens": 5},
        **outcome,
    )
    spec = AgentSpec(name=f"agent-{step}", instructions="")
    return SessionRequest(
        runtime=rt, spec=spec, step=step, attempt=attempt, watch=watch, outcome=got
    )


def run_session(rt: FakeRuntime, step: str, **kw: Any) -> SessionRequest:
    request = session(rt, step, **kw)
    with SessionScopes(request):
        pass
    return request


def result(step: str, *, ok: bool = True, sid: str | None = None) -> None:
    payload = {"ok": ok, "session_id": sid or f"sid-{step}-1", "cost_usd": 0.01, "num_turns": 1}
    emit(Event("result", {**payload, "attempts": 1, "duration_s": 0.1}, step=step))


def tree(spans: list[Any]) -> list[str]:
    """Each span as ``parent > name``, depth first, children in start order."""
    by_id = {s.context.span_id: s for s in spans}
    kids: dict[Any, list[Any]] = {}
    for s in spans:
        parent = s.parent.span_id if s.parent and s.parent.span_id in by_id else None
        kids.setdefault(parent, []).append(s)
    lines: list[str] = []

    def walk(parent: Any, name: str) -> None:
        for s in sorted(kids.get(parent, []), key=lambda s: s.start_time):
            lines.append(f"{name} > {s.name}")
            walk(s.context.span_id, s.name)

    walk(None, "-")
    return lines


def named(spans: list[Any], name: str) -> list[Any]:
    return [s for s in spans if s.name == name]


def test_a_workflow_becomes_one_tree_with_rounds_rulings_retries_and_a_handoff(
    traced: Traced, tmp_path: Path
) -> None:
    rt = FakeRuntime(tmp_path)
    emit(Event("step", {"index": 1, "total": 1, "resumed": False, "woke": 1}, step="干活"))
    run_session(rt, "干活", ok=False, error="API Error: 529 (HTTP 529)")
    emit(Event("retry", {"attempt": 1, "class": "transient", "delay": 0.1, "error": "529"}, "干活"))
    emit(Event("offline", {"host": "127.0.0.1", "port": 9, "waited": 1.0}, step="干活"))
    run_session(rt, "干活", attempt=2, session_id="sid-work")
    emit(Event("handoff", {"phase": "writing", "generation": 0, "used": 50_000}, step="干活"))
    run_session(rt, "干活", attempt=2, session_id="sid-work", watch=False)
    emit(Event("handoff", {"phase": "done", "degraded": False, "generation": 1}, step="干活"))
    run_session(rt, "干活", attempt=2, session_id="sid-work-2")
    result("干活", sid="sid-work-2")
    run_session(rt, "干活·判定#1", session_id="sid-judge")
    result("干活·判定#1", sid="sid-judge")
    verdict = {"round": 1, "state": "not_yet", "failed": [MARKER], "session_id": "sid-judge"}
    emit(Event("verdict", {**verdict, "reason": MARKER}, step="干活"))
    run_session(rt, "干活#round2")
    result("干活#round2")

    spans = traced.finished()
    assert tree(spans) == [
        "- > flower run",
        "flower run > step 干活",
        "step 干活 > 干活",
        "干活 > invoke_agent agent-干活",
        "干活 > retry wait",
        "干活 > invoke_agent agent-干活",
        "干活 > handoff 1",
        "handoff 1 > invoke_agent agent-干活",
        "干活 > invoke_agent agent-干活",
        "step 干活 > 干活·判定#1",
        "干活·判定#1 > invoke_agent agent-干活·判定#1",
        "step 干活 > 干活#round2",
        "干活#round2 > invoke_agent agent-干活#round2",
    ]
    assert {s.attributes["flower.run.id"] for s in spans} == {rt.run_id}
    (ruling,) = named(spans, "干活·判定#1")
    assert ruling.attributes["flower.verdict.state"] == "not_yet"
    assert ruling.attributes["flower.verdict.failed_count"] == 1
    assert "flower.verdict.failed" not in ruling.attributes  # checks' text is content
    first, second, handoff_round, successor = named(spans, "invoke_agent agent-干活")
    assert first.status.status_code.name == "ERROR" and "529" in first.attributes["flower.error"]
    assert second.attributes["flower.attempt"] == 2
    assert handoff_round.attributes["flower.kind"] == "handoff_round"
    assert successor.attributes["gen_ai.usage.input_tokens"] == 1000
    assert successor.attributes["llm.token_count.prompt_details.cache_read"] == 5
    assert successor.attributes["gen_ai.response.model"] == "claude-test"
    (wait,) = named(spans, "retry wait")
    assert wait.attributes["error.type"] == "transient"
    assert [e.name for e in wait.events] == ["offline"]
    assert wait.end_time <= second.start_time  # the wait ends as the next attempt starts

    metrics = traced.metrics()
    assert [v for _, v in metrics["flower.retries"]] == [1]
    assert [(a["flower.degraded"], v) for a, v in metrics["flower.handoffs"]] == [(False, 1)]
    assert [(a["flower.verdict.state"], v) for a, v in metrics["flower.judge.verdicts"]] == [
        ("not_yet", 1)
    ]
    tokens = {(a["flower.step"], a["gen_ai.token.type"]): v for a, v in metrics["flower.tokens"]}
    assert tokens[("干活", "input")] == 6000  # every session of the step, the judge's too


def test_a_session_span_ends_with_the_exception_that_ended_the_session(
    traced: Traced, tmp_path: Path
) -> None:
    rt = FakeRuntime(tmp_path)
    with pytest.raises(ConnectionError), SessionScopes(session(rt, "甲", ok=False)):
        raise ConnectionError("the CLI died")
    (span,) = named(traced.flushed(), "invoke_agent agent-甲")  # ended then, not at exit
    assert span.status.status_code.name == "ERROR"
    assert [e.attributes["exception.type"] for e in span.events] == ["ConnectionError"]
    assert "flower.open_at_exit" not in span.attributes
    assert span.attributes["flower.ok"] is False


def test_the_session_span_is_the_active_one_while_the_cli_starts(
    traced: Traced, tmp_path: Path
) -> None:
    from opentelemetry import propagate

    rt = FakeRuntime(tmp_path)
    request = session(rt, "甲")
    carrier: dict[str, str] = {}
    with SessionScopes(request):
        propagate.inject(carrier)  # what the SDK does as it spawns the CLI
    (span,) = named(traced.finished(), "invoke_agent agent-甲")
    ctx = span.context
    assert carrier["traceparent"].startswith(f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-")
    assert request.env["CLAUDE_CODE_ENABLE_TELEMETRY"] == "1"
    assert request.env["CLAUDE_CODE_ENHANCED_TELEMETRY_BETA"] == "1"
    assert f"flower.run.id={rt.run_id}" in request.env["OTEL_RESOURCE_ATTRIBUTES"]
    assert "flower.step=%E7%94%B2" in request.env["OTEL_RESOURCE_ATTRIBUTES"]  # 甲, encoded


def questions_and_content(rt: FakeRuntime) -> None:
    os.environ["OTEL_TEST_API_KEY"] = SECRET
    emit(Event("step", {"index": 1, "total": 1}, step="确认需求"))
    request = session(rt, "确认需求", text=f"reply {MARKER}")
    with SessionScopes(request):
        emit(Event("prompt", {"text": f"prompt {MARKER} {SECRET} " + "x" * 99}, step="确认需求"))
        emit(Event("text", {"text": f"said {MARKER}"}, step="确认需求"))
        asked = {"id": "q1", "question": f"which? {MARKER}", "options": ["a", "b"], "asked_at": 1.0}
        emit(Event("ask", {**asked, "state": "asked"}))
        emit(Event("ask", {**asked, "state": "answered", "answer": f"a {MARKER}"}))
    result("确认需求")


def exported_text(spans: list[Any]) -> str:
    parts = []
    for s in spans:
        parts.append(json.dumps(dict(s.attributes), ensure_ascii=False, default=str))
        for e in s.events:
            parts.append(json.dumps(dict(e.attributes or {}), ensure_ascii=False, default=str))
    return "\n".join(parts)


def test_content_stays_home_by_default(
    traced: Traced, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TEST_API_KEY", SECRET)
    questions_and_content(FakeRuntime(tmp_path))
    spans = traced.finished()
    text = exported_text(spans)
    assert MARKER not in text and SECRET not in text
    (question,) = named(spans, "question")
    assert question.attributes["flower.ask.state"] == "answered"
    assert question.parent.span_id == named(spans, "invoke_agent agent-确认需求")[0].context.span_id
    assert "flower.workspace.hash" in named(spans, "flower run")[0].attributes
    assert str(tmp_path) not in text
    waiting = traced.metrics()["flower.questions.waiting"]
    assert [v for _, v in waiting] == [0]


def test_content_when_opted_in_is_capped_and_masks_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flower_plugin_otel.plugin import STATE
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")
    monkeypatch.setenv("FLOWER_OTEL_CONTENT", "1")
    monkeypatch.setenv("FLOWER_OTEL_CONTENT_MAX", "60")
    monkeypatch.setenv("OTEL_TEST_API_KEY", SECRET)
    spans = InMemorySpanExporter()
    tracer = STATE.install(span_exporter=spans)
    try:
        questions_and_content(FakeRuntime(tmp_path))
        tracer.close()
        STATE.pipeline.tracer_provider.force_flush()
        got = list(spans.get_finished_spans())
    finally:
        STATE.reset()
        STATE.broken = True
    (agent,) = named(got, "invoke_agent agent-确认需求")
    said = str(agent.attributes["input.value"])
    assert MARKER in said and SECRET not in said and "OTEL_TEST_API_KEY" in said
    assert said.endswith("more characters cut]")
    assert MARKER in str(named(got, "question")[0].attributes["input.value"])


def test_a_wake_links_its_root_to_the_last_segment_of_the_same_run(
    traced: Traced, tmp_path: Path
) -> None:
    rt = FakeRuntime(tmp_path)
    kept = {"segments": [{"run": rt.run_id, "trace_id": "ab" * 16, "span_id": "cd" * 8}]}
    (rt.run_dir / "otel.json").write_text(json.dumps(kept), encoding="utf-8")
    emit(Event("wake", {"woke": 2, "steps": {}, "notice": ""}))
    run_session(rt, "甲")
    result("甲")
    (root,) = named(traced.finished(), "flower run")
    (link,) = root.links
    assert f"{link.context.trace_id:032x}" == "ab" * 16
    assert root.attributes["flower.run.previous_trace_id"] == "ab" * 16  # links get dropped
    assert root.attributes["flower.run.segment"] == 2 and root.attributes["flower.run.woke"] == 2
    segments = json.loads((rt.run_dir / "otel.json").read_text())["segments"]
    assert segments[-1]["trace_id"] == f"{root.context.trace_id:032x}"


def test_the_human_overruling_the_judge_counts_as_agreement_or_not(traced: Traced) -> None:
    emit(Event("step", {"index": 1, "total": 1}, step="干活"))
    emit(Event("override", {"round": 1, "choice": "change_goal", "said": ""}, step="干活"))
    emit(Event("override", {"round": 2, "choice": "misjudged", "said": MARKER}, step="干活"))
    reviews = traced.metrics()["flower.judge.reviews"]
    assert sorted((a["flower.judge.agreed"], v) for a, v in reviews) == [(False, 1), (True, 1)]
    assert MARKER not in exported_text(traced.finished())


def test_a_side_question_is_a_span_of_the_run_and_a_question_counts_while_it_waits(
    traced: Traced, tmp_path: Path
) -> None:
    rt = FakeRuntime(tmp_path)
    emit(Event("step", {"index": 1, "total": 1, "resumed": False, "woke": 1}, step="干活"))
    request = session(rt, "干活", session_id="sid-work")
    with SessionScopes(request):
        ask = {"id": "q1", "question": MARKER, "options": ["LF", "CRLF"], "asked_at": 1.0}
        emit(Event("ask", {**ask, "state": "asked"}))
        waiting = traced.metrics()["flower.questions.waiting"]
        assert [v for _, v in waiting] == [1]
        run_session(rt, "旁路问答", session_id="sid-aside")  # the human's ? line, meanwhile
        result("旁路问答", sid="sid-aside")
        emit(Event("ask", {**ask, "state": "answered", "answer": MARKER, "asked_at": 1.0}))
    result("干活", sid="sid-work")
    spans = traced.finished()
    assert "flower run > 旁路问答" in tree(spans)  # not inside the step it interrupted
    (aside,) = named(spans, "旁路问答")
    assert aside.attributes["flower.kind"] == "side_question"
    (question,) = named(spans, "question")
    assert question.parent.span_id == named(spans, "invoke_agent agent-干活")[0].context.span_id
    assert question.attributes["flower.ask.state"] == "answered"
    assert question.attributes["flower.ask.waited_s"] > 0
    assert [v for _, v in traced.metrics()["flower.questions.waiting"]] == [0]
    assert MARKER not in exported_text(spans)


def test_a_check_flower_ran_is_a_span_of_its_own_under_the_step(
    traced: Traced, tmp_path: Path
) -> None:
    emit(Event("step", {"index": 1, "total": 1, "resumed": False, "woke": 1}, step="干活"))
    check = {"round": 1, "index": 2, "check": "`pytest` exits 0", "command": MARKER,
             "state": "failed", "status": 1, "seconds": 0.5, "tail": MARKER, "why": "exited 1",
             "isolated": True}  # fmt: skip
    emit(Event("check", check, step="干活"))
    spans = traced.finished()
    (span,) = named(spans, "check 2")
    assert tree(spans)[-1] == "step 干活 > check 2"
    assert span.attributes["flower.check.state"] == "failed"
    assert span.attributes["flower.check.status"] == 1
    assert span.status.status_code.name == "ERROR"
    assert (span.end_time - span.start_time) == pytest.approx(0.5e9, rel=0.01)
    assert MARKER not in json.dumps(dict(span.attributes))  # its command and output: content
