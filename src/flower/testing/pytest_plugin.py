"""pytest fixtures for testing agent workflows offline (registered through ``pytest11``).

``scripted_model``
    A started :class:`~flower.testing.ScriptedModel` with an empty script; give it one
    with ``scripted_model.play([...])``. Stopped after the test.
``claude_home``
    A fresh temporary ``HOME`` for the CLI (its ``.claude`` is ``CLAUDE_CONFIG_DIR``).
``claude_env``
    The ``env`` for ``ClaudeAgentOptions``: the CLI pointed at ``scripted_model``, offline,
    in ``claude_home``, with ``CLAUDE_CODE_MAX_RETRIES=0``. The same variables are set in
    ``os.environ`` for the test's duration, so code that builds its own options (a
    ``Runtime``) is offline too.
``offline``
    The same variables with no model at all: the endpoint is a loopback port nothing
    listens on, ``HOME`` a fresh temp dir. Make it autouse in a ``conftest.py``
    (``@pytest.fixture(autouse=True) def _offline(offline): ...``) and no test of the
    suite can reach a real model API or the user's own settings.

And one helper, ``flower.testing.need(condition, reason)``: skip with the reason when a
test's server, browser or plugin is missing, but fail under ``CI=true``.

Example::

    import pytest
    from claude_agent_sdk import ClaudeAgentOptions, query
    from flower.testing import bash, conversation, text

    @pytest.mark.anyio
    async def test_lists_files(scripted_model, claude_env, tmp_path):
        scripted_model.play([conversation("main", bash("ls"), text("done"))])
        options = ClaudeAgentOptions(cwd=tmp_path, env=claude_env, allowed_tools=["Bash"])
        async for _ in query(prompt="list the files", options=options):
            pass
        assert scripted_model.last("main").tool_results()
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .env import DEAD_LOOPBACK, offline_env
from .server import ScriptedModel

#: ``CI`` set to a true value: a test that needs a server, a browser or an installed
#: plugin must run there, so :func:`need` fails instead of skipping.
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need(condition: bool, reason: str) -> None:
    """Skip the test (or, at module level, the module) with ``reason`` when ``condition``
    is false; under ``CI=true`` fail instead, so a missing service is never a green run."""
    if not condition:
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: this must run)", pytrace=False)
        pytest.skip(reason, allow_module_level=True)


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    model = ScriptedModel()
    model.start()
    try:
        yield model
    finally:
        model.stop()


@pytest.fixture
def claude_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture
def claude_env(
    scripted_model: ScriptedModel, claude_home: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    return _set(monkeypatch, scripted_model.env(home=claude_home))


@pytest.fixture
def offline(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    home = tmp_path_factory.mktemp("offline-home")
    # The seed's language unless the test chooses: neither the shell's FLOWER_LANG nor a
    # language an earlier test's command pinned in this process carries over.
    monkeypatch.delenv("FLOWER_LANG", raising=False)
    monkeypatch.setattr("flower.kernel.lang._chosen", None)
    monkeypatch.setattr("flower.kernel.lang._settled", False)
    return _set(monkeypatch, offline_env(DEAD_LOOPBACK, home=home))


def _set(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> dict[str, str]:
    """``env`` into ``os.environ`` for the test; an empty value removes the variable."""
    for name, value in env.items():
        if value:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)
    return env
