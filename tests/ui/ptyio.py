"""A real pseudo-terminal for the UI tests, and a real terminal emulator (pyte) to see
what a person would see on it."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import termios
import threading
import time
from typing import TextIO

import pyte


def set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class Pty:
    """A pty pair; the test holds the master, the code under test writes to the slave.

    A thread drains the master all the time, as a terminal would, so a writer never
    blocks on a full buffer.
    """

    def __init__(self, cols: int = 80, rows: int = 24) -> None:
        self.master, self.slave = os.openpty()
        self.cols, self.rows = cols, rows
        set_size(self.slave, cols, rows)
        self.data = bytearray()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while not self._closed:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.data += chunk

    def stream(self) -> TextIO:
        """A text stream on the slave, as ``sys.stdout`` would be."""
        return os.fdopen(os.dup(self.slave), "w", encoding="utf-8")

    def output(self, settle: float = 0.15) -> bytes:
        """Everything written so far (waits until nothing new arrives for ``settle``)."""
        last = -1
        while True:
            with self._lock:
                size = len(self.data)
            if size == last:
                break
            last = size
            time.sleep(settle)
        with self._lock:
            return bytes(self.data)

    def screen(self) -> pyte.Screen:
        """What the terminal shows now."""
        screen = pyte.Screen(self.cols, self.rows)
        pyte.ByteStream(screen).feed(self.output())
        return screen

    def close(self) -> None:
        self._closed = True
        self._thread.join(timeout=1)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def rows(screen: pyte.Screen) -> list[str]:
    """The screen's rows with trailing blanks removed; a wide character is one entry
    followed by an empty cell, which is dropped so the row reads as text."""
    out = []
    for y in range(screen.lines):
        line = screen.buffer[y]
        out.append("".join(line[x].data for x in range(screen.columns)).rstrip())
    return out
