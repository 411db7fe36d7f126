"""The script a :class:`~flower.testing.ScriptedModel` plays.

A script is a list of :class:`Conversation` objects. Each incoming request is
routed to the first conversation whose :class:`Match` fits it, and the reply
is chosen *statelessly* from the number of assistant messages already in the
request: turn 0 answers a request with no assistant message, turn 1 answers a
request carrying one, and so on. That is what makes CLI retries, ``resume``
and ``fork`` line up with the script without the server remembering sessions.
(The placeholder reply the CLI inserts itself on resume after a failed turn,
"No response requested.", is not counted: the model never gave it.)

Faults (HTTP errors, dropped connections, cut streams, overflow) are the one
stateful part: a turn's ``faults`` are served on consecutive *attempts* at
that turn before the real reply goes out, so "a 529 that recovers after two
attempts" is ``Turn(text="ok", faults=[529, 529])``.

Scripts load from JSON too (:func:`load_script`), so the standalone server
(``python -m flower.testing serve script.json``) takes the same shapes::

    {"conversations": [
      {"name": "main", "match": {"first_user": "fix the bug"},
       "turns": [
         {"tool_use": {"name": "Bash", "input": {"command": "ls"}}},
         {"text": "done", "usage": {"input_tokens": 12000}}
       ]}
    ]}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

#: A fault served instead of a reply: an HTTP status (429, 500, 529, 401, 400, ...)
#: or one of ``"drop"`` (close the connection without answering), ``"cut"``
#: (start streaming, then close mid-way) and ``"overflow"`` (the API's
#: "prompt is too long" 400).
Fault = int | Literal["drop", "cut", "overflow"]

_FAULT_WORDS = frozenset({"drop", "cut", "overflow"})


class ScriptError(ValueError):
    """A script that cannot be played; the message says which part and why."""


@dataclass(frozen=True)
class ToolCall:
    """One ``tool_use`` block the model emits.

    ``id`` defaults to a deterministic ``toolu_<conversation>_<turn>_<n>`` so a
    test can find the matching ``tool_result`` in the next request.
    """

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Turn:
    """One assistant reply, plus what goes wrong before it is delivered.

    Attributes:
        text: Text block(s) emitted before any tool call.
        tools: ``tool_use`` blocks; when present the reply ends with
            ``stop_reason: "tool_use"``.
        usage: Overrides of the reported ``usage`` (``input_tokens``,
            ``output_tokens``, ``cache_read_input_tokens``,
            ``cache_creation_input_tokens``). Drives the context level the
            Runtime sees. Unset ``input_tokens`` defaults to a size estimate
            of the request (bytes / 4).
        faults: Served on consecutive attempts at this turn before the reply.
        fail_always: Serve this fault on every attempt, never the reply.
        delay: Seconds to wait before answering (each attempt).
        thinking: An optional thinking block emitted first.
        elapse: Seconds of the emulated cache's clock that pass before this turn is
            answered (``ScriptedModel.clock``; nothing waits): a worker that "works" ten
            minutes, so the coordinator's cached prefix has expired when its report comes.
    """

    text: str = ""
    tools: tuple[ToolCall, ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)
    faults: tuple[Fault, ...] = ()
    fail_always: Fault | None = None
    delay: float = 0.0
    thinking: str = ""
    elapse: float = 0.0

    def __post_init__(self) -> None:
        for fault in (*self.faults, *([self.fail_always] if self.fail_always is not None else [])):
            _check_fault(fault)
        if not self.text and not self.tools and not self.thinking and self.fail_always is None:
            raise ScriptError("a turn needs text, tools, thinking or fail_always")

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tools else "end_turn"


def text(body: str, **kw: Any) -> Turn:
    """A plain text reply: ``text("done")``."""
    return Turn(text=body, **kw)


def tool(name: str, input: Mapping[str, Any] | None = None, *, say: str = "", **kw: Any) -> Turn:
    """A reply that calls one tool: ``tool("Bash", {"command": "ls"})``."""
    return Turn(text=say, tools=(ToolCall(name, dict(input or {})),), **kw)


def bash(command: str, *, say: str = "", **kw: Any) -> Turn:
    """A reply that runs one Bash command."""
    return tool("Bash", {"command": command, "description": command[:40]}, say=say, **kw)


def ask(
    question: str,
    options: Iterable[str] | None = None,
    *,
    server: str = "human",
    say: str = "",
    **kw: Any,
) -> Turn:
    """A reply that asks the human through a channel's MCP tool (``mcp__human__ask``).

    The tool can be called straight away: an MCP tool deferred behind ToolSearch (the
    CLI's default) still runs when called by name with valid input, and it runs only
    when the session's ``allowed_tools`` names it.
    """
    payload: dict[str, Any] = {"question": question}
    if options is not None:
        payload["options"] = list(options)
    return tool(f"mcp__{server}__ask", payload, say=say, **kw)


def inbox(*, server: str = "human", say: str = "", **kw: Any) -> Turn:
    """A reply that reads the human's inbox (``mcp__human__inbox``)."""
    return tool(f"mcp__{server}__inbox", {}, say=say, **kw)


def tool_search(*names: str, say: str = "", **kw: Any) -> Turn:
    """A reply that loads deferred tools by name, as a real model does first:
    ``tool_search("mcp__human__ask")`` sends ToolSearch ``select:mcp__human__ask``."""
    if not names:
        raise ScriptError("tool_search needs at least one tool name")
    return tool("ToolSearch", {"query": "select:" + ",".join(names)}, say=say, **kw)


@dataclass(frozen=True)
class Match:
    """Which requests a conversation answers. Every given criterion must hold.

    Attributes:
        first_user: Substring of the text of the first user message.
        last_user: Substring of the text of the last user message.
        after_user: Substring of the text of any user message. Turns are then counted
            from the last user message containing it, so a continuation (a resume
            prompt, a human's line after an interrupt, a handoff request) can be
            scripted from its own turn 0, tool calls included.
        system: Substring of the system prompt.
        subagent: ``True`` only subagent requests (header
            ``x-claude-code-agent-id``), ``False`` only main-thread requests,
            ``None`` either.
    """

    first_user: str | None = None
    last_user: str | None = None
    after_user: str | None = None
    system: str | None = None
    subagent: bool | None = None

    def fits(
        self,
        *,
        first_user: str,
        last_user: str,
        system: str,
        is_subagent: bool,
        user_texts: tuple[str, ...] = (),
    ) -> bool:
        return (
            (self.first_user is None or self.first_user in first_user)
            and (self.last_user is None or self.last_user in last_user)
            and (self.after_user is None or any(self.after_user in t for t in user_texts))
            and (self.system is None or self.system in system)
            and (self.subagent is None or self.subagent == is_subagent)
        )


@dataclass(frozen=True)
class Conversation:
    """A named, ordered list of turns and the requests it answers.

    When the request has more assistant messages than there are turns, the
    ``after_end`` text is sent and the request is recorded as ``unscripted``,
    so a test can assert nothing ran past the script.
    """

    name: str
    turns: tuple[Turn, ...]
    match: Match = field(default_factory=Match)
    after_end: str = "(the scripted conversation has ended)"

    def __post_init__(self) -> None:
        if not self.name:
            raise ScriptError("a conversation needs a name")


@dataclass(frozen=True)
class Script:
    """Conversations tried in order; the first whose match fits answers."""

    conversations: tuple[Conversation, ...] = ()

    def __post_init__(self) -> None:
        names = [c.name for c in self.conversations]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ScriptError(f"conversation names must be unique, repeated: {', '.join(dupes)}")

    @classmethod
    def of(cls, *conversations: Conversation) -> Script:
        return cls(tuple(conversations))

    def route(
        self,
        *,
        first_user: str,
        last_user: str,
        system: str,
        is_subagent: bool,
        user_texts: tuple[str, ...] = (),
    ) -> Conversation | None:
        for conv in self.conversations:
            if conv.match.fits(
                first_user=first_user,
                last_user=last_user,
                system=system,
                is_subagent=is_subagent,
                user_texts=user_texts,
            ):
                return conv
        return None


def conversation(
    name: str,
    *turns: Turn,
    first_user: str | None = None,
    last_user: str | None = None,
    after_user: str | None = None,
    system: str | None = None,
    subagent: bool | None = None,
) -> Conversation:
    """Shorthand: ``conversation("main", bash("ls"), text("done"), first_user="hi")``."""
    return Conversation(
        name=name,
        turns=tuple(turns),
        match=Match(
            first_user=first_user,
            last_user=last_user,
            after_user=after_user,
            system=system,
            subagent=subagent,
        ),
    )


def _check_fault(fault: Any) -> None:
    if isinstance(fault, bool) or not (
        (isinstance(fault, int) and 400 <= fault <= 599) or fault in _FAULT_WORDS
    ):
        raise ScriptError(
            f"unknown fault {fault!r}: use an HTTP status 400-599 or one of drop, cut, overflow"
        )


# --- JSON loading -------------------------------------------------------------------------

_TURN_KEYS = {
    "text", "tool_use", "tools", "usage", "faults", "fail_always", "delay", "thinking", "elapse",
}  # fmt: skip
_MATCH_KEYS = {"first_user", "last_user", "after_user", "system", "subagent"}


def script_from_dict(data: Mapping[str, Any]) -> Script:
    """Build a :class:`Script` from its JSON shape, with errors that name the bad part."""
    if not isinstance(data, Mapping) or not isinstance(data.get("conversations"), list):
        raise ScriptError('a script is an object with a "conversations" list')
    convs = []
    for ci, raw in enumerate(data["conversations"]):
        where = f"conversations[{ci}]"
        if not isinstance(raw, Mapping):
            raise ScriptError(f"{where} must be an object")
        match = raw.get("match", {})
        unknown = set(match) - _MATCH_KEYS
        if unknown:
            raise ScriptError(f"{where}.match: unknown keys {sorted(unknown)}")
        turns = [
            _turn_from_dict(t, f"{where}.turns[{ti}]") for ti, t in enumerate(raw.get("turns", []))
        ]
        convs.append(
            Conversation(
                name=str(raw.get("name") or f"conversation-{ci}"),
                turns=tuple(turns),
                match=Match(**match),
                **({"after_end": raw["after_end"]} if "after_end" in raw else {}),
            )
        )
    return Script(tuple(convs))


def _turn_from_dict(raw: Any, where: str) -> Turn:
    if not isinstance(raw, Mapping):
        raise ScriptError(f"{where} must be an object")
    unknown = set(raw) - _TURN_KEYS
    if unknown:
        raise ScriptError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(_TURN_KEYS)}")
    calls: list[Any] = list(raw.get("tools", []))
    if "tool_use" in raw:
        calls.insert(0, raw["tool_use"])
    tools = []
    for call in calls:
        if not isinstance(call, Mapping) or "name" not in call:
            raise ScriptError(f'{where}: a tool call is an object with "name" and "input"')
        tools.append(ToolCall(call["name"], dict(call.get("input", {})), call.get("id")))
    try:
        return Turn(
            text=raw.get("text", ""),
            tools=tuple(tools),
            usage=dict(raw.get("usage", {})),
            faults=tuple(raw.get("faults", ())),
            fail_always=raw.get("fail_always"),
            delay=float(raw.get("delay", 0.0)),
            thinking=raw.get("thinking", ""),
            elapse=float(raw.get("elapse", 0.0)),
        )
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from None


def load_script(source: str | Path | Mapping[str, Any] | Iterable[Conversation] | Script) -> Script:
    """Accept a Script, conversations, a dict, or a path to a JSON file."""
    if isinstance(source, Script):
        return source
    if isinstance(source, Mapping):
        return script_from_dict(source)
    if isinstance(source, str | Path):
        path = Path(source)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ScriptError(f"script file not found: {path}") from None
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
        return script_from_dict(data)
    return Script(tuple(source))
