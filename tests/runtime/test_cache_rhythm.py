"""The 1-hour prompt cache, asked for when a step's sessions wait long between them
(``runtime/cache_rhythm.py``): the real CLI's requests carry ``"ttl": "1h"`` exactly then,
and the scripted model bills the hour's writes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, query

from flower.roles.agent import AgentSpec
from flower.runtime.cache_rhythm import SUBAGENT_TTL_VARIABLE, TTL_VARIABLE, CacheRhythm
from flower.runtime.runner import Runtime
from flower.testing import RecordedRequest, ScriptedModel, conversation, text, tool

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ttls(request: RecordedRequest) -> set[str]:
    """The TTLs of the request's cache breakpoints ("5m" where none is named)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            marker = value.get("cache_control")
            if isinstance(marker, dict):
                found.add(str(marker.get("ttl") or "5m"))
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(request.body)
    return found


def test_the_hour_is_asked_for_once_the_waits_are_long() -> None:
    rhythm = CacheRhythm(threshold=240.0, recent=3)
    assert rhythm.ttl("coord") is None  # nothing seen yet: the default
    rhythm.ended("s1", 1000.0)
    rhythm.started("coord", "s1", 1010.0)  # a burst: 10 s
    assert rhythm.ttl("coord") is None
    for n, at in enumerate((1400.0, 1800.0)):  # two waits of about 6 minutes, as rounds
        rhythm.ended("s1", at - 370.0)
        rhythm.started(f"coord#round{n + 2}", "s1", at)
    assert rhythm.ttl("coord") == "1h"  # median of 10, 370, 370
    assert rhythm.ttl("judge") is None  # another step's rhythm is its own
    rhythm.started("coord", "other", 5000.0)  # a session it never saw end: no wait
    assert rhythm.ttl("coord") == "1h"
    assert CacheRhythm(enabled=False).ttl("coord") is None


def test_what_the_user_set_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    rhythm = CacheRhythm(threshold=0.0)
    rhythm.ended("s", 1.0)
    rhythm.started("step", "s", 2.0)
    monkeypatch.delenv(TTL_VARIABLE, raising=False)
    monkeypatch.delenv(SUBAGENT_TTL_VARIABLE, raising=False)
    assert rhythm.env("step", {}) == {TTL_VARIABLE: "1h", SUBAGENT_TTL_VARIABLE: "1h"}
    assert rhythm.env("step", {TTL_VARIABLE: "5m"}) == {}
    assert rhythm.env("step", {SUBAGENT_TTL_VARIABLE: "5m"}) == {TTL_VARIABLE: "1h"}
    monkeypatch.setenv(SUBAGENT_TTL_VARIABLE, "5m")
    assert rhythm.env("step", {}) == {TTL_VARIABLE: "1h"}
    monkeypatch.setenv(TTL_VARIABLE, "5m")
    assert rhythm.env("step", {}) == {}


@pytest.mark.e2e
async def test_the_subagents_of_a_session_on_the_hour_ask_for_it_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real CLI: with what the rhythm adds, a worker dispatched by ``Agent``
    caches for the hour like its coordinator; without, it keeps the CLI's 5 minutes."""
    monkeypatch.delenv(TTL_VARIABLE, raising=False)
    monkeypatch.delenv(SUBAGENT_TTL_VARIABLE, raising=False)
    rhythm = CacheRhythm(threshold=0.0)
    rhythm.ended("s", 1.0)
    rhythm.started("coordinator", "s", 2.0)
    seen = {}
    for label, extra in (("hour", rhythm.env("coordinator", {})), ("default", {})):
        dispatch = tool("Agent", {"description": "w", "prompt": f"task {label}",
                                  "subagent_type": "general-purpose"})  # fmt: skip
        script = [
            conversation("main", dispatch, text("done"), first_user=f"go {label}"),
            conversation("worker", text("report"), first_user=f"task {label}", subagent=True),
        ]
        with ScriptedModel(script) as model:
            options = ClaudeAgentOptions(
                cwd=tmp_path, env={**model.env(home=tmp_path / label), **extra},
                allowed_tools=["Agent"],
            )  # fmt: skip
            async for _ in query(prompt=f"go {label}", options=options):
                pass
            seen[label] = (ttls(model.last("main")), ttls(model.last("worker")))
    assert seen["hour"] == ({"1h"}, {"1h"})
    assert seen["default"] == ({"5m"}, {"5m"})


@pytest.mark.e2e
async def test_a_session_resumed_after_long_waits_asks_for_the_hour(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    make_runtime: Callable[..., Runtime],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TTL_VARIABLE, raising=False)
    scripted_model.play(
        [
            conversation("third", text("three"), after_user="round 3"),
            conversation("second", text("two"), after_user="round 2"),
            conversation("first", text("one" * 400), first_user="round 1"),
        ]
    )
    spec = AgentSpec(name="coordinator", instructions="Be terse.")
    # a "long" wait of a second stands for the judge's minutes
    rt = make_runtime(cache=CacheRhythm(threshold=0.5, recent=1))
    first = await rt.run(spec, "round 1")
    second = await rt.run(spec, "round 2", resume=first.session_id)  # at once: a burst
    time.sleep(1.0)
    third = await rt.run(spec, "round 3", resume=first.session_id)
    assert first.ok and second.ok and third.ok
    assert ttls(scripted_model.last("first")) == {"5m"}
    assert ttls(scripted_model.last("second")) == {"5m"}
    assert ttls(scripted_model.last("third")) == {"1h"}
    written = scripted_model.last("third").usage.get("cache_creation", {})
    assert written.get("ephemeral_1h_input_tokens", 0) > 0  # billed at the hour's price
    # the store knows the session's cache lives an hour (a load within it is warm)
    assert rt.store.cache_lifetimes == {first.session_id: 3600.0}
    never = make_runtime(cache=False)
    assert never.cache.ttl("coordinator") is None


