"""Held-out checks: acceptance scripts the judge writes and the workers never see.

A worker that can read the test it is judged by builds to the test, and one that can
write it weakens it until it passes. So when it sets the goal, the judge may also hand
flower acceptance scripts, in a section of its answer::

    ## 暗检脚本            (or: ## Held-out checks)
    ### check_cli.sh
    ```sh
    out=$(python -m tool --help) && grep -q usage <<<"$out"
    ```

and list each among the checks as a runnable check of its own, with what it verifies:
``- `bash $FLOWER_HELD_OUT/check_cli.sh` exits 0 (the CLI prints its usage)``.

flower writes them to the run's folder in the user's state directory
(``~/.local/state/flower/runs/<run id>/held-out/``), outside the workspace: every home is
hidden from the workers (the sandbox for Bash, the reach guard for Read, Glob and Grep),
so no worker can read, list, link to or write them, and they are in no repository. The
check runner mounts them read-only at ``$FLOWER_HELD_OUT``. They are frozen with the goal:
kept in the run's store with their hash and checked (put back when changed) before every
round's checks (:mod:`flower.records.frozen_copy`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["held_out_dir", "parse_scripts", "replace_scripts", "verify_scripts"]

_SECTION = re.compile(r"^#{1,2}\s*(?:暗检脚本|held-out checks?)\s*$", re.I | re.M)
_SCRIPT = re.compile(
    r"^###\s*`?(?P<name>[A-Za-z0-9][\w.-]{0,63})`?\s*\n+```[^\n]*\n(?P<body>.*?)\n```",
    re.M | re.S,
)
_NEXT_SECTION = re.compile(r"^#{1,2}\s+\S", re.M)


def parse_scripts(answer: str) -> dict[str, str]:
    """The held-out scripts of a goal setter's answer: name -> text ({} when none)."""
    found = _SECTION.search(answer or "")
    if found is None:
        return {}
    rest = answer[found.end() :]
    end = _NEXT_SECTION.search(rest)
    section = rest[: end.start()] if end else rest
    return {m.group("name"): m.group("body") + "\n" for m in _SCRIPT.finditer(section)}


def held_out_dir(run: str) -> Path:
    """Run ``run``'s held-out folder (outside the workspace, in a home the workers never see)."""
    from flower.records.state_copy import state_path

    return state_path(run).parent / "held-out"


def _run(runtime: Any) -> str:
    from flower.records.ledger import run_id_of

    return run_id_of(runtime)


def replace_scripts(runtime: Any, scripts: dict[str, str]) -> list[Path]:
    """Make ``scripts`` the run's held-out scripts (mode 0700), each kept as frozen; the
    scripts of a goal set before are removed (a goal set again brings its own)."""
    from flower.kernel.files import atomic_write
    from flower.records.frozen_copy import keep

    run = _run(runtime)
    if not run:
        return []
    folder = held_out_dir(run)
    if folder.is_dir():
        for old in folder.iterdir():
            if old.is_file() and old.name not in scripts:
                old.unlink()
    if not scripts:
        return []
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    written = []
    for name, text in scripts.items():
        path = folder / name
        atomic_write(path, text)
        os.chmod(path, 0o700)
        keep(runtime, path)
        written.append(path)
    return written


def verify_scripts(runtime: Any, *, step: str = "", on_event: Any = None) -> Path | None:
    """The run's held-out folder, each script in it as it was frozen (put back when
    changed, :func:`flower.records.frozen_copy.check`); ``None`` when the run has none."""
    from flower.records.frozen_copy import check

    run = _run(runtime)
    folder = held_out_dir(run) if run else None
    if folder is None or not folder.is_dir():
        return None
    for path in sorted(folder.iterdir()):
        if path.is_file():
            check(runtime, path, step=step, on_event=on_event)
    return folder
