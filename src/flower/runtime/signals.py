"""Hangups and terminations: save what is in flight, then leave.

The default action of SIGHUP (a terminal window closed, an SSH session dropped) and of
SIGTERM (``kill``, a container stopping) ends Python on the spot: no ``finally`` runs, so
the step in flight never reaches ``manifest.json``. :func:`rescue_on_signals` installs
handlers that call a rescue function first (synchronous, small: one locked file write),
then exit with the shell's convention ``128 + signum``.

The exit is ``SystemExit`` raised in the main thread, so ``finally`` blocks still run
(the CLI subprocess is stopped, a terminal leaves cbreak mode). Unwinding could hang on
something that no longer answers, so a watchdog ends the process with ``os._exit``
after ``grace`` seconds; a second signal does it at once. The rescue has already
written what matters by then. Both exits end the CLI subprocesses first (frozen, then killed by
the lifeline's watcher): a CLI stopped mid-tool (the SDK's close waits seconds before
terminating it) would otherwise go on running commands with nobody reading them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import Any

from flower.runtime.lifeline import end_clis_now

__all__ = ["DEFAULT_SIGNALS", "received", "rescue_on_signals"]

#: The signal this process is leaving on, once a handler took one (``None`` before).
_received: int | None = None


def received() -> int | None:
    """The signal the process is leaving on (``signal.SIGTERM``…), else ``None``: the
    unwinding that follows cancels the event loop's tasks, and whoever records how the
    run ended tells a ``kill`` from the human's Ctrl-C by this."""
    return _received


#: The signals whose default action kills the process without cleanup and that mean
#: "stop now" (SIGINT is the human's Ctrl-C, handled by the command line: an interrupt).
DEFAULT_SIGNALS: tuple[str, ...] = ("SIGHUP", "SIGTERM")


@contextlib.contextmanager
def rescue_on_signals(
    rescue: Callable[[], None],
    *,
    signals: Iterable[int | str] = DEFAULT_SIGNALS,
    grace: float = 10.0,
) -> Iterator[None]:
    """Within the block, the ``signals`` call ``rescue()`` and exit with 128 + signum.

    Must be entered in the main thread (Python delivers signals only there). A signal
    this process ignores (``nohup`` sets SIGHUP to ignore) stays ignored; a signal the
    platform lacks is skipped. The previous handlers come back when the block ends
    (not when it ends on one of the signals: the process is leaving, and a second
    signal during the rest of the way out still leaves at once with 128 + signum).
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("rescue_on_signals() must be entered in the main thread")
    exiting = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        global _received
        code = 128 + signum
        if exiting.is_set():  # a second signal while unwinding: leave now
            _leave(code)
        exiting.set()
        _received = signum
        _stop_clis()  # first: a CLI left to finish its turn acts with nobody keeping it
        try:
            rescue()
        except BaseException as exc:  # the rescue must not stop the exit
            with contextlib.suppress(Exception):
                print(f"flower: rescue failed: {exc!r}", file=sys.stderr)
        watchdog = threading.Timer(grace, _leave, args=(code,))
        watchdog.daemon = True
        watchdog.start()
        raise SystemExit(code)

    previous: dict[int, Any] = {}
    try:
        for sig in _resolve(signals):
            current = signal.getsignal(sig)
            if current is signal.SIG_IGN:
                continue
            previous[sig] = current
            signal.signal(sig, handler)
        yield
    finally:
        if not exiting.is_set():  # leaving on a signal: a second one still means "now"
            for sig, old in previous.items():
                signal.signal(sig, old if old is not None else signal.SIG_DFL)


def _stop_clis() -> None:
    """End every CLI subprocess this flower has running (:func:`lifeline.end_clis_now`).

    Done the moment a stop signal arrives, not when unwinding reaches the SDK's close:
    until then the CLI goes on with its turn (the Bash call ends, its next request
    reaches the model, the next call runs) while this flower, stopping, keeps none of
    it; the chaos harness (benchmarks/chaos) caught that. Frozen and killed, not sent
    SIGTERM: a CLI on its own way out still heard a pending question end "interrupted"
    and asked the model once more."""
    with contextlib.suppress(Exception):
        end_clis_now()


def _leave(code: int) -> None:
    """``os._exit(code)``, after asking the SDK's CLI subprocesses still alive to stop."""
    _stop_clis()
    os._exit(code)


def _resolve(signals: Iterable[int | str]) -> list[int]:
    found: list[int] = []
    for sig in signals:
        number = getattr(signal, sig, None) if isinstance(sig, str) else sig
        if number is None:
            continue  # e.g. SIGHUP on Windows
        found.append(int(number))
    return found
