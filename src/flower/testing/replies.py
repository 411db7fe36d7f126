"""The scripted model's replies in the Messages API's shapes: a message (its content,
its usage), the server-sent events that stream it, the error bodies the real API sends.
Split from :mod:`flower.testing.server`, which serves them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from .script import Conversation, ToolCall, Turn
from .usage import output_tokens

if TYPE_CHECKING:
    from .recorded import RecordedRequest

__all__ = ["MODEL_NAME", "OVERFLOW_MESSAGE", "error_body", "message_for", "stream_events"]

MODEL_NAME = "claude-scripted-1"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_ERROR_MESSAGES = {
    401: "invalid x-api-key",
    429: "Number of request tokens has exceeded your per-minute rate limit",
    500: "Internal server error",
    529: "Overloaded",
}
OVERFLOW_MESSAGE = "prompt is too long: 1048577 tokens > 1000000 maximum"


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """The API's error shape; the message defaults to what the real API says for it."""
    if message is None:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:  # 529 and other non-standard statuses
            phrase = "error"
        message = _ERROR_MESSAGES.get(status, phrase)
    return {
        "type": "error",
        "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message},
    }


def message_for(
    turn: Turn,
    rec: RecordedRequest,
    conv: Conversation | None,
    usage: Mapping[str, int] | None = None,
    billed: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The reply to ``rec``; its usage is ``billed`` (the emulated accounting) unless the
    turn scripts its own ``usage``, which wins as it always has: the request's size
    estimate (bytes / 4) as ``input_tokens``, no cache, then the scripted fields on top."""
    content: list[dict[str, Any]] = []
    if turn.thinking:
        content.append({"type": "thinking", "thinking": turn.thinking, "signature": "scripted"})
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    conv_name = conv.name if conv else "none"
    for n, call in enumerate(turn.tools):
        content.append(_tool_block(call, conv_name, rec.turn, n))
    report: dict[str, Any]
    if billed is not None and not usage:
        report = {**billed, "output_tokens": output_tokens(content)}
    else:
        report = {
            "input_tokens": max(1, len(json.dumps(rec.body)) // 4),
            "output_tokens": max(1, sum(len(json.dumps(c)) for c in content) // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        report.update(usage or {})
    if billed is not None:
        rec.usage = dict(report)
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": rec.body.get("model") or MODEL_NAME,
        "content": content,
        "stop_reason": turn.stop_reason,
        "stop_sequence": None,
        "usage": report,
    }


def _tool_block(call: ToolCall, conv: str, turn: int, n: int) -> dict[str, Any]:
    safe = "".join(ch if ch.isalnum() else "_" for ch in conv)
    return {
        "type": "tool_use",
        "id": call.id or f"toolu_{safe}_{turn}_{n}",
        "name": call.name,
        "input": dict(call.input),
    }


def stream_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The SSE sequence the real API sends for ``message``."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "text":
            events.append(_block_start(index, {"type": "text", "text": ""}))
            events.extend(
                _delta(index, {"type": "text_delta", "text": chunk})
                for chunk in _chunks(block["text"])
            )
        elif kind == "thinking":
            events.append(
                _block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
            )
            events.append(_delta(index, {"type": "thinking_delta", "thinking": block["thinking"]}))
            events.append(
                _delta(index, {"type": "signature_delta", "signature": block["signature"]})
            )
        else:
            events.append(_block_start(index, {**block, "input": {}}))
            payload = json.dumps(block["input"])
            events.extend(
                _delta(index, {"type": "input_json_delta", "partial_json": chunk})
                for chunk in _chunks(payload)
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _block_start(index: int, block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_start", {
        "type": "content_block_start",
        "index": index,
        "content_block": block,
    }


def _delta(index: int, delta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def _chunks(text: str, size: int = 2048) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
