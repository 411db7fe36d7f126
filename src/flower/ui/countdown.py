"""The ticking status line under a retry or an outage ("retry in 12s", "offline 0:41")."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from flower.kernel.terminal import Terminal

__all__ = ["Countdown"]


class Countdown:
    """A status line ticking down once a second (terminals only)."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self._stop: threading.Event | None = None
        self._lock = threading.Lock()

    def start(self, label: Callable[[float], str], seconds: float) -> None:
        self.stop()
        if not self.terminal.is_tty or seconds <= 0:
            return
        stop = threading.Event()
        deadline = time.monotonic() + seconds
        with self._lock:
            self._stop = stop
        self.terminal.status(label(seconds))

        def tick() -> None:
            while not stop.wait(min(1.0, max(0.0, deadline - time.monotonic()))):
                left = deadline - time.monotonic()
                if left <= 0.05:
                    break
                self.terminal.status(label(left))
            with self._lock:
                if self._stop is stop:  # not replaced by a newer countdown
                    self._stop = None
                    self.terminal.status(None)

        threading.Thread(target=tick, name="flower-countdown", daemon=True).start()

    def stop(self) -> None:
        with self._lock:
            stop, self._stop = self._stop, None
            if stop is not None:
                stop.set()
                self.terminal.status(None)
