"""The default run view: :class:`flower.ui.render.Renderer`.

Runs last (``trylast``), so a plugin that returns its own view from
``flower_renderer`` wins; one that returns ``None`` leaves this one in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    from flower.kernel.terminal import Terminal
    from flower.ui.render import Renderer


@hookimpl(trylast=True)
def flower_renderer(terminal: Terminal, verbose: bool) -> Renderer:
    from flower.ui.render import Renderer

    return Renderer(terminal, verbose=verbose)
