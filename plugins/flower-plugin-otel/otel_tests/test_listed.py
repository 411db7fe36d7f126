"""``pip install -e ./plugins/flower-plugin-otel`` is enough: ``flower plugins list``
shows the distribution by its entry point, with both hooks it implements, loaded."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN
from .scenario import flower_command


def test_flower_plugins_list_shows_the_plugin(tmp_path: Path) -> None:
    need(PLUGIN, NOT_INSTALLED)
    listed = subprocess.run(
        [flower_command(), "plugins", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=dict(os.environ),  # the offline fixture's, not the shell's
    )
    assert listed.returncode == 0, listed.stderr
    (row,) = [r for r in json.loads(listed.stdout) if r["name"] == "flower-plugin-otel"]
    assert row["status"] == "ok" and row["error"] is None
    assert row["hooks"] == ["flower_event", "flower_session_scope"]
    assert [p["name"] for p in row["plugins"]] == ["otel"]
