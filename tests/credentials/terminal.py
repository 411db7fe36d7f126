"""A program in a real pseudo-terminal, driven by keystrokes (the standard library only).

``pty.fork`` gives the child the pty as its controlling terminal, so ``getpass`` turns
echo off on it and Ctrl-C (the byte ``\\x03``) becomes a SIGINT from the line
discipline, exactly as in a terminal window.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.ptys import default_signals


class Terminal:
    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        *,
        cols: int = 100,
        rows: int = 30,
    ) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                default_signals()
                os.chdir(cwd)
                os.execve(argv[0], list(argv), dict(env))
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.output = b""
        self._seen = 0
        self.status: int | None = None

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        self.output += chunk
        return True

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")

    def expect(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        """Wait for ``pattern`` (a regex) in the output after the previous match."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.compile(pattern).search(self.text, self._seen)
            if found:
                self._seen = found.end()
                return found
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(min(left, 0.2)) and not self._alive()):
                raise AssertionError(f"no {pattern!r} in:\n{self.text[self._seen :]}")

    def send(self, data: bytes | str) -> None:
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def _alive(self) -> bool:
        if self.status is not None:
            return False
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return True
        self.status = os.waitstatus_to_exitcode(status)
        return False

    def wait(self, timeout: float = 30.0) -> int:
        """Read to the end and return the exit code (negative: killed by that signal)."""
        deadline = time.monotonic() + timeout
        while self._alive():
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"still running after {timeout}s:\n{self.text}")
            self._read(0.1)
        while select.select([self.fd], [], [], 0.05)[0]:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.output += chunk
        assert self.status is not None
        return self.status

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass

    def close(self) -> None:
        if self._alive():
            self.kill()
        try:
            os.close(self.fd)
        except OSError:
            pass
