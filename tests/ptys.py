"""What a terminal emulator does for the program it starts, and the test helpers must too.

A terminal starts its shell with every signal at its default action, so Ctrl-C in a real
terminal always interrupts. A process started in the background of a non-interactive
shell (``pytest ... &``, ``nohup``, some CI runners) inherits SIGINT and SIGQUIT
*ignored*, and an ignored signal stays ignored across ``exec``: without this reset every
Ctrl-C test would fail there, for a reason no user ever meets.
"""

from __future__ import annotations

import signal

#: The signals a shell may leave ignored that the keyboard or a terminal sends.
TERMINAL_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGHUP, signal.SIGPIPE)


def default_signals() -> None:
    """In the child, before ``exec``: every terminal signal back to its default action."""
    for sig in TERMINAL_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
