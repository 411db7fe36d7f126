"""The questions a dead run left in ``<run_dir>/pending.json``, as the page lists them.

``flower.records.pending`` keeps the questions a run waits on in that file and reads it as
a file the agents could have planted must be read (no link followed, no blocking open,
a regular file of bounded size, only entries of the expected types:
``flower.records.pending._read``). Here they are only put in the page's shape; the caller
reads them off the server's loop (before, the page read the file on its loop: a FIFO
there froze every route, a link to ``/dev/zero`` took 2.2 GB in 2 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["stale_asks"]


def stale_asks(run_dir: Path) -> list[dict[str, Any]]:
    """The stale questions of ``run_dir``, each ``{"id", "question", "options", "step",
    "answer"}`` (``answer``: ``None`` while unanswered); ``[]`` when the file is missing,
    not a regular file, too big, not JSON or not of the expected shape."""
    from flower.records.pending import stale_asks as left_by_the_run

    return [
        {
            "id": ask["id"],
            "question": ask["question"],
            "options": ask["options"],
            "step": ask["step"],
            "answer": ask.get("answer"),
        }
        for ask in left_by_the_run(run_dir)
    ]
