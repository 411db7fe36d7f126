"""A real ``flower`` process in a pseudo-terminal, driven with real keystrokes.

Ctrl-C is the byte ``\\x03`` written to the terminal, exactly what a keyboard sends;
never ``kill -INT``, which skips the terminal and hid a real bug once.
"""

from __future__ import annotations

import io
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pexpect

from tests.ptys import default_signals

FLOWER = str(Path(sys.executable).with_name("flower"))
#: What a terminal shows once escape sequences are removed (for assertions on text).
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\r")


class Flower:
    """One ``flower`` run in a 40x120 pty; ``raw`` keeps every byte it printed.

    ``program`` runs something that runs flower instead (container/flower-box)."""

    def __init__(
        self, *args: str, cwd: Path, env: dict[str, str] | None = None, program: str = FLOWER
    ) -> None:
        full_env = {**os.environ, "TERM": "xterm-256color", **(env or {})}
        full_env.pop("NO_COLOR", None)
        self.log = io.StringIO()
        self.child = pexpect.spawn(
            program,
            list(args),
            cwd=str(cwd),
            env=full_env,
            encoding="utf-8",
            codec_errors="replace",
            timeout=90,
            dimensions=(40, 120),
            preexec_fn=default_signals,
        )
        self.child.logfile_read = self.log

    def expect(self, pattern: str, timeout: float = 90) -> None:
        self.child.expect(pattern, timeout=timeout)

    def type(self, line: str) -> None:
        """Type a line and press Enter."""
        self.child.send(line + "\r")

    def ctrl_c(self) -> None:
        self.child.send("\x03")

    def signal(self, number: int) -> None:
        os.kill(self.child.pid, number)

    def kill_group(self) -> None:
        """SIGKILL the process and everything in its group (the CLI too): a power cut."""
        os.killpg(os.getpgid(self.child.pid), signal.SIGKILL)

    def finish(self, timeout: float = 120) -> int:
        """Wait for the end; the exit code (128+N for a signal). A run that does not end
        fails with what it printed last (pexpect's own message shows 100 raw bytes)."""
        try:
            self.child.expect(pexpect.EOF, timeout=timeout)
        except pexpect.TIMEOUT:
            raise AssertionError(
                f"flower did not end within {timeout:g}s; it printed last:\n{self.text[-3000:]}"
            ) from None
        self.child.close()
        if self.child.signalstatus is not None:
            return 128 + int(self.child.signalstatus)
        return int(self.child.exitstatus or 0)

    @property
    def raw(self) -> str:
        return self.log.getvalue()

    @property
    def text(self) -> str:
        """What was printed, escape sequences removed."""
        return _ESCAPES.sub("", self.raw)


def flower_env(**extra: Any) -> dict[str, str]:
    return {key: str(value) for key, value in extra.items()}


__all__ = ["FLOWER", "Flower", "flower_env"]
