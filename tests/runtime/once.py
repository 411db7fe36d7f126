"""``flower once`` as a subprocess: what the once tests share."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

FLOWER = str(Path(sys.executable).with_name("flower"))
#: Usage that keeps the context line short and the cost in cents.
SMALL = {"input_tokens": 500}


def run_once(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FLOWER, "once", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def session_of(output: str) -> str:
    """The one ``session: <id>`` line of a once run's output."""
    found = re.findall(r"^session: (\S+)$", output, re.MULTILINE)
    assert len(found) == 1, output
    return found[0]
