"""Every line flower prints is redacted: a failed command's output reaches flower whole.

The CLI hands the output of a failed tool call to no hook that could replace it, so the
run view's echo of such a result (``-v``) held the key in plain text. The terminal's one
output path masks every known secret value before the line is drawn.
"""

from __future__ import annotations

import io

import pytest

from flower.kernel.events import Event
from flower.kernel.terminal import Terminal
from flower.ui.render import Renderer

KEY = "sk-ant-api03-terminal-0a1b2c3d4e5f"


def test_a_secret_never_reaches_the_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    out = io.StringIO()
    terminal = Terminal(out, color=False)
    terminal.line(f"the key is {KEY}, and a url https://bob:pa55word-secret@example.org/x")
    failed = Event(
        "tool_result",
        {"id": "t1", "text": f"Exit code 1\nANTHROPIC_API_KEY={KEY}", "error": True},
    )
    Renderer(terminal, verbose=True)(failed)
    shown = out.getvalue()
    assert KEY not in shown and "pa55word-secret" not in shown, shown
    assert "[已隐去 ANTHROPIC_API_KEY]" in shown and "bob:[已隐去]@example.org" in shown, shown
