"""The README's offline demo, step by step as a newcomer would type it.

``flower scripted-model serve examples/starter-demo.json`` prints the variables that point
the CLI at it; with those, ``flower "写个 hello.txt"`` in a terminal clarifies (one
question, answered with a digit), sets a goal, works two rounds and ends with the cost.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from .terminal import FLOWER, Flower

pytestmark = pytest.mark.e2e

DEMO = Path(__file__).resolve().parents[2] / "examples" / "starter-demo.json"


def test_the_readme_demo_runs_offline_from_a_clean_folder(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [FLOWER, "scripted-model", "serve", str(DEMO), "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        exports: dict[str, str] = {}
        deadline = time.monotonic() + 30
        assert server.stdout is not None
        while "CLAUDE_CODE_MAX_RETRIES" not in exports:
            assert time.monotonic() < deadline and server.poll() is None
            line = server.stdout.readline()
            if line.startswith("export "):
                name, _, value = line[len("export ") :].strip().partition("=")
                exports[name] = value.strip("'\"")
        demo = tmp_path / "flower-demo"
        run = Flower("-w", str(demo), "写个 hello.txt", cwd=tmp_path, env=exports)
        run.expect("answer 1-2")
        run.type("1")
        assert run.finish() == 0, run.text[-3000:]
        assert (demo / "hello.txt").read_text() == "hi"
        for seen in ("确认需求", "1/3", "not yet", "achieved", "done - total $"):
            assert seen in run.text, seen
        # The judge's own answer is summed up by the verdict line, not printed before it.
        assert "## 结论" not in run.text and run.text.count("逐条核对过") == 1
        assert "left a note for the next tool in CLAUDE.md (created), AGENTS.md (created)" in (
            " ".join(run.text.split())
        )
        assert "一个演示项目" in (demo / "CLAUDE.md").read_text(encoding="utf-8")
        assert str(demo / "runs" / "manifest.json") in run.text or "manifest:" in run.text
        home = exports["HOME"]
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert not os.path.exists(home)  # the server removes its temporary HOME
