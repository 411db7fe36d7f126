"""Documents as HTML the page can show without trusting them.

The agents write the brief, the goal, the handoffs; a model or a tool can put anything
in them. So raw HTML is shown as text (never rendered), and nothing in a document loads
or goes anywhere by itself: an image becomes a line of text naming it (a remote image
would tell its server who read the document, and when); a link to the web stays a
link, but opens in a new tab with ``rel="noopener noreferrer"`` and a visible
"external" marker with the host the browser will go to (:func:`link_host`: what
precedes an ``@`` is a user name, not the host); every other link (relative,
``file:``...) is text.

Rendering costs too: markdown-it is linear but some inputs cost 30 µs a character (a
paragraph of ``*[*[*[…``, ``![![…``, wide tables), so 2 MB of them once took 20-49 s of
CPU per render, in the process the run shares. So a document is rendered only up to
:data:`RENDER_CHARS` (the rest of what is shown, up to the 2 MB cap, is plain text),
nesting stops at 20 levels (markdown-it's ``maxNesting``), and a render that has used
:data:`CPU_SECONDS` of its thread's CPU stops: the document is shown as plain text,
saying why (:func:`shown`).
"""

from __future__ import annotations

import html
import ipaddress
import socket
import time
from collections.abc import MutableMapping, Sequence
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.parser_block import ParserBlock
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

EXTERNAL = ("http", "https", "mailto")
#: Characters of a document rendered as Markdown at most (a plain 512 KB renders in
#: about 0.6 s here); a longer one is shown as plain text.
RENDER_CHARS = 512 * 1024
#: CPU seconds a render may take (its thread's): past it, plain text.
CPU_SECONDS = 1.0
#: Rule calls between two looks at the clock.
EVERY = 256
_BUDGET = "flower_budget"  # the key in markdown-it's env: [calls, deadline]


class TooCostly(Exception):
    """A render went past its CPU budget."""


def _spent(env: MutableMapping[str, Any]) -> None:
    budget = env.get(_BUDGET)
    if budget is None:
        return
    budget[0] += 1
    if budget[0] % EVERY == 0 and time.thread_time() > budget[1]:
        raise TooCostly


def _inline_budget(state: Any, silent: bool) -> bool:
    """First of the inline rules, so it runs at every position parsed (link labels'
    look-aheads included): never matches, only looks at the clock."""
    _spent(state.env)
    return False


class _CountedState(StateBlock):
    """A block state whose every token counts: a table's rows are one rule's work."""

    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        _spent(self.env)
        return super().push(ttype, tag, nesting)


class _CountedBlocks(ParserBlock):
    def parse(
        self, src: str, md: MarkdownIt, env: Any, outTokens: list[Token]
    ) -> list[Token] | None:
        if not src:
            return None
        state = _CountedState(src, md, env, outTokens)
        self.tokenize(state, state.line, state.lineMax)
        return state.tokens


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
    host = link_host(href)
    if host is not None:
        stack.append(host)
        return (
            f'<a href="{html.escape(href)}" class="external" target="_blank"'
            ' rel="noopener noreferrer nofollow">'
        )
    stack.append("")
    env.setdefault("targets", []).append(href)
    return '<span class="inert-link">'


def link_host(href: str) -> str | None:
    """Where a link to the web goes, as the browser parses it: the host without what
    comes before an ``@`` (``https://github.com@evil.example/`` goes to
    ``evil.example``, and once was marked ``github.com@evil.example``), lowercase,
    percent-decoded, in its ASCII (punycode) form, a numeric IPv4 address in its dotted
    form, the port unless it is the scheme's; a ``mailto:``'s address. ``None``: not a
    link to the web (or not one a browser would follow), shown as text."""
    try:
        parts = urlsplit(href)
        scheme = parts.scheme.lower()
        if scheme == "mailto":
            return unquote(parts.path) or None
        if scheme not in EXTERNAL or not parts.hostname:
            return None
        host, port = unquote(parts.hostname), parts.port
    except ValueError:  # a bad port or IPv6 address
        return None
    if any(c in host for c in "@/\\?#%:[] ") and not _ipv6(host):
        return None  # no such host: the browser would not go anywhere
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    if host.rstrip(".").split(".")[-1].replace("x", "").isalnum() and not _ipv6(host):
        try:  # 0x7f.1, 2130706433: what the browser calls 127.0.0.1
            host = socket.inet_ntoa(socket.inet_aton(host.rstrip(".")))
        except OSError:
            pass
    shown = f"[{host}]" if _ipv6(host) else host
    default = {"http": 80, "https": 443}[scheme]
    return shown if port in (None, default) else f"{shown}:{port}"


def _ipv6(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).version == 6
    except ValueError:
        return False


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
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "maxNesting": 20})
    md.enable("table")
    md.inline.ruler.before("text", "budget", _inline_budget)
    blocks = _CountedBlocks()
    blocks.ruler = md.block.ruler  # the same rules, "table" enabled
    md.block = blocks
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    return md


#: Raw HTML in a document is shown as text, never rendered.
_MARKDOWN = _markdown()


def render_markdown(text: str, cpu_seconds: float | None = None) -> str:
    """A document as safe, inert HTML; :class:`TooCostly` past ``cpu_seconds`` of this
    thread's CPU (``None``: no limit)."""
    env: dict[str, Any] = {}
    if cpu_seconds is not None:
        env[_BUDGET] = [0, time.thread_time() + cpu_seconds]
    return _MARKDOWN.render(text, env)


def plain(text: str) -> str:
    """A document as plain text, escaped."""
    return f'<pre class="plain">{html.escape(text)}</pre>'


def shown(text: str) -> tuple[str, str]:
    """``(html, note)``: ``text`` rendered within the budget, or as plain text with the
    ``note`` saying why (``""`` when rendered)."""
    if len(text) > RENDER_CHARS:
        why = f"shown as plain text: only documents up to {RENDER_CHARS // 1024} KB are rendered"
        return plain(text), why
    try:
        return render_markdown(text, CPU_SECONDS), ""
    except TooCostly:
        return plain(text), f"shown as plain text: rendering it took over {CPU_SECONDS:g} s"
    except RecursionError:
        return plain(text), "shown as plain text: nested too deeply to render"
