"""The main command trims resumed sessions by default; ``--no-trim`` turns it off.

What is under test is what ``flower`` hands the Runtime, seen where it takes effect: the
session store the Runtime builds. A plugin registered on the real plugin manager takes
the ``flower_session_store`` call, builds the default store from the very settings the
Runtime passed (so what it records is the store a run would resume from), then stops the
run with a one-line refusal before any session starts: no model is called.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flower import hookimpl
from flower.cli import main
from flower.plugins import get_plugin_manager
from flower.stores.trim import TrimmingSessionStore

STOP = "the test stops here, before any session"


class Recorder:
    """A storage plugin that records the store the Runtime would have used."""

    def __init__(self) -> None:
        self.stores: list[TrimmingSessionStore] = []

    @hookimpl(tryfirst=True)
    def flower_session_store(self, settings: Any) -> Any:
        from flower_plugins.store import build

        store = build(settings.run_dir / "sessions.db", settings)
        assert isinstance(store, TrimmingSessionStore)
        self.stores.append(store)
        store.close()
        raise RuntimeError(STOP)


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    # flower checks that something answers at the API's address before it opens the run
    # (``commands/startup.py``): a listening socket answers the handshake, nothing more
    with socket.create_server(("127.0.0.1", 0)) as listener:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{listener.getsockname()[1]}")
        yield from _registered()


def _registered() -> Iterator[Recorder]:
    pm = get_plugin_manager()
    plugin = Recorder()
    pm.register(plugin, name="test-trim-recorder")
    try:
        yield plugin
    finally:
        pm.unregister(plugin)


def flower(tmp_path: Path, *args: str) -> str:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    result = CliRunner().invoke(main, ["-w", str(ws), *args])
    assert STOP in result.output, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.mark.parametrize(
    ("args", "trims"),
    [
        (["make X"], True),  # the main job: on by default
        (["go", "make X"], True),
        (["--no-trim", "make X"], False),
        (["make X", "--no-trim"], False),
        (["go", "--no-trim", "make X"], False),
        (["-T", "make X"], True),  # the global flag agrees with the default
        (["once", "fix it"], False),  # one agent, one step: off unless -T
        (["-T", "once", "fix it"], True),
    ],
)
def test_what_flower_hands_the_runtime(
    recorder: Recorder, tmp_path: Path, args: list[str], trims: bool
) -> None:
    flower(tmp_path, *args)
    (store,) = recorder.stores
    assert store.policy.enabled is trims
    # the rest of the policy is the seed's default: only the switch differs
    assert (store.policy.keep_recent, store.policy.min_chars) == (20, 2000)
    assert store.ephemeral.enabled is True  # expiry is not what --no-trim turns off
