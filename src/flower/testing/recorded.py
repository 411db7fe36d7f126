"""What the scripted model saw: one request as recorded, and the texts tests read from it.

Split from :mod:`flower.testing.server` because it is the tests' side of the emulator
(``model.requests[-1].tool_results()``, ``message_text``), not the serving: the replies
(:mod:`flower.testing.replies`) and the routing read it too, and none of them needs the
HTTP server. Also here: how the next turn to play is counted from a request's messages
(:func:`model_turns`), which is a fact about the transcript the CLI sends.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .script import Conversation

__all__ = [
    "AGENT_HEADER", "CLI_PLACEHOLDER", "RecordedRequest", "message_text", "model_turns", "turn_in",
]  # fmt: skip

#: The header the CLI sends on a subagent's requests.
AGENT_HEADER = "x-claude-code-agent-id"


@dataclass
class RecordedRequest:
    """One request as the server saw it, and what it did with it.

    Attributes:
        path: Request path including the query string.
        headers: Lower-cased header names.
        body: The parsed JSON body (``{}`` if it was not JSON).
        conversation: Name of the conversation that answered, or ``None``.
        turn: Index of the turn chosen: the number of model replies already in the
            request (CLI placeholders such as "No response requested." not counted).
        attempt: 1-based attempt number at that (conversation, turn).
        outcome: ``"reply"``, ``"unscripted"``, ``"unmatched"``, ``"refused"`` (a 400 for
            cache marks the API would refuse, ``usage.cache_rules_broken``), or the
            fault served (``"529"``, ``"drop"``, ``"cut"``, ``"overflow"``).
        at: ``time.time()`` when it arrived.
        usage: The ``usage`` the reply reported (``{}`` for a fault): emulated from the
            request and the prompt cache (:mod:`flower.testing.usage`), or the turn's own.
    """

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    conversation: str | None = None
    turn: int = 0
    attempt: int = 1
    outcome: str = ""
    at: float = field(default_factory=time.time)
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def is_subagent(self) -> bool:
        return AGENT_HEADER in self.headers

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def system_text(self) -> str:
        return _system_text(self.body)

    def text(self) -> str:
        """All text the request carries (system prompt and messages), for substring checks."""
        return self.system_text + "\n" + "\n".join(message_text(m) for m in self.messages)

    def tool_names(self) -> list[str]:
        """Names of the tools the request advertises in full (deferred tools are absent:
        the CLI lists those by name only, in a reminder inside the messages)."""
        return [str(t.get("name")) for t in self.body.get("tools") or [] if isinstance(t, dict)]

    def tool_results(self) -> dict[str, str]:
        """``tool_use_id`` -> result text for every tool_result in the request."""
        out: dict[str, str] = {}
        for msg in self.messages:
            content = msg.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out[str(block.get("tool_use_id"))] = _block_text(block.get("content"))
        return out


def message_text(message: Mapping[str, Any]) -> str:
    """Text of one API message: text blocks and tool_result contents, joined."""
    return _block_text(message.get("content"))


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_block_text(block.get("content")))
    return "\n".join(parts)


def _system_text(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
    return ""


#: The assistant message the CLI writes itself, on resume, after a transcript that ends
#: without a model reply (a failed or interrupted turn). The model never said it.
CLI_PLACEHOLDER = "No response requested."


def model_turns(messages: list[dict[str, Any]]) -> int:
    """How many replies the model has given in ``messages``: the turn to play next.

    CLI placeholders are not counted, so a resume after a failed turn gets the reply
    the failed turn never delivered, exactly as a retry would.
    """
    return sum(
        1
        for m in messages
        if m.get("role") == "assistant" and message_text(m).strip() != CLI_PLACEHOLDER
    )


def turn_in(conv: Conversation, messages: list[dict[str, Any]]) -> int:
    """The turn ``conv`` plays next: model replies so far, or since its ``after_user`` text."""
    marker = conv.match.after_user
    if marker is not None:
        starts = [
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and marker in message_text(m)
        ]
        if starts:
            messages = messages[starts[-1] + 1 :]
    return model_turns(messages)
