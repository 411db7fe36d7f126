"""The context window comes from the CLI for the model in use, not from its name.

Measured with CLI 2.1.332: ``claude-sonnet-4-5`` has a 200,000-token window, which its
name alone guesses at 1M. With the guess, a handoff planned at 950k never fires and the
session runs into "prompt is too long"; with the CLI's figure it is handed off, planned,
at 150k.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from flower.records.workbench import Workbench
from flower.roles.agent import HandoffPolicy
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, bash, text

from . import test_runtime_e2e as base
from .test_runtime_e2e import SMALL, TASK, Events, handoff_script, spec

runtime = base.runtime  # the fixture: a Runtime on the workspace with test-speed resilience
pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def test_a_200k_model_is_handed_off_before_its_window_is_full(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    runtime: Callable[..., Runtime],
) -> None:
    policy = HandoffPolicy()  # the default: a guess (1M for this name) the CLI corrects
    assert policy.guessed
    main_turns = [
        bash("echo one", usage={"input_tokens": 120_000}),
        bash("echo two", usage={"input_tokens": 5_000, "cache_read_input_tokens": 160_000}),
        text("never reached", usage=SMALL),
    ]
    scripted_model.play(
        handoff_script(main_turns=main_turns, successor=[text("finished", usage=SMALL)])
    )
    rt = runtime(handoff=policy, workbench=Workbench(workspace, home=tmp_path / "wb"))
    events = Events()

    r = await rt.run(
        spec(model="claude-sonnet-4-5"), TASK, step_name="干活", on_event=events.append
    )

    assert r.ok and r.text == "finished", r.errors
    assert r.errors == [Runtime.HANDOFF_DUE]  # planned: never "prompt is too long"
    levels = events.of("context")
    assert levels[0]["window"] == 200_000 and levels[0]["at"] == 150_000
    assert [p["phase"] for p in events.of("handoff")] == ["near", "writing", "done"]
    assert events.of("handoff")[-1]["degraded"] is False
    assert max(p["used"] for p in levels) == 165_000


async def test_a_window_you_give_wins_over_the_clis(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    scripted_model.play(
        handoff_script(main_turns=[text("done", usage={"input_tokens": 100_000})], successor=[])
    )
    rt = runtime(handoff=HandoffPolicy(window=300_000))
    events = Events()
    r = await rt.run(spec(model="claude-sonnet-4-5"), TASK, on_event=events.append)
    assert r.ok and [p["window"] for p in events.of("context")] == [300_000]
    assert not events.of("handoff")  # 100k is far from 250k


async def test_a_1m_model_keeps_its_window_and_the_guess_is_not_trusted_blindly(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    """Until the CLI reports, a guessed window plans with 200k at most; the report (1M for
    the default scripted model) is what the session then runs with. The question comes
    after the first reply (never before the first request), and a level past the
    conservative plan's handoff point (160k > 150k) waits for the answer instead of
    handing off too early."""
    scripted_model.play(
        handoff_script(main_turns=[text("done", usage={"input_tokens": 160_000})], successor=[])
    )
    rt = runtime()  # HandoffPolicy() by default: guessed
    events = Events()
    r = await rt.run(spec(), TASK, on_event=events.append)
    assert r.ok and events.of("context")[0]["window"] == 200_000  # the conservative plan
    assert not events.of("handoff") and r.errors == []  # 160k waited for the answer
    from flower.runtime import windows

    assert windows.known(windows.key_for(None, claude_env)) == 1_000_000  # the report


async def test_a_known_window_costs_no_question_before_the_first_request(
    scripted_model: ScriptedModel, claude_env: dict[str, str], runtime: Callable[..., Runtime]
) -> None:
    """The CLI answers ``get_context_usage()`` with seven ``count_tokens`` calls. A model's
    window is asked for once (after the first session's first request), learned from the
    result, and never asked for again: not by the next session of the process, not by
    the next process (the user's cache)."""
    from flower.runtime import windows
    from flower.testing import conversation

    scripted_model.play([conversation("main", text("one"), text("two"), text("three"))])
    rt = runtime()
    first = await rt.run(spec(model="claude-sonnet-4-5"), TASK, step_name="一")
    assert first.ok, first.errors
    paths = [r.path for r in scripted_model.requests]
    assert paths[0].startswith("/v1/messages?"), paths  # no question before the first request
    key = windows.key_for("claude-sonnet-4-5", claude_env)
    assert windows.known(key) == 200_000  # learned: from the probe or the result

    served = len(scripted_model.requests)
    again = await rt.run(spec(model="claude-sonnet-4-5"), TASK, step_name="二")
    assert again.ok, again.errors
    later = [r.path for r in scripted_model.requests[served:]]
    assert not [p for p in later if "count_tokens" in p], later  # asked once, never again

    windows.forget()  # a new process: the user's cache answers
    served = len(scripted_model.requests)
    third = await rt.run(spec(model="claude-sonnet-4-5"), TASK, step_name="三")
    assert third.ok, third.errors
    assert not [r for r in scripted_model.requests[served:] if "count_tokens" in r.path]
