"""Events in, lines out: the run view.

A :class:`Renderer` is the ``on_event`` callback of a run. It turns each
:class:`flower.kernel.events.Event` (docs/workflow.md lists every kind) into lines on a
:class:`flower.kernel.terminal.Terminal` and knows nothing of the workflow beyond the event
kinds and their payloads, so any driver (``flower``, ``flower once``, ``flower run``, a
script) shows a run the same way, and a plugin can replace the whole view through the
``flower_renderer`` hook (:func:`renderer_for`).

One Renderer lives for the whole run: it remembers the step count, the context level,
the cost so far and when the run started (a renderer made per event shows $0.00 and
0:00, the original's ``once`` defect).

Icons are ASCII: ``>`` a tool call, ``>>`` a dispatch to a worker, ``*`` done, ``~``
waiting or retrying, ``!`` a warning, ``x`` a failure, ``?`` a question, ``->`` what the
human said. The default view hides what only a developer wants (prompts, thinking,
subagents' words, successful tool results, context levels); ``verbose=True`` shows
every event.

This module is the view's face: the Renderer, the dispatch by event kind, the banner and
the closing. The handlers live by whose events they show, :mod:`flower.ui.workflow_lines`
and :mod:`flower.ui.runtime_lines` (on the shared state of :mod:`flower.ui.line_view`),
and the words shared with other front ends in :mod:`flower.ui.closing_words`; every name
once defined here still imports from here.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.formats import gist, kilo, plural, tilde
from flower.kernel.terminal import Terminal
from flower.plugin_types import View  # the protocol lives with the plugin-facing types
from flower.ui.closing_words import SIMULATED_ENV, closing_lines, total_words, wake_label
from flower.ui.countdown import Countdown
from flower.ui.runtime_lines import CLI_STOPPED_TEXTS as CLI_STOPPED_TEXTS
from flower.ui.runtime_lines import DISPATCH_TOOLS as DISPATCH_TOOLS
from flower.ui.runtime_lines import RuntimeLines
from flower.ui.workflow_lines import RULE as RULE
from flower.ui.workflow_lines import WorkflowLines

if TYPE_CHECKING:
    from flower.kernel.events import Event

__all__ = ["Renderer", "View", "closing_lines", "plural", "renderer_for", "total_words"]


def renderer_for(terminal: Terminal, *, verbose: bool = False) -> View:
    """The view the installed plugins choose (default: :class:`Renderer`)."""
    from flower.plugins import get_plugin_manager

    view = get_plugin_manager().hook.flower_renderer(terminal=terminal, verbose=verbose)
    return view if view is not None else Renderer(terminal, verbose=verbose)


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, OSError, ValueError):
        return False


class Renderer(WorkflowLines, RuntimeLines):
    """Events in, lines out: the run view. Knows nothing of the workflow beyond Event kinds.

    Its handlers are the workflow's (:class:`~flower.ui.workflow_lines.WorkflowLines`)
    and the runtime's (:class:`~flower.ui.runtime_lines.RuntimeLines`); this class holds
    the state they share, the dispatch by kind, the banner and the closing.

    Call it with every event of a run (it is an ``on_event`` callback); :meth:`banner`
    before a wake-up, :meth:`closing` at the end. Thread-safe.
    """

    #: Kinds that keep a countdown on screen; any other event clears it.
    _WAITING = frozenset({"retry", "offline", "system", "context"})

    def __init__(self, terminal: Terminal, *, verbose: bool = False) -> None:
        self.terminal = terminal
        self.verbose = verbose
        #: Whether someone can type an answer here (default: stdin and the output are
        #: terminals); only then does a question say how to answer it.
        self.answerable = terminal.is_tty and _stdin_is_tty()
        self.context = 0
        self.cost = 0.0
        #: Side questions answered (``aside`` events, wherever they were asked) and what
        #: they cost: the closing line labels their part of the total.
        self.sides = 0
        self.side_cost = 0.0
        #: Costs are simulated (``SIMULATED_ENV``): each is labelled so beside its figure.
        self.simulated = os.environ.get(SIMULATED_ENV, "") == "1"
        self.started = time.monotonic()
        self._shown: set[str] = set()  # questions on screen, not yet settled
        self._offline_streak = False
        self._countdown = Countdown(terminal)
        self._lock = threading.RLock()
        self._handlers: dict[str, Callable[[dict[str, Any], str | None], None]] = {
            "wake": self._wake,
            "step": self._step,
            "skip": self._skip,
            "task": self._task,
            "verdict": self._verdict,
            "override": self._override,
            "bequest": self._bequest,
            "ask": self._ask,
            "mail": self._mail,
            "aside": self._aside,
            "prompt": self._prompt,
            "session": self._session,
            "system": self._system,
            "text": self._text,
            "thinking": self._thinking,
            "tool": self._tool,
            "tool_result": self._tool_result,
            "refused": self._refused,
            "restored": self._restored,
            "check": self._check,
            "context": self._context,
            "handoff": self._handoff,
            "retry": self._retry,
            "offline": self._offline,
            "interrupt": self._interrupt,
            "result": self._result,
            "unknown": self._unknown,
            "budget": self._budget,
            "error": self._error,
            "reset": self._reset,
        }

    # --- the entry points -----------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        """Show one event (any kind; an unknown kind is shown only when verbose).

        Never raises: a payload of an unexpected shape is shown as it is, since an
        exception here would reach stderr around the one output path.
        """
        kind = event.kind
        with self._lock:
            if kind not in self._WAITING:
                self._countdown.stop()
            if kind != "offline":
                self._offline_streak = False
            handler = self._handlers.get(kind)
            if handler is not None:
                try:
                    handler(event.payload, event.step)
                except Exception:  # a payload of another shape: shown raw, never raised
                    self._say(f"{kind}: {gist(event.payload, 160)}", "dim")
            elif self.verbose:
                self._say(f"{kind}: {gist(event.payload, 160)}", "dim")

    def banner(self, state: dict[str, Any], *, context: int, workspace: Path) -> None:
        """The wake banner: where the run continues and what it carries.

        ``state`` is :func:`flower.wake_state`'s dict; ``context`` the work session's
        last context size (0 when unknown). Goal checks and context are shown only when
        known; "brief confirmed" only when the brief is frozen.
        """
        where = tilde(workspace)
        woke = int(state.get("woke") or 0)
        if not state.get("waking") and not state.get("steps"):
            self._say(f"* new run in {where}", "bold")
            return
        parts = ["brief confirmed"] if state.get("waking") else []
        checks = int(state.get("checks") or 0)
        if checks > 0:
            parts.append(plural(checks, "goal check"))
        if context > 0:
            parts.append(f"work context {kilo(context)}")
        parts.append(wake_label(woke + 1))  # ``woke`` processes before this one
        self._say(f"<- continuing in {where}  " + " - ".join(parts), "bold")
        if state.get("drift"):
            self._say(f"   {state['drift']}", "yellow")

    def closing(
        self,
        *,
        ok: bool,
        cost: float,
        manifest: Path,
        failed_at: str | None,
        aborted: str | None,
    ) -> None:
        """The closing line: how it ended, total cost, wall time, the manifest's path.

        ``cost`` is the whole run's in this process, side questions included; the part
        of them this view saw answered (``aside`` events) is labelled."""
        with self._lock:
            self._countdown.stop()
            lines = closing_lines(
                ok=ok, cost=cost, seconds=time.monotonic() - self.started, manifest=manifest,
                failed_at=failed_at, aborted=aborted, side=self.side_cost, sides=self.sides,
                simulated=self.simulated,
            )  # fmt: skip
            for text, style, indent in lines:
                self._say(text, style, indent)
