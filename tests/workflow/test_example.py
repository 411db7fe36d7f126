"""The example docs/workflow.md points at runs as documented (real CLI, scripted model)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workflow_offline.py"


def test_the_offline_workflow_example_runs_and_says_what_the_docs_say(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    woke = [line for line in lines if line.startswith("woke ")]
    assert len(woke) == 2 and woke[0].split()[3] == woke[1].split()[3]  # the same session
    assert "said '还是苹果'" in woke[1]
    assert "failed at: None; cost" in done.stdout and "hello.txt: hi" in done.stdout
    assert "'干活·判定#1', '干活#round2', '干活·判定#2'" in done.stdout
