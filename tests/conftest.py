"""Test-wide guards: nothing in flower's test suite may reach a real model API.

Every test starts with the CLI's endpoint pointed at a closed loopback port, a fake key,
non-essential traffic off and ``HOME``/``CLAUDE_CONFIG_DIR`` in a temp dir. Tests that
run the CLI use the ``claude_env`` fixture (flower.testing's pytest plugin), which points
the same variables at the scripted model instead. Nothing a test starts reaches past
loopback either: builds and installs run without an index (``local_env``).

Shared fixtures: ``anyio_backend`` (asyncio, for every ``@pytest.mark.anyio`` test),
``make_runtime`` (Runtimes that close themselves), ``flower_wheel`` (the wheel, built
once per session for all xdist workers).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from flower.runtime.runner import Runtime

REPO = Path(__file__).resolve().parents[1]

# Property tests run on a loaded two-core machine as well as an idle one: hypothesis's
# 200 ms deadline per example measures the machine, not the code (two failed that way).
try:
    from hypothesis import settings as _hypothesis

    _hypothesis.register_profile("flower", deadline=None)
    _hypothesis.load_profile("flower")
except ImportError:  # pragma: no cover - hypothesis comes with the dev extras
    pass

# With PYTHONDONTWRITEBYTECODE set (as on the development machine) pytest cannot cache the
# assertion-rewritten test modules either, so every xdist worker parses and rewrites all of
# them on every run: about 2 s of CPU per worker. Python's default is back on for the test
# processes: modules compiled from here on are cached in their __pycache__ (git-ignored)
# and recompiled whenever a source file changes.
sys.dont_write_bytecode = False


@pytest.fixture(autouse=True)
def _offline(offline: dict[str, str]) -> None:
    """Every test starts offline (flower.testing's ``offline`` fixture)."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """The one event loop flower runs on (anyio would also try trio where it is installed)."""
    return "asyncio"


@pytest.fixture
def make_runtime(workspace: Path, tmp_path: Path) -> Iterator[Callable[..., Runtime]]:
    """``make_runtime(**kw)``: a Runtime on ``workspace`` with ``tmp_path / "runs"``, closed
    at teardown (closing it earlier, or using it as a context manager, is fine too)."""
    from flower.runtime.runner import Runtime

    made: list[Runtime] = []

    def make(**kw: Any) -> Runtime:
        kw.setdefault("workspace", workspace)
        kw.setdefault("run_dir", tmp_path / "runs")
        made.append(Runtime(**kw))
        return made[-1]

    yield make
    for rt in reversed(made):
        rt.close()


def local_env(home: Path) -> dict[str, str]:
    """The environment for a build or pip install that must stay on this machine: no
    index, no user config or cache, HOME in the test's own folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        HOME=str(home),
        PIP_NO_INDEX="1",
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_CACHE_DIR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def once_per_session(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]
) -> Path:
    """``make(folder)`` once per test session, shared by every xdist worker; the folder.

    Workers take a file lock in the session's shared temp root: the first one makes the
    folder, the others wait for it and reuse it.
    """
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / f"shared-{name}"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            done = folder / ".done"
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)  # a half-made one from a failure
                folder.mkdir()
                make(folder)
                done.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


@pytest.fixture(scope="session")
def flower_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """flower's wheel as a user gets it, built from this checkout without an index
    (``--no-isolation``: the build backend installed with the dev extras)."""

    def build(out: Path) -> None:
        command = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir"]
        built = subprocess.run(
            [*command, str(out), str(REPO)],
            capture_output=True,
            text=True,
            timeout=300,
            env=local_env(out.parent / "wheel-home"),
        )
        assert built.returncode == 0, built.stderr[-2000:]

    (wheel,) = once_per_session(tmp_path_factory, "wheel", build).glob("flower-*.whl")
    return wheel
