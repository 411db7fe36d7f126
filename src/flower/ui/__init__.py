"""flower's terminal: one output path, the run view, and the input line.

A driver (``flower``, ``flower once``, a script) wires a run like this::

    from flower.ui import InputLine, Terminal, renderer_for

    term = Terminal()                          # stdout; colour and width decided here
    view = renderer_for(term, verbose=False)   # the flower_renderer hook (default Renderer)
    view.banner(wake_state(ws), context=ctx_tokens, workspace=ws)   # on a wake-up
    with InputLine(term, on_line=heard, on_interrupt=ctrl_c):       # TTY only; else inert
        ctx = await workflow.run(rt, on_event=view)
    view.closing(ok=..., cost=rt.total_cost, manifest=rt.run_dir / "manifest.json",
                 failed_at=ctx.get("_failed_at"), aborted=ctx.get("_aborted"))
    term.close()

Everything else that prints (``-v`` details, errors during a run) calls
``term.line(text, style)``. :func:`ask_line` asks one line outside a run.

Modules: :mod:`~flower.kernel.sanitize` (clean, cells, fit, wrap),
:mod:`~flower.kernel.terminal` (Terminal), :mod:`~flower.ui.render` (Renderer, View,
renderer_for), :mod:`~flower.ui.reader` (InputLine, ask_line). Names load on first use,
so importing this package costs nothing until a run starts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flower.kernel.sanitize import cells, clean, fit
    from flower.kernel.terminal import Terminal
    from flower.ui.reader import InputLine, ask_line
    from flower.ui.render import Renderer, View, renderer_for

_WHERE = {
    "InputLine": "reader",
    "ask_line": "reader",
    "Renderer": "render",
    "View": "render",
    "renderer_for": "render",
    "cells": "sanitize",
    "clean": "sanitize",
    "fit": "sanitize",
    "Terminal": "terminal",
}
__all__ = [
    "InputLine",
    "Renderer",
    "Terminal",
    "View",
    "ask_line",
    "cells",
    "clean",
    "fit",
    "renderer_for",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'flower.ui' has no attribute {name!r}")
    return getattr(import_module(f"flower.ui.{module}"), name)


def __dir__() -> list[str]:
    return list(__all__)
