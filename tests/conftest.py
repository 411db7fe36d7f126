"""Test-wide guards: nothing in flower's test suite may reach a real model API.

Every test starts with the CLI's endpoint pointed at a closed loopback port, a fake key,
non-essential traffic off and ``HOME``/``CLAUDE_CONFIG_DIR`` in a temp dir. Tests that
run the CLI use the ``claude_env`` fixture (flower.testing's pytest plugin), which points
the same variables at the scripted model instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flower.testing.env import offline_env

DEAD_LOOPBACK = "http://127.0.0.1:9"  # discard port: nothing listens, connections are refused


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("offline-home")
    for name, value in offline_env(DEAD_LOOPBACK, home=home).items():
        if value:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws
