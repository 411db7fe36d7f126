"""Documents as HTML the page can show without trusting them.

The agents write the brief, the goal, the handoffs; a model or a tool can put anything
in them. So raw HTML is shown as text (never rendered), and nothing in a document loads
or goes anywhere by itself: an image becomes a line of text naming it (a remote image
would tell its server who read the document, and when); a link to the web stays a
link, but opens in a new tab with ``rel="noopener noreferrer"`` and a visible
"external" marker with its host; every other link (relative, ``file:``...) is text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

EXTERNAL = ("http", "https", "mailto")


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or []) or "image"
    src = str(token.attrGet("src") or "")
    return (
        f'<span class="inert" title="not loaded">[image: {html.escape(alt)}'
        f" — {html.escape(src)}, not loaded]</span>"
    )


def _link_open(
    self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    stack: list[str] = env.setdefault("links", [])
    parts = urlsplit(href)
    if parts.scheme.lower() in EXTERNAL:
        stack.append(parts.netloc or parts.path)
        return (
            f'<a href="{html.escape(href)}" class="external" target="_blank"'
            ' rel="noopener noreferrer nofollow">'
        )
    stack.append("")
    env.setdefault("targets", []).append(href)
    return '<span class="inert-link">'


def _link_close(
    self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    stack: list[str] = env.get("links", [])
    host = stack.pop() if stack else ""
    if host:
        return f'</a><span class="external-mark"> ↗ external: {html.escape(host)}</span>'
    targets: list[str] = env.get("targets", [])
    target = targets.pop() if targets else ""
    return f'</span><span class="dim"> ({html.escape(target)})</span>'


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    return md


#: Raw HTML in a document is shown as text, never rendered.
_MARKDOWN = _markdown()


def render_markdown(text: str) -> str:
    """A document as safe, inert HTML."""
    return _MARKDOWN.render(text, {})
