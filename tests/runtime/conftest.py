"""Fixtures of the runtime tests."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def env(claude_env: dict[str, str]) -> dict[str, str]:
    """The process environment for a ``flower`` subprocess against the scripted model."""
    return {**os.environ, **{k: v for k, v in claude_env.items() if v}, "COLUMNS": "200"}
