"""A real OTLP backend for the tests: Arize Phoenix, started on loopback, queried through
its own REST API, its SQLite database searched as stored.

Phoenix pins much of what flower also uses (SQLAlchemy, starlette...), so it lives in a
virtualenv of its own: ``plugins/flower-plugin-otel/.backend`` (``.ci/run`` makes it:
``python3 -m venv .backend && .backend/bin/pip install arize-phoenix``), or wherever
``FLOWER_OTEL_PHOENIX`` points (the ``phoenix`` executable).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from flower.testing import need

# test_backend_e2e.py imports this module first: without the test extras the module is
# skipped with the reason (a failure under CI=true), never a collection error.
need(
    importlib.util.find_spec("httpx") is not None,
    "the otel tests need httpx: pip install -e './plugins/flower-plugin-otel[test]'",
)
import httpx  # noqa: E402 - after the check

HERE = Path(__file__).resolve().parents[1]
DEFAULT_PHOENIX = HERE / ".backend" / "bin" / "phoenix"
INSTALL = (
    "Arize Phoenix is not installed for the tests: python3 -m venv"
    " plugins/flower-plugin-otel/.backend && plugins/flower-plugin-otel/.backend/bin/pip"
    " install arize-phoenix (or set FLOWER_OTEL_PHOENIX to a phoenix executable)"
)


def phoenix_executable() -> Path | None:
    named = os.environ.get("FLOWER_OTEL_PHOENIX")
    path = Path(named) if named else DEFAULT_PHOENIX
    return path if path.is_file() and os.access(path, os.X_OK) else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Phoenix:
    """One Phoenix server in ``home``: start it, wait for it, query it, stop it."""

    def __init__(self, executable: Path, home: Path) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(home),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        for name in [n for n in env if n.startswith("OTEL_")]:
            del env[name]  # Phoenix traces itself when told to: not into itself
        self.log = open(home / "phoenix.log", "w")
        self.process = subprocess.Popen(
            [str(executable), "serve"],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"phoenix exited: {(self.home / 'phoenix.log').read_text()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise TimeoutError(f"phoenix did not answer within {timeout:.0f}s")

    def spans(
        self, project: str = "default", *, expect: int = 0, within: float = 30.0
    ) -> list[Any]:
        """Every span of ``project`` (all pages); waits until at least ``expect`` arrived."""
        deadline = time.monotonic() + within
        while True:
            found: list[Any] = []
            cursor: str | None = None
            while True:
                params: dict[str, Any] = {"limit": 1000}
                if cursor:
                    params["cursor"] = cursor
                got = httpx.get(
                    f"{self.url}/v1/projects/{project}/spans", params=params, timeout=30
                )
                if got.status_code == 404:  # no span yet: the project does not exist
                    break
                got.raise_for_status()
                body = got.json()
                found += body["data"]
                cursor = body.get("next_cursor")
                if not cursor:
                    break
            if len(found) >= expect or time.monotonic() > deadline:
                return found
            time.sleep(0.5)

    def project_id(self, name: str = "default") -> str:
        got = httpx.get(f"{self.url}/v1/projects/{name}", timeout=30)
        got.raise_for_status()
        return str(got.json()["data"]["id"])

    def stored_bytes(self) -> bytes:
        """Everything Phoenix keeps on disk (its SQLite database and journal)."""
        out = b""
        for path in sorted(self.home.rglob("*")):
            if path.is_file() and path.name != "phoenix.log":
                out += path.read_bytes()
        return out

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()
