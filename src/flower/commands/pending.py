"""``<run_dir>/pending.json``: the questions a running flower is waiting on, for other eyes.

A question lives in the memory of the process that asked it; ``flower status`` (another
process) and a web page (a plugin) cannot see it there. So the run mirrors its pending
questions to this file as they are asked and settled, with its pid, and removes the file
when it ends. A reader that finds the pid gone treats the file as stale.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from flower.core.workbench import atomic_write

PENDING_NAME = "pending.json"


class PendingFile:
    """The pending questions of this process, kept on disk."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / PENDING_NAME
        self.asks: dict[str, dict[str, Any]] = {}

    def update(self, ask: dict[str, Any]) -> None:
        """Follow one ``ask`` event: add it while asked, drop it once settled."""
        if ask.get("state") == "asked":
            self.asks[str(ask["id"])] = {
                key: ask.get(key) for key in ("id", "question", "options", "asked_at")
            }
        elif self.asks.pop(str(ask.get("id")), None) is None:
            return
        self._write()

    def clear(self) -> None:
        self.asks.clear()
        if read_pending(self.path.parent).get("pid") == os.getpid():
            with contextlib.suppress(OSError):
                self.path.unlink()

    def _write(self) -> None:
        data = {"pid": os.getpid(), "asks": list(self.asks.values())}
        with contextlib.suppress(OSError):  # bookkeeping must never stop a run
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def read_pending(run_dir: Path) -> dict[str, Any]:
    """``{"pid", "asks"}`` of a live run, or ``{}`` (no file, unreadable, its process gone)."""
    try:
        data = json.loads((Path(run_dir) / PENDING_NAME).read_text(encoding="utf-8"))
        pid = int(data["pid"])
        asks = list(data["asks"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return {}
    except PermissionError:  # alive, owned by someone else
        pass
    return {"pid": pid, "asks": asks}


__all__ = ["PENDING_NAME", "PendingFile", "read_pending"]
