"""A clean slate for credential tests: no key, no endpoint, no proxy, private folders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from flower.kernel import env as envmod

KEYS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "FLOWER_ENV",
    "FLOWER_NO_PROBE",
    "http_proxy",
    "https_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "all_proxy",
)


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No credential anywhere; cwd, HOME and XDG_CONFIG_HOME in ``tmp_path``."""
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    saved = dict(envmod._origins)
    envmod._origins.clear()
    yield tmp_path
    envmod._origins.clear()
    envmod._origins.update(saved)
