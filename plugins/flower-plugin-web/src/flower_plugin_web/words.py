"""The terminal's words for each event, for the page's events panel.

The page says what the terminal says: each event goes through flower's own run view
(:class:`flower.ui.render.Renderer`, the default one, not verbose) writing into a list
instead of a terminal, so a result reads ``* 确认需求 (clarify) done - 1 turn - $0.1503 -
4s`` on both, never ``cost_usd=0.15029199999999998``. The raw payload still goes with every
event (the page shows it behind a toggle).

Two things the terminal shows that no event carries are added here: a line typed in the
terminal is on its screen as the input line echoed it (``> text``), so its ``mail`` event
gets that line; and the side question's own session (``旁路问答``) is never shown by the
terminal (its question and answer are ``aside`` events), so its events get no words.

The view keeps state across events (questions on screen, the side questions' cost), so
every event must pass through it once and in order: :class:`flower_plugin_web.hub.Hub`
feeds it lazily, on the page server's thread, only when a page reads the stream.
"""

from __future__ import annotations

from typing import Any

#: One line as the page gets it: ``[text, style, indent]`` (style as the terminal's:
#: ``"bold green"``, ``"dim"``...; indent in cells).
Line = list[Any]

#: The side question's own session (``flower.commands.aside.ASIDE_STEP``).
ASIDE_STEP = "旁路问答"
#: Characters of one event's words the page is sent, all lines together (model prose
#: can be long; the raw payload, behind the toggle, has the rest of a cut text).
LINE = 16_384


class _Capture:
    """The little of a :class:`flower.kernel.terminal.Terminal` the run view uses: lines are
    kept, the status line (a countdown) is the page's own business."""

    is_tty = False

    def __init__(self) -> None:
        self.lines: list[Line] = []

    def line(self, text: str, style: str = "", *, indent: int = 0) -> None:
        if str(text).strip():
            self.lines.append([str(text), style, indent])

    def status(self, text: str | None) -> None:
        pass


class Words:
    """flower's run view, writing each event's lines into a list."""

    def __init__(self, started: float) -> None:
        from flower.ui.render import Renderer

        self._out = _Capture()
        self.view = Renderer(self._out)  # type: ignore[arg-type]
        self.view.answerable = False  # the page has its own buttons
        self.view.started = started  # the run's clock, as the terminal's view has it

    def say(self, kind: str, payload: Any, step: str | None, at: float) -> list[Line]:
        """The lines the terminal shows for this event (often none: the default view
        leaves out prompts, context levels, successful tool results...)."""
        from flower.kernel.events import Event

        if step == ASIDE_STEP:
            return []
        p = payload if isinstance(payload, dict) else {}
        if kind == "ended":
            return [list(line) for line in p.get("lines") or []]
        self._out.lines = []
        self.view(Event(kind, p, step, at))
        lines = self._out.lines
        if kind == "mail" and p.get("state") == "queued" and not p.get("via"):
            lines.insert(0, [f"> {p.get('text') or ''}", "dim", 0])  # the input's echo
        return _bounded(lines)


def _bounded(lines: list[Line]) -> list[Line]:
    """At most :data:`LINE` characters in all, the cut said so on the last line kept."""
    kept: list[Line] = []
    left = LINE
    for text, style, indent in lines:
        if len(text) > left:
            kept.append([f"{text[:left]}… (cut: the raw payload has more)", style, indent])
            break
        kept.append([text, style, indent])
        left -= len(text)
    return kept
