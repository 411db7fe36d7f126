"""What flower tells observers while it works.

Every progress report (a step starting, a retry, a handoff phase, a tool call) is an
:class:`Event`. The Runtime passes events to the ``on_event`` callback of the call
that caused them and to every plugin's ``flower_event`` hook, so a plugin can log,
meter or forward them without the caller wiring anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flower.kernel.reply_usage import context_size
from flower.kernel.text import one_line

#: How much of a tool result an event carries (the full result stays in the transcript).
RESULT_PREVIEW = 300
#: What a ``system`` event of subtype ``api_retry`` carries: the bundled CLI streams one
#: such message, within milliseconds, each time it retries a failed request inside one
#: attempt (``CLAUDE_CODE_MAX_RETRIES``), long before flower's own resilience sees the
#: attempt fail. Without them a user watches minutes of silence.
API_RETRY_KEYS = ("attempt", "max_retries", "retry_delay_ms", "error_status", "error")


@dataclass
class Event:
    """One thing that happened.

    Attributes:
        kind: What happened: ``"step"``, ``"retry"``, ``"handoff"``, ``"task"``,
            ``"tool"``, ``"text"``, ``"result"``, ``"context"``, ``"offline"``...
            ``docs/workflow.md`` lists every kind with its payload.
        payload: Details (``Event("handoff")`` carries ``payload["phase"]`` of
            ``near`` / ``writing`` / ``done``).
        step: Name of the step it belongs to, when there is one.
        at: ``time.time()`` when it was made.
    """

    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    step: str | None = None
    at: float = field(default_factory=time.time)


#: Receives events for one call (``Runtime.run(on_event=...)``); may be ``None``.
EventCallback = Callable[[Event], None]


def normalize(message: Any, *, step: str | None = None, context: int | None = None) -> list[Event]:
    """What one SDK message means to a watcher, as events in the order they happened.

    One function turns the SDK's message types into flower's event kinds, so the
    Runtime, a replay of a stored run and a test read messages the same way:

    - an assistant message: ``text`` / ``thinking`` (``{"text"}``) and ``tool``
      (``{"name", "input", "id"}``) per content block;
    - a user message carrying tool results: ``tool_result`` (``{"id", "text",
      "error"}``, the text cut to :data:`RESULT_PREVIEW` characters);
    - a system message: ``system`` (``{"subtype", "session_id"}``; an ``api_retry``
      adds :data:`API_RETRY_KEYS`);
    - anything else (a stream event, a rate-limit notice, a type this version does
      not know): ``unknown`` (``{"type"}``).

    Every one of these message events also carries ``subagent`` (whether a subagent's
    thread said it, not the main thread) and ``context`` (the tokens in that thread's
    context window when it was said: an assistant message's own usage, else ``context``
    as the caller last saw it for that thread; ``None`` when nobody knows yet), so a view
    can tell a worker's chatter from the coordinator's and show how full each is.

    The CLI's synthetic error replies (model ``<synthetic>``) and the final result
    message give nothing here: the Runtime reports those as ``retry``, ``error`` and
    ``result``.
    """
    from claude_agent_sdk import (
        AssistantMessage,
        ResultMessage,
        SystemMessage,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        UserMessage,
    )

    data = getattr(message, "data", None)
    thread = getattr(message, "parent_tool_use_id", None) or (
        data.get("parent_tool_use_id") if isinstance(data, dict) else None
    )
    level = context

    def event(kind: str, payload: dict[str, Any]) -> Event:
        return Event(kind, {**payload, "subagent": thread is not None, "context": level}, step)

    if isinstance(message, AssistantMessage):
        if message.model == "<synthetic>":
            return []
        level = context_size(message.usage or {}) or context
        found: list[Event] = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                found.append(
                    event("tool", {"name": block.name, "input": block.input, "id": block.id})
                )
            elif isinstance(block, TextBlock) and block.text.strip():
                found.append(event("text", {"text": block.text}))
            elif isinstance(block, ThinkingBlock) and block.thinking.strip():
                found.append(event("thinking", {"text": block.thinking}))
        return found
    if isinstance(message, UserMessage):
        if not isinstance(message.content, list):
            return []
        return [
            event(
                "tool_result",
                {
                    "id": block.tool_use_id,
                    "text": _preview(block.content),
                    "error": bool(block.is_error),
                },
            )
            for block in message.content
            if isinstance(block, ToolResultBlock)
        ]
    if isinstance(message, SystemMessage):
        data = data if isinstance(data, dict) else {}
        payload = {"subtype": message.subtype, "session_id": data.get("session_id")}
        if message.subtype == "api_retry":  # the CLI retrying inside one attempt
            payload.update({key: data.get(key) for key in API_RETRY_KEYS})
        return [event("system", payload)]
    if isinstance(message, ResultMessage):
        return []
    return [event("unknown", {"type": type(message).__name__})]


def _preview(content: Any) -> str:
    if isinstance(content, list):
        content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return one_line(str(content or ""), RESULT_PREVIEW)
