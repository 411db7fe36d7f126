"""The page: one server-rendered HTML document and one script (``static/``), no build step.

Text that came from the model, the tools or the files is never executed: the server
escapes everything it puts in the HTML (Markdown is rendered with raw HTML off), and the
script only ever assigns ``textContent``.
"""

from __future__ import annotations

import html
from importlib import resources
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

if TYPE_CHECKING:
    from flower_plugin_web.hub import Hub

#: Raw HTML in a document is shown as text, never rendered.
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str) -> str:
    """A document as safe HTML."""
    return _MARKDOWN.render(text)


def page_html(hub: Hub) -> str:
    """The page, with the run's workspace (escaped) in its title and header."""
    where = hub.where
    workspace = html.escape(str(where.workspace)) if where else "(no run yet)"
    return PAGE.replace("{{workspace}}", workspace)


def _static(name: str) -> str:
    return (resources.files("flower_plugin_web") / "static" / name).read_text(encoding="utf-8")


#: The page and its one script (``static/``: plain files, no build step).
PAGE = _static("page.html")
SCRIPT = _static("page.js")
