"""Shared setup for the glance tests: the ``sandbox`` marker.

The marker is registered here rather than in pyproject.toml so that this folder owns it:
``pytest -m "not sandbox"`` leaves out the slow run of every accepted glance under strace
(test_sandbox.py), and ``--strict-markers`` (the project's addopts) still knows the name.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sandbox: runs every accepted glance for real under strace in a network namespace with "
        "only loopback (slow; skipped where impossible, failing instead under CI=true)",
    )