def test_a_median_wait_of_exactly_four_minutes_keeps_the_default() -> None:
    """The default threshold is 240 s and only a median over it asks for the hour; a
    wait of nothing (resumed the moment it ended) counts as a wait."""
    rhythm = CacheRhythm()
    rhythm.ended("s", 100.0)
    rhythm.started("step", "s", 340.0)  # exactly 240 s
    assert rhythm.ttl("step") is None
    rhythm.ended("s", 400.0)
    rhythm.started("step", "s", 640.5)
    rhythm.ended("s", 700.0)
    rhythm.started("step", "s", 940.5)
    assert rhythm.ttl("step") == "1h"  # median of 240, 240.5, 240.5
    rhythm.ended("s", 1000.0)
    rhythm.started("step", "s", 1000.0)  # no wait at all: one more, the median drops
    rhythm.ended("s", 1000.0)
    rhythm.started("step", "s", 1000.0)
    assert rhythm.ttl("step") is None  # median of 240.5, 0, 0


def test_the_ttl_is_pinned_so_the_store_knows_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every session flower drives gets the CLI's TTL pinned (five minutes unless the
    rhythm asks for the hour, or the user's ``ENABLE_PROMPT_CACHING_1H`` did), so the
    store can give its own cache mark the same TTL; whatever the user chose, in the
    environment, the agent's ``env`` or a settings file, is left alone and read."""
    from flower.runtime.cache_rhythm import marks_ttl

    for name in (TTL_VARIABLE, SUBAGENT_TTL_VARIABLE, "FORCE_PROMPT_CACHING_5M",
                 "ENABLE_PROMPT_CACHING_1H"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    import flower.runtime.cache_rhythm as cache_rhythm

    managed = tmp_path / "etc-claude-code"  # not this machine's own policy, if any
    monkeypatch.setattr(cache_rhythm, "MANAGED_DIR", managed)
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    rhythm = CacheRhythm()
    assert rhythm.env("step", {}, project) == {TTL_VARIABLE: "5m"}
    assert marks_ttl({}, rhythm.env("step", {}, project), cwd=project) == "5m"
    assert rhythm.env("step", {"ENABLE_PROMPT_CACHING_1H": "1"}) == {TTL_VARIABLE: "1h"}
    assert rhythm.env("step", {TTL_VARIABLE: "1h"}) == {}
    assert marks_ttl({TTL_VARIABLE: "1h"}, {}) == "1h"
    assert marks_ttl({TTL_VARIABLE: "10m"}, {}) is None  # not one the API knows: no mark
    assert rhythm.env("step", {"FORCE_PROMPT_CACHING_5M": "1"}) == {}
    assert marks_ttl({"FORCE_PROMPT_CACHING_5M": "1"}, {TTL_VARIABLE: "1h"}) == "5m"
    assert CacheRhythm(enabled=False).env("step", {}) == {}
    assert marks_ttl({}, {}, cwd=project) is None  # the CLI's default: not known
    # a settings file's promptCacheTtl: the project's local one first, then the user's
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.json").write_text('{"promptCacheTtl": "1h"}')
    assert rhythm.env("step", {}, project) == {}
    assert marks_ttl({}, {}, cwd=project) == "1h"
    (project / ".claude" / "settings.local.json").write_text('{"promptCacheTtl": "5m"}')
    assert marks_ttl({}, {}, cwd=project) == "5m"
    (project / ".claude" / "settings.local.json").write_text("{not json")
    assert marks_ttl({}, {}, cwd=project) == "1h"
    # the setting beats the rhythm's hour too: the CLI would let flower's variable win
    slow = CacheRhythm()
    for at in (0.0, 300.0, 600.0):
        slow.ended("s", at)
        slow.started("step", "s", at + 300.0)
    assert slow.ttl("step") == "1h"
    (project / ".claude" / "settings.local.json").write_text('{"promptCacheTtl": "5m"}')
    assert slow.env("step", {}, project) == {}
    # a subagent setting keeps the subagents' TTL; the main conversation takes the hour
    (tmp_path / "config" / "settings.json").write_text('{"subagentPromptCacheTtl": "5m"}')
    (project / ".claude" / "settings.local.json").unlink()
    assert slow.env("step", {}, project) == {TTL_VARIABLE: "1h"}
    (tmp_path / "config" / "settings.json").write_text("{}")
    assert slow.env("step", {}, project) == {TTL_VARIABLE: "1h", SUBAGENT_TTL_VARIABLE: "1h"}
    # an administrator's managed settings outrank them all, a later drop-in first
    (managed / "managed-settings.d").mkdir(parents=True)
    (managed / "managed-settings.json").write_text('{"promptCacheTtl": "5m"}')
    (project / ".claude" / "settings.local.json").write_text('{"promptCacheTtl": "1h"}')
    assert marks_ttl({}, {}, cwd=project) == "5m"
    assert slow.env("step", {}, project) == {}
    (managed / "managed-settings.d" / "10-a.json").write_text('{"promptCacheTtl": "5m"}')
    (managed / "managed-settings.d" / "20-b.json").write_text('{"promptCacheTtl": "1h"}')
    assert marks_ttl({}, {}, cwd=project) == "1h"
