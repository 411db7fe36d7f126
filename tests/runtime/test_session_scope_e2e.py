"""The ``flower_session_scope`` hook through a real ``Runtime.run``: a plugin's scope is
entered before the CLI starts (what it adds to the environment reaches the CLI's tools),
is exited once per session with the final outcome, sees the retry as a second attempt,
and cannot break the run by raising, nor hide how a session ended."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flower import hookimpl
from flower.plugin_types import SessionRequest
from flower.plugins import get_plugin_manager
from flower.roles.agent import AgentSpec
from flower.runtime.resilience import Resilience
from flower.runtime.runner import Runtime
from flower.runtime.scope import SessionScopes
from flower.testing import ScriptedModel, Turn, bash, conversation

SMALL = {"input_tokens": 500, "output_tokens": 7}


class Scoped:
    """Adds a variable to every session's CLI and notes what it saw on the way out."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, bool, Any, dict[str, Any] | None, str | None]] = []

    @hookimpl
    def flower_session_scope(self, session: SessionRequest) -> Any:
        @contextlib.contextmanager
        def scope() -> Iterator[None]:
            session.env.setdefault("FLOWER_SCOPE_MARK", f"{session.step}-{session.attempt}")
            yield
            out = session.outcome
            self.seen.append(
                (session.step, session.attempt, out.ok, out.session_id, out.usage, out.model)
            )

        return scope()


class Broken:
    @hookimpl
    def flower_session_scope(self, session: SessionRequest) -> Any:
        class Bad:
            def __enter__(self) -> None:
                raise RuntimeError("tracer down")

            def __exit__(self, *exc: object) -> None:
                raise RuntimeError("never reached")

        return Bad()


@pytest.fixture
def plugins() -> Iterator[list[object]]:
    pm = get_plugin_manager()
    made = [Scoped(), Broken()]
    for plugin in made:
        pm.register(plugin, name=f"test-scope-{type(plugin).__name__}")
    try:
        yield made
    finally:
        for plugin in made:
            pm.unregister(plugin)


@pytest.mark.e2e
@pytest.mark.anyio
async def test_a_scope_wraps_every_session_and_reaches_the_cli(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    plugins: list[Any],
    capfd: pytest.CaptureFixture[str],
) -> None:
    scripted_model.play(
        [
            conversation(
                "main",
                bash("echo mark=$FLOWER_SCOPE_MARK", usage=SMALL),
                Turn(text="done", faults=[500], usage=SMALL),  # attempt 1 fails: a retry
            )
        ]
    )
    quick = Resilience(base_delay=0.05, max_delay=0.2, probe_interval=0.1, probe_timeout=0.5)
    spec = AgentSpec(name="w", instructions="Be terse.", allowed_tools=["Bash"])
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs", resilience=quick) as rt:
        r = await rt.run(spec, "go", step_name="甲")
    assert r.ok and r.attempts == 2, r.errors
    (first,) = [q for q in scripted_model.requests_for("main") if q.turn == 1][:1]
    assert "mark=甲-1" in " ".join(first.tool_results().values())
    scoped = plugins[0]
    assert [(step, n, ok) for step, n, ok, *_ in scoped.seen] == [("甲", 1, False), ("甲", 2, True)]
    _, _, _, sid, usage, model = scoped.seen[1]
    assert sid == r.session_id and usage and usage["output_tokens"] >= 7 and model
    assert "a session scope failed entering a session: RuntimeError('tracer down')" in (
        capfd.readouterr().err
    )


def test_scopes_never_swallow_the_exception_that_ended_a_session() -> None:
    class Swallower:
        def __init__(self) -> None:
            self.exited_with: Any = None

        def __enter__(self) -> None:
            pass

        def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
            self.exited_with = kind
            return True  # tries to hide it

    swallower = Swallower()

    class Plugin:
        @hookimpl
        def flower_session_scope(self, session: SessionRequest) -> Any:
            return swallower

    pm = get_plugin_manager()
    plugin = Plugin()
    pm.register(plugin, name="test-scope-swallower")
    try:
        request = SessionRequest(runtime=None, spec=AgentSpec(name="x", instructions=""), step="s")
        with pytest.raises(ValueError, match="the CLI died"), SessionScopes(request):
            raise ValueError("the CLI died")
    finally:
        pm.unregister(plugin)
    assert swallower.exited_with is ValueError
