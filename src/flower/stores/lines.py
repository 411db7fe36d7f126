"""Transcript lines on their way in and out of the store: validation with one-line errors,
and the string sharing that keeps a loaded transcript small."""

from __future__ import annotations

from typing import Any

from claude_agent_sdk.types import SessionKey, SessionStoreEntry

from flower.stores.engine import dumps
from flower.stores.errors import StoreError
from flower.stores.statements import key_of

#: Top-level fields whose values repeat on nearly every line of a session.
_REPEATED = ("type", "sessionId", "cwd", "version", "gitBranch", "userType", "entrypoint")
#: The same inside ``message``: who speaks, which model, how it stopped; and each content
#: block's ``type``.
_REPEATED_IN_MESSAGE = ("role", "model", "type", "stop_reason")


class RepeatedStrings:
    """Make equal strings that repeat line after line one object (values are unchanged).

    The JSON parser shares object keys but builds every value anew: a session id, the
    working directory, the CLI version and the previous line's uuid (as ``parentUuid``,
    and again as ``sourceToolAssistantUUID`` on a tool result) cost about half a
    kilobyte per line in copies. So do an API reply's ``usage``, message id and request
    id, repeated on every line the CLI splits that reply into (one per content block):
    on a later line of the same reply (same id, equal ``usage``) they become the first
    line's objects (never changed afterwards: nothing in flower writes to a loaded
    ``usage``). Sharing them chunk by chunk, as the chunks are
    parsed, keeps a loaded transcript within twice its JSON size.
    """

    def __init__(self) -> None:
        self.pool: dict[str, str] = {}
        self.previous: Any = None
        self.usage: Any = None
        self.reply: tuple[Any, Any] = (None, None)  # (message id, request id) of ``usage``

    def __call__(self, entries: list[Any]) -> list[Any]:
        pool, previous, usage, reply = self.pool, self.previous, self.usage, self.reply
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            _share(entry, _REPEATED, pool)
            message = entry.get("message")
            if message.__class__ is dict:
                _share(message, _REPEATED_IN_MESSAGE, pool)
                spent = message.get("usage")
                if spent.__class__ is dict:
                    if spent == usage and message.get("id") == reply[0]:
                        # the same reply, split by block: one usage, one id, one request (a
                        # field the line lacks stays missing, not null)
                        message["usage"] = usage
                        if "id" in message:
                            message["id"] = reply[0]
                        if "requestId" in entry and entry["requestId"] == reply[1]:
                            entry["requestId"] = reply[1]
                    else:
                        usage, reply = spent, (message.get("id"), entry.get("requestId"))
                content = message.get("content")
                if content.__class__ is list:
                    for block in content:
                        if block.__class__ is dict:
                            kind = block.get("type")
                            if kind.__class__ is str:
                                block["type"] = pool.setdefault(kind, kind)
            if previous is not None and entry.get("parentUuid") == previous:
                entry["parentUuid"] = previous
                if entry.get("sourceToolAssistantUUID") == previous:
                    entry["sourceToolAssistantUUID"] = previous
            previous = entry.get("uuid")
        self.previous, self.usage, self.reply = previous, usage, reply
        return entries


def _share(mapping: dict[str, Any], fields: tuple[str, ...], pool: dict[str, str]) -> None:
    """Replace each string value of ``fields`` by the pool's equal string."""
    for field in fields:
        value = mapping.get(field)
        if value.__class__ is str:
            mapping[field] = pool.setdefault(value, value)


def check_objects(key: SessionKey, entries: list[SessionStoreEntry]) -> None:
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise StoreError(not_json(key, index, f"it is a {type(entry).__name__}, not an object"))


def find_bad_json(key: SessionKey, entries: list[SessionStoreEntry]) -> None:
    """Name the line that could not be serialised (only called after an insert failed:
    checking every batch up front would serialise every line twice)."""
    for index, entry in enumerate(entries):
        try:
            dumps(entry)
        except (TypeError, ValueError) as exc:
            raise StoreError(not_json(key, index, str(exc))) from None


def not_json(key: SessionKey, index: int, why: str) -> str:
    where = "/".join(p for p in key_of(key) if p)
    return (
        f"transcript line {index} for {where} is not JSON ({why}): "
        "nothing from this batch was stored"
    )
