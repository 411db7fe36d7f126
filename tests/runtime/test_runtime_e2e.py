"""Runtime.run with the real SDK, the real bundled CLI and the scripted model.

No mocks: every test here runs ``claude`` against ``flower.testing.ScriptedModel`` on
loopback, through the default session store (the pruning store over SQLite).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from flower import hookimpl
from flower.kernel.events import Event
from flower.plugins import get_plugin_manager
from flower.records.handoff import HANDOFF_PROMPT, Handoff
from flower.records.workbench import Workbench
from flower.roles.agent import AgentSpec, HandoffPolicy
from flower.runtime.resilience import RESUME_PROMPT, Resilience
from flower.runtime.runner import Runtime, StepResult
from flower.stores.prune import INTERRUPTED_NOTE
from flower.testing import RecordedRequest, ScriptedModel, Turn, bash, conversation, text

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "build the thing"
SMALL = {"input_tokens": 500}
DOC = (
    "## 正在做\n在造那个东西,解析器写完了\n## 已决定\n用标准库\n"
    "## 下一步\n写渲染器\n## 现场\nsrc/thing.py"
)


def fast(**kw: Any) -> Resilience:
    """Resilience with waits short enough for a test."""
    return Resilience(
        **{"base_delay": 0.05, "max_delay": 0.2, "probe_interval": 0.1, "probe_timeout": 0.5, **kw}
    )


@pytest.fixture
def runtime(make_runtime: Callable[..., Runtime]) -> Callable[..., Runtime]:
    """``runtime(**kw)``: a Runtime on the workspace with test-speed resilience, closed at
    teardown."""

    def make(**kw: Any) -> Runtime:
        kw.setdefault("resilience", fast())
        return make_runtime(**kw)

    return make


def spec(**kw: Any) -> AgentSpec:
    return AgentSpec(name="worker", instructions="Be terse.", allowed_tools=["Bash"], **kw)


class Events(list[Event]):
    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e.payload for e in self if e.kind == kind]


def first_user_text(req: RecordedRequest) -> str:
    from flower.testing import message_text

    users = [m for m in req.messages if m.get("role") == "user"]
    return message_text(users[0]) if users else ""


def last_user_text(req: RecordedRequest) -> str:
    from flower.testing import message_text

    users = [m for m in req.messages if m.get("role") == "user"]
    return message_text(users[-1]) if users else ""


def assistant_texts(req: RecordedRequest) -> list[str]:
    from flower.testing import message_text

    return [message_text(m) for m in req.messages if m.get("role") == "assistant"]


async def test_a_step_with_bash_succeeds_and_its_manifest_row_is_complete(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    runtime: Callable[..., Runtime],
) -> None:
    scripted_model.play(
        [conversation("main", bash("echo made > proof.txt"), text("done", usage=SMALL))]
    )
    rt = runtime()
    events = Events()
    sessions: list[tuple[str, int]] = []
    rt.on_session = lambda sid: sessions.append((sid, len(events)))
    r = await rt.run(spec(), TASK, step_name="干活", on_event=events.append)

    assert r.ok and r.text == "done" and r.error is None
    assert (workspace / "proof.txt").read_text().strip() == "made"
    assert (r.attempts, r.resumed, r.retired, r.errors) == (1, False, [], [])
    assert r.session_id and sessions == [(r.session_id, sessions[0][1])]
    assert sessions[0][1] < [e.kind for e in events].index("tool")  # known before any work
    assert r.num_turns == 2 and r.cost_usd > 0 and r.context == 500
    assert r.ended_at >= r.started_at > 0 and r.duration_s == r.ended_at - r.started_at
    assert [p["name"] for p in events.of("tool")] == ["Bash"]
    assert events.of("text") == [{"text": "done", "subagent": False, "context": 500}]
    assert events.of("result")[0]["ok"] is True
    assert rt.results == [r]

    (row,) = json.loads((tmp_path / "runs" / "manifest.json").read_text())
    assert set(row) == {f.name for f in fields(StepResult)} | {"duration_s", "run"}
    assert row["run"] == rt.run_id and row["step"] == "干活" and row["session_id"] == r.session_id
    assert row["ok"] is True and row["duration_s"] == pytest.approx(r.duration_s, abs=0.002)
    reopened = runtime()
    assert reopened.has_session(r.session_id) and not reopened.has_session("no-such-session")


async def test_an_outage_waits_for_the_network_and_resumes_the_same_session(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    # The second reply fails twice: the CLI's own single retry (cli_retries=1) is used
    # up, then the server goes away for a second, so flower must wait and resume. The
    # resumed request is scripted from the resume prompt on (``after_user``).
    scripted_model.play(
        [
            conversation("resumed", text("recovered", usage=SMALL), after_user=RESUME_PROMPT),
            conversation(
                "main",
                bash("echo before", usage=SMALL),
                Turn(text="never", usage=SMALL, fail_always=529),
                first_user=TASK,
            ),
        ]
    )
    rt = runtime(resilience=fast(cli_retries=1))
    events = Events()

    def on_event(event: Event) -> None:
        events.append(event)
        if event.kind == "retry":
            scripted_model.restart(after=1.0)  # an outage: connections refused for 1 s

    r = await rt.run(spec(), TASK, on_event=on_event)

    assert r.ok and r.text == "recovered", r.errors
    assert r.attempts == 2 and r.resumed
    assert len(r.errors) == 1 and "529" in r.errors[0]
    assert {p["session_id"] for p in events.of("session")} == {r.session_id}
    (retry,) = events.of("retry")
    assert retry["class"] == "transient" and retry["resume"] is True
    assert events.of("offline"), "the probe never saw the outage"
    outcomes = [(q.turn, q.outcome) for q in scripted_model.requests_for("main")]
    assert outcomes == [(0, "reply"), (1, "529"), (1, "529")]
    (resumed,) = scripted_model.requests_for("resumed")
    assert RESUME_PROMPT in last_user_text(resumed)
    assert TASK in first_user_text(resumed)  # the same conversation, not a new one
    assert "529" not in resumed.text() and "API Error" not in resumed.text()
    assert not any("API Error" in t for t in assistant_texts(resumed))


async def test_a_401_stops_at_once_with_a_clear_error(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    scripted_model.play([conversation("main", Turn(text="never", fail_always=401))])
    rt = runtime()
    events = Events()
    r = await rt.run(spec(), TASK, on_event=events.append)
    assert not r.ok and r.attempts == 1 and not events.of("retry")
    assert r.error is not None and "401" in r.error and "API key" in r.error
    assert len(scripted_model.requests_for("main")) == 1


async def test_a_400_is_not_retried_forever(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    scripted_model.play([conversation("main", Turn(text="never", fail_always=400))])
    rt = runtime()
    events = Events()
    r = await rt.run(spec(), TASK, on_event=events.append)
    assert not r.ok and r.attempts == 1 and not events.of("retry")
    assert r.error is not None and "400" in r.error


async def test_a_transient_error_stops_after_max_attempts(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    scripted_model.play([conversation("main", Turn(text="never", fail_always=529))])
    rt = runtime(resilience=fast(max_attempts=3))
    events = Events()
    r = await rt.run(spec(), TASK, on_event=events.append)
    assert not r.ok and r.attempts == 3 and r.resumed
    assert [p["attempt"] for p in events.of("retry")] == [1, 2]
    assert len(r.errors) == 3 and all("529" in e for e in r.errors)


def handoff_script(*, main_turns: list[Turn], successor: list[Turn], doc: str = DOC) -> list[Any]:
    """Main work, the handoff round (resumes main; scripted from its prompt), the successor."""
    return [
        conversation("handoff", text(doc, usage=SMALL), after_user="只写交接"),
        conversation("successor", *successor, first_user="你接手"),
        conversation("main", *main_turns, first_user=TASK),
    ]


class BudgetSeen:
    """A plugin that notes the budget of every session a Runtime starts."""

    def __init__(self) -> None:
        self.seen: list[float | None] = []

    @hookimpl
    def flower_guards(self, spec: AgentSpec, workbench: Any, spill_threshold: Any) -> None:
        self.seen.append(spec.max_budget_usd)


async def test_a_full_context_hands_off_to_a_new_session(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    runtime: Callable[..., Runtime],
) -> None:
    policy = HandoffPolicy(window=60_000, headroom=20_000)  # at 40k, warn at 20k
    main_turns = [
        bash("echo one", usage={"input_tokens": 25_000}),
        bash("sleep 20", usage={"input_tokens": 15_000, "cache_read_input_tokens": 30_000}),
    ]
    scripted_model.play(
        handoff_script(main_turns=main_turns, successor=[text("finished", usage=SMALL)])
    )
    wb = Workbench(workspace, home=tmp_path / "wb")
    rt = runtime(handoff=policy, workbench=wb)
    events = Events()
    sessions: list[str] = []
    rt.on_session = sessions.append
    budgets = BudgetSeen()
    pm = get_plugin_manager()
    pm.register(budgets, name="test-budgets")
    started = time.monotonic()
    try:
        r = await rt.run(spec(max_budget_usd=50.0), TASK, step_name="干活", on_event=events.append)
    finally:
        pm.unregister(budgets)

    assert r.ok and r.text == "finished", r.errors
    assert budgets.seen == [50.0, None, 50.0]  # the handoff round runs with the budget lifted
    # A sleep that long cannot finish unnoticed, however loaded the machine: a timeout
    # bound only as a backstop, the tool result left in the session as the proof.
    assert time.monotonic() - started < 20, "the handoff did not interrupt the running tool"
    assert len(r.retired) == 1 and r.session_id not in r.retired
    assert sessions == [r.retired[0], r.session_id]
    assert r.attempts == 1 and r.errors == [Runtime.HANDOFF_DUE]
    assert [p["phase"] for p in events.of("handoff")] == ["near", "writing", "done"]
    done = events.of("handoff")[-1]
    assert done["degraded"] is False and done["session_id"] == r.retired[0]

    path = wb.notes / "交接-干活.md"
    assert done["path"] == str(path)
    saved = Handoff.load(path)
    assert (
        saved is not None
        and saved.doing == "在造那个东西,解析器写完了"
        and saved.next == "写渲染器"
    )

    (round_,) = scripted_model.requests_for("handoff")
    assert TASK in first_user_text(round_)  # the full session itself writes it
    assert round_.tool_results()["toolu_main_1_0"] == INTERRUPTED_NOTE
    assert [q.turn for q in scripted_model.requests_for("main")] == [0, 1]
    assert HANDOFF_PROMPT.format(used=45_000, window=60_000) in last_user_text(round_)
    (first,) = scripted_model.requests_for("successor")
    assert saved.prompt_block().strip() in first_user_text(first)
    assert not assistant_texts(first), "the successor must start a new session"
    assert not [
        e for e in events if e.kind == "text" and e.payload["text"] == DOC
    ]  # round not shown
    assert r.context == 500  # reset, then the successor's level


async def test_the_context_level_counts_each_message_once_and_warns_once_per_generation(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    # The first reply has two blocks (text + tool_use): the SDK delivers two
    # AssistantMessages with one message_id, which must count as one level report.
    policy = HandoffPolicy(window=60_000, headroom=20_000)  # at 40k, warn at 20k
    main_turns = [
        bash("echo one", say="running it", usage={"input_tokens": 25_000}),
        bash("sleep 20", usage={"input_tokens": 45_000}),
    ]
    successor = [text("finished", usage={"input_tokens": 30_000})]
    scripted_model.play(handoff_script(main_turns=main_turns, successor=successor))
    rt = runtime(handoff=policy)
    events = Events()
    r = await rt.run(spec(), TASK, on_event=events.append)

    assert r.ok and r.text == "finished", r.errors
    assert [p["text"] for p in events.of("text")][:1] == ["running it"]
    assert [p["used"] for p in events.of("context")] == [25_000, 45_000, 30_000]
    assert [p["phase"] for p in events.of("handoff")] == ["near", "writing", "done", "near"]
    assert r.context == 30_000


async def test_prompt_too_long_hands_off_at_once_with_a_degraded_document(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    runtime: Callable[..., Runtime],
) -> None:
    main_turns = [bash("echo one", usage=SMALL), Turn(text="x", fail_always="overflow")]
    scripted_model.play(
        handoff_script(main_turns=main_turns, successor=[text("finished", usage=SMALL)])
    )
    wb = Workbench(workspace, home=tmp_path / "wb")
    rt = runtime(workbench=wb)
    events = Events()
    r = await rt.run(spec(), TASK, step_name="干活", on_event=events.append)

    assert r.ok and r.text == "finished", r.errors
    assert len(r.retired) == 1 and r.attempts == 1 and not events.of("retry")
    assert not scripted_model.requests_for("handoff"), "no round can run on an overflowing session"
    done = events.of("handoff")[-1]
    assert done["phase"] == "done" and done["degraded"] is True
    saved = Handoff.load(wb.notes / "交接-干活.md")
    assert saved is not None and saved.degraded and saved.scene == TASK
    (first,) = scripted_model.requests_for("successor")
    assert TASK in first_user_text(first)


async def test_a_handoff_that_cannot_be_saved_still_reaches_the_successor(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    runtime: Callable[..., Runtime],
) -> None:
    # An agent replaced notes/ with a link out of the workbench: the save is refused,
    # and the step goes on with the document in the successor's prompt.
    main_turns = [bash("echo one", usage=SMALL), Turn(text="x", fail_always="overflow")]
    scripted_model.play(
        handoff_script(main_turns=main_turns, successor=[text("finished", usage=SMALL)])
    )
    wb = Workbench(workspace, home=tmp_path / "wb")
    rt = runtime(workbench=wb)
    outside = tmp_path / "outside"
    outside.mkdir()
    wb.notes.rmdir()
    wb.notes.symlink_to(outside, target_is_directory=True)
    events = Events()
    r = await rt.run(spec(), TASK, step_name="干活", on_event=events.append)

    assert r.ok and r.text == "finished", r.errors
    assert len(r.retired) == 1
    done = events.of("handoff")[-1]
    assert done["phase"] == "done" and done["path"] is None
    assert not list(outside.iterdir())
    (first,) = scripted_model.requests_for("successor")
    assert TASK in first_user_text(first)


async def test_exceeding_max_generations_stops_with_a_diagnostic(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    overflow = Turn(text="x", fail_always="overflow")
    scripted_model.play(handoff_script(main_turns=[overflow], successor=[overflow]))
    rt = runtime(handoff=HandoffPolicy(max_generations=1))
    r = await rt.run(spec(), TASK)
    assert not r.ok and len(r.retired) == 1
    assert r.error is not None and "max_generations=1" in r.error
    assert len(scripted_model.requests_for("successor")) == 1


async def test_an_interrupt_resumes_the_same_session_with_the_humans_line(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    said = "also write a README please"
    scripted_model.play(
        [
            conversation("after", text("noted", usage=SMALL), after_user=said),
            conversation("main", bash("sleep 20", usage=SMALL), first_user=TASK),
        ]
    )
    rt = runtime()
    events = Events()

    def on_event(event: Event) -> None:
        events.append(event)
        if event.kind == "tool":
            assert rt.interrupt(said)

    started = time.monotonic()
    r = await rt.run(spec(), TASK, on_event=on_event)

    assert r.ok and r.text == "noted", r.errors
    assert time.monotonic() - started < 20, "the running Bash was not interrupted"
    assert r.attempts == 1 and not r.resumed and r.errors == [Runtime.INTERRUPTED]
    assert {p["session_id"] for p in events.of("session")} == {r.session_id}
    assert events.of("interrupt") == [{"said": said, "session_id": r.session_id}]
    (last,) = scripted_model.requests_for("after")
    assert TASK in first_user_text(last)
    assert last.tool_results() == {"toolu_main_0_0": INTERRUPTED_NOTE}
    assert said + Runtime.INTERRUPT_NOTE in last_user_text(last)
    assert not rt.interrupt("nobody is running")


async def test_no_credentials_fail_in_the_constructor(
    monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
    ):
        monkeypatch.delenv(name, raising=False)  # fmt: skip
    monkeypatch.chdir(tmp_path)  # no .env above
    with pytest.raises(RuntimeError, match="ANTHROPIC_API_KEY") as info:
        Runtime(workspace=workspace, run_dir=tmp_path / "runs")
    assert "Claude Code login" in str(info.value) and "CLAUDE_CODE_USE_BEDROCK" in str(info.value)
    assert not (tmp_path / "runs").exists(), "nothing may be written before the check"

    (workspace / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-from-dotenv\n")
    rt = Runtime(workspace=workspace, run_dir=tmp_path / "runs")
    rt.close()
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-from-dotenv"


def test_bad_constructor_input_is_one_line(workspace: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a folder"):
        Runtime(workspace=tmp_path / "missing")
    with pytest.raises(TypeError, match="Resilience or a bool"):
        Runtime(workspace=workspace, run_dir=tmp_path / "runs", resilience=3)  # type: ignore[arg-type]
