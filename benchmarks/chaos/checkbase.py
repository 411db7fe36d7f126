"""What every check shares: the harness it reads, the report it writes, one connection
to the run's schema, and how a recorded request names its job and its flower."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import flow

if TYPE_CHECKING:
    from .config import Report
    from .harness import Chaos


class Base:
    c: Chaos
    r: Report
    db: Any

    def rows(self, sql: str, *args: Any) -> list[Any]:
        return list(self.db.execute(sql, args or None).fetchall())


def pid_of(rec: Any) -> int:
    """The ``flower run`` behind a request (its CLI sends the header flow.main set)."""
    try:
        return int(rec.headers.get(flow.PID_HEADER, "0"))
    except ValueError:
        return 0


def job_of(rec: Any) -> str:
    return str(rec.headers.get(flow.JOB_HEADER, "?"))


def shown(call: dict[str, Any]) -> str:
    """What a report of the call would quote: its command, prompt, pattern or path."""
    data = call.get("input") or {}
    for name in ("command", "prompt", "pattern", "file_path"):
        if isinstance(data.get(name), str):
            return str(data[name])[:60]
    return ""


def files(root: Path) -> Iterator[Path]:
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                yield path
