"""Reading the Claude Code CLI's transcript lines, as the store receives them.

Each line is a JSON object. The ones that matter for trimming and pruning, as the
bundled CLI (2.1.x) writes them:

- ``{"type": "assistant", "uuid", "parentUuid", "message": {"id", "content": [one
  block], "usage"}}``: one line per content block; blocks of one API reply share
  ``message.id``. A retry storm adds ``{"type": "system", "subtype": "api_error"}``
  lines and, after the last retry, a synthetic reply (``"isApiErrorMessage": true``,
  ``model: "<synthetic>"``).
- ``{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id",
  "content", "is_error"}]}, "toolUseResult", "sourceToolAssistantUUID"}``: one line per
  tool result. A refused call carries ``permissionDecision: {"decision": "reject"}``
  (a PreToolUse deny also has ``toolDenialKind: "permission-rule"``); a call stopped by
  an interrupt carries ``toolDenialKind: "user-rejected"`` and no permission decision.
- lines without ``uuid`` (titles, tags, ``last-prompt`` with ``leafUuid``) are metadata.

The transcript is a chain: each line's ``parentUuid`` names the line before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flower.kernel.reply_usage import context_size as context_size  # re-exported

Entry = dict[str, Any]

#: The largest transcript the bundled CLI loads: its transcript reader refuses a file over
#: 268,435,456 bytes ("loadTranscriptFile: the paged transcript is too large", 2.1.332).
CLI_TRANSCRIPT_LIMIT = 256 * 1024 * 1024
#: ``ClaudeAgentOptions.max_buffer_size``: the longest line of the CLI's output the SDK
#: accepts (its default, 1 MiB, kills any fork of a session over about 1 MB). The longest
#: line the CLI writes is a fork's ``transcript_mirror`` frame, which carries the whole
#: copied transcript at once, so a session the CLI can resume at all fits in
#: ``CLI_TRANSCRIPT_LIMIT`` plus the frame's envelope. Twice that leaves room for a frame
#: carrying the copy and the new turn together, or a CLI that reads a little more. It is a
#: ceiling, not an allocation: the SDK's reader grows with the data that really comes.
MAX_FRAME_BYTES = 2 * CLI_TRANSCRIPT_LIMIT

#: Fields that point at another line's ``uuid`` and must follow it when lines go.
LINK_FIELDS = ("parentUuid", "logicalParentUuid", "leafUuid")


def blocks(entry: Entry) -> list[Any]:
    """The content blocks of a user or assistant line (``[]`` for plain-text content)."""
    message = entry.get("message")
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    return content if isinstance(content, list) else []


def tool_results(entries: list[Entry]) -> Iterator[tuple[int, Entry, dict[str, Any]]]:
    """``(index, line, block)`` for every ``tool_result`` block, in transcript order."""
    for index, entry in enumerate(entries):
        if entry.get("type") != "user":
            continue
        for block in blocks(entry):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                yield index, entry, block


def counted_results(entries: list[Entry]) -> list[tuple[int, Entry, dict[str, Any]]]:
    """The ``tool_result`` blocks the CLI sends the model on resume, oldest first.

    An old-format transcript (CLI 1.x) keeps its subagents' lines inline, marked
    ``isSidechain: true``; the CLI resumes along the main chain and never sends them, so
    they are left out. A subagent's own transcript (every line a sidechain) counts whole.
    """
    found = list(tool_results(entries))
    if any(entry.get("isSidechain") is True for _, entry, _ in found) and any(
        entry.get("isSidechain") is not True for entry in entries if entry.get("type") == "user"
    ):
        return [r for r in found if r[1].get("isSidechain") is not True]
    return found


#: :func:`tool_uses`: tool_use id -> (line index, block).
Uses = dict[str, tuple[int, dict[str, Any]]]


def tool_uses(entries: list[Entry]) -> Uses:
    """``tool_use_id -> (index, block)`` for every ``tool_use`` block."""
    found: Uses = {}
    for index, entry in enumerate(entries):
        if entry.get("type") != "assistant":
            continue
        for block in blocks(entry):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                found[str(block.get("id"))] = (index, block)
    return found


def result_text(content: Any) -> str:
    """The plain text of a ``tool_result``'s content (string, or its text blocks joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def text_start(content: Any, n: int) -> str:
    """The first ``n`` characters of :func:`result_text` (or all of it, if shorter),
    without joining all of a large result's blocks to look at its start."""
    if isinstance(content, str):
        return content[:n]
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    size = 0
    for b in content:
        if isinstance(b, dict) and b.get("type") == "text":
            if parts:
                parts.append("\n")
                size += 1
            text = str(b.get("text", ""))
            parts.append(text[: max(n - size, 0)])
            size += len(text)
            if size >= n:
                break
    return "".join(parts)[:n]


def text_length(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(
            len(str(b.get("text", "")))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return 0


def is_synthetic(entry: Entry) -> bool:
    """A line the CLI wrote about a failed API call rather than anything the model said."""
    if entry.get("isApiErrorMessage") is True:
        return True
    return entry.get("type") == "system" and entry.get("subtype") == "api_error"


def context_tokens(entry: Entry) -> int | None:
    """Tokens in the context when the model wrote this reply (``None``: not a real reply).

    The API counts the prompt in three parts; the context is their sum.
    """
    if entry.get("type") != "assistant" or is_synthetic(entry):
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("model") == "<synthetic>":
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    return context_size(usage) or None


def latest_context_tokens(entries: list[Entry]) -> int | None:
    """The context size of the newest real model reply among ``entries``."""
    for entry in reversed(entries):
        tokens = context_tokens(entry)
        if tokens is not None:
            return tokens
    return None
