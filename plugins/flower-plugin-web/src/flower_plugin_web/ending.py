"""How the run ended, as the page's last event says it, and how long the page stays up.

The page must not go on saying "reconnecting" once the run is over: ``flower web`` sends
a last event, ``ended``, with the outcome in flower's words (``flower.records.outcome``: "the
run finished: the goal was met", "the run stopped at 干活 (work): …"), the terminal's own
closing lines (``flower.ui.render.closing_lines``, from the facts the session printed)
and the total, side questions included and labelled, as the terminal's closing line has
it. The page then says the run is over and stops reconnecting.

On a terminal the page's server stays up :data:`STAY` seconds more (``--linger``), so a
page can still be read, reloaded, or opened to learn how it ended; any key (or Ctrl-C,
or the terminal hanging up) ends it sooner, and the last line says so. A run in a pipe
or a service waits only when ``--linger`` is given (Ctrl-C ends it sooner; there
is no key to press), so a script never hangs by surprise. A quit (Ctrl-C
twice) and a run that never started never wait: the process ends as it would without
the page, after the open pages have been sent the ``ended`` event.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import time
from pathlib import Path
from typing import Any

from flower_plugin_web.hub import Hub

#: Seconds the page stays up after the run, on a terminal (``flower web --linger``).
STAY = 60.0
#: Exit codes after which the page never stays: bad input (nothing ran), a quit.
NO_STAY = (2, 130)


def outcome_for(
    hub: Hub, run_dir: Path, code: int | None, since: float, stays: float
) -> dict[str, Any]:
    """The ``ended`` event's payload: ``state``, ``said`` (flower's words), ``lines`` (the
    terminal's closing lines, when it printed them), ``code``, the totals and ``total``
    (their words), ``stays`` (seconds the page's server stays up)."""
    from flower.records.outcome import ended, read_outcome
    from flower.ui.render import SIMULATED_ENV, closing_lines, total_words

    last = read_outcome(run_dir)
    ours = last.get("pid") == os.getpid() and float(last.get("at") or 0) >= since
    outcome = last if ours else {}
    clause = ended(outcome)
    said = f"the run {clause}" if clause else _by_code(code)
    closing = hub.closing
    simulated = os.environ.get(SIMULATED_ENV, "") == "1"
    if closing is not None:  # the terminal printed its closing line: the same facts
        cost, side = _usd(closing.get("cost")), _usd(closing.get("side_usd"))
        sides = int(closing.get("side_count") or 0)
        lines = closing_lines(
            ok=bool(closing.get("ok")), cost=cost, seconds=_usd(closing.get("duration_s")),
            manifest=str(closing.get("manifest") or ""), failed_at=closing.get("failed_at"),
            aborted=closing.get("aborted"), side=side, sides=sides, simulated=simulated,
        )  # fmt: skip
    else:  # it ended before one (a budget's stop, a refusal): what the pages counted
        side, sides = hub.side_usd, hub.side_count
        cost, lines = hub.steps_usd + side, []
    return {
        "state": outcome.get("state") or "",
        "said": said,
        "lines": [list(line) for line in lines],
        "code": code,
        "cost_usd": cost,
        "side_usd": side,
        "side_count": sides,
        "total": total_words(cost, side, sides=sides, simulated=simulated),
        "stays": stays,
    }


def _by_code(code: int | None) -> str:
    """The words when the run recorded no outcome of its own (it never started, or a
    budget stopped it before its workflow could say)."""
    if code == 0:
        return "the run finished"
    if code == 2:
        return "the run did not start: the terminal says why"
    if code == 3:
        return "the run was stopped by its budget: the terminal says how to go on"
    if code == 130:
        return "the run was quit (Ctrl-C)"
    return f"the run ended (exit {code})" if code is not None else "the run ended"


def _usd(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


def stay_for(linger: float | None, code: int | None, *, ran: bool) -> float:
    """Seconds the page stays up after the run, once it ran and was not quit: ``linger``
    when given; else :data:`STAY` on a terminal (stdin and stdout) and 0 in a pipe or a
    service (a script must not hang because a page was on)."""
    if not ran or code in NO_STAY or code is None:
        return 0.0
    if linger is None:
        return STAY if _terminal() else 0.0
    return max(float(linger), 0.0)


def _terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def linger(seconds: float, url: str) -> None:
    """Keep the page up ``seconds``, saying so on the last line; on a terminal any key,
    Ctrl-C or the terminal hanging up ends it sooner; elsewhere Ctrl-C (SIGINT)."""
    import click

    terminal = _terminal()
    how = "press any key (or Ctrl-C) to end it now" if terminal else "Ctrl-C ends it now"
    click.echo(
        f"flower web: the page ({url}) stays up {seconds:g}s more so it can show how the run"
        f" ended; {how}"
    )
    with contextlib.suppress(KeyboardInterrupt):
        if terminal:
            _wait_for_key(seconds)
        else:  # stdin is a pipe or /dev/null: no key to wait for
            time.sleep(seconds)


def _wait_for_key(seconds: float) -> None:
    """Until a key comes (read in cbreak mode: one key is enough, Ctrl-C still a
    signal) or ``seconds`` pass."""
    fd = sys.stdin.fileno()
    deadline = time.monotonic() + seconds
    saved = None
    with contextlib.suppress(ImportError, OSError):
        import termios
        import tty

        saved = termios.tcgetattr(fd)
        tty.setcbreak(fd)
    try:
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                os.read(fd, 1024)  # a key, or b"" when the terminal hung up: either ends it
                return
    finally:
        if saved is not None:
            import termios

            with contextlib.suppress(OSError):
                termios.tcsetattr(fd, termios.TCSADRAIN, saved)
