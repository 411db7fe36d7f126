"""What one attempt reads from the CLI's stream: the context level, the window, the answer.

The loop that drives a session is ``runtime/attempt.py``; these are the pieces it consults
on each message: the context level of a main-thread reply against the handoff plan
(:func:`track`), the model's window when flower has not learned it (:func:`reported_window`),
the turn's last words (:func:`reply_text`) and whether the CLI's budget stop came after
a whole answer (:func:`answered_within_budget`), and the one line that says why a turn
failed (:func:`error_text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flower.kernel.events import Event, EventCallback
from flower.plugins import emit
from flower.stores.transcript import context_size

if TYPE_CHECKING:
    from flower.kernel.agent_spec import HandoffPolicy
    from flower.runtime.parts import Live

__all__ = [
    "answered_within_budget",
    "error_text",
    "leaf",
    "reply_text",
    "reported_window",
    "track",
    "track_level",
]


def reply_text(message: Any, before: str) -> str:
    """The text of a main-thread reply with no tool call (its last words so far), or ""
    once it calls a tool; one API message arrives as one message per block, so a text
    block adds to ``before`` (the same message's text so far: the caller passes "" for a
    new message)."""
    blocks = list(getattr(message, "content", []) or [])
    if any(type(b).__name__ == "ToolUseBlock" for b in blocks):
        return ""
    said = "".join(str(getattr(b, "text", "") or "") for b in blocks)
    return f"{before}{said}" if said else before


def answered_within_budget(message: Any, final_text: str) -> bool:
    """The CLI stopped the session at its budget (``error_max_budget_usd``) after the turn
    had ended on a whole answer: the answer was paid for and is kept (the budget stops
    the run at the next session instead)."""
    return (
        getattr(message, "subtype", "") == "error_max_budget_usd"
        and getattr(message, "stop_reason", None) == "end_turn"
        and bool(final_text.strip())
    )


async def reported_window(client: Any) -> int | None:
    """The context window the CLI reports for the session's model (``rawMaxTokens``);
    ``None`` when it does not answer within 10 s. Asked only for a model whose window
    flower has not learned (:mod:`flower.runtime.windows`), after the first request."""
    import anyio

    with anyio.move_on_after(10):
        try:
            usage = await client.get_context_usage()
        except Exception:  # an older CLI, a control channel that broke: keep the plan
            return None
        raw = usage.get("rawMaxTokens") if isinstance(usage, dict) else None
        return int(raw) if isinstance(raw, int) and raw > 0 else None
    return None


def track(
    live: Live,
    policy: HandoffPolicy,
    message: Any,
    previous_id: str | None,
    step: str,
    on_event: EventCallback | None,
    stop: Any,
) -> None:
    """Follow the context level from the usage the model reports for the main thread.

    One API message arrives as one AssistantMessage per content block, all with the
    same ``message_id`` and usage; the level is input + cache read + cache creation
    of the latest message.
    """
    level = context_size(message.usage or {})
    if level <= 0 or (message.message_id and message.message_id == previous_id):
        return
    track_level(live, policy, level, step, on_event, stop)


def track_level(
    live: Live,
    policy: HandoffPolicy,
    level: int,
    step: str,
    on_event: EventCallback | None,
    stop: Any,
) -> None:
    """The context is at ``level``: say so, announce a near handoff, end the turn at the
    handoff point (unless the window is still being asked for)."""
    live.ctx = level
    window = live.window or policy.window
    at = policy.at_for(window)
    emit(Event("context", {"used": level, "window": window, "at": at}, step=step), on_event)
    if not policy.enabled:
        return
    if level >= policy.warn_at_for(window) and not live.warned and not live.asking:
        live.warned = True
        payload = {"phase": "near", "used": level, "at": at, "window": window}
        emit(Event("handoff", payload, step=step), on_event)
    if level >= at and not live.due and not live.asking:
        live.due = True
        stop.set()


def error_text(message: Any, api_error: str | None) -> str:
    """One line that says why a turn failed, with what the classifier needs.

    The CLI's prose ("API Error: 529 Overloaded…"), then the HTTP status and the SDK's
    error category, then the result subtype when it is not ``success``.
    """
    errors = [e for e in (message.errors or []) if isinstance(e, str) and e.strip()]
    prose = "; ".join(errors) or (message.result or "").strip()
    tags = []
    if message.api_error_status:
        tags.append(f"HTTP {message.api_error_status}")
    if api_error:
        tags.append(api_error)
    if message.subtype and message.subtype != "success":
        tags.append(message.subtype)
    if message.terminal_reason and message.terminal_reason not in ("completed",):
        tags.append(message.terminal_reason)
    text = prose or "the turn failed"
    return f"{text} ({', '.join(tags)})" if tags else text


def leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups, which task groups add."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
