"""Notice the walls' refusals in a session's stream and keep them in the judge ledger.

A refused call never ran, so nothing on disk shows it; yet a judge that tried to edit
what it judges, or a coordinator that tried to delete files with a "glance", says more
about a run than its verdict does. The refusal reaches the Runtime as an error tool
result carrying the wall's words (:func:`flower.roles.walls.is_refusal`); this module pairs
it with the call it answers (which tool, which thread), emits a ``refused`` event and
appends a ``refusal`` row to the ledger (store and notes), whichever role was refused.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from flower.kernel.events import Event
from flower.records.ledger import GOAL_KEY, ROUND_KEY, record, refusal_row

if TYPE_CHECKING:
    from flower.runtime.parts import RuntimeParts

#: The CLI's wrapping of a refusal: ``<tool_use_error>Error: …</tool_use_error>``.
_TOOL_ERROR = re.compile(r"</?tool_use_error>")
#: How the CLI introduces a hook's deny reason: ``PreToolUse:Bash hook error: …``.
_HOOK_ERROR = re.compile(r"^PreToolUse:\S+ hook error: ")
#: A judge's step is named ``<label>#<round>`` by the goal guard.
_ROUND_SUFFIX = re.compile(r"#(\d+)$")


class Refusals:
    """Follows one attempt's events; :meth:`see` returns a ``refused`` event when due."""

    def __init__(self, rt: RuntimeParts, step: str) -> None:
        self.rt = rt
        self.step = step
        self._calls: dict[str, tuple[str, bool]] = {}  # tool_use id -> (tool, subagent)

    def see(self, event: Event, session_id: str | None) -> Event | None:
        """Remember a call, or turn a refused call's result into a ``refused`` event
        (recorded in the ledger on the way)."""
        payload = event.payload
        if event.kind == "tool":
            self._calls[str(payload.get("id"))] = (
                str(payload.get("name") or "?"),
                bool(payload.get("subagent")),
            )
            return None
        if event.kind != "tool_result" or not payload.get("error"):
            return None
        from flower.roles.walls import is_refusal

        text = str(payload.get("text") or "")
        if not is_refusal(text):
            return None
        text = _HOOK_ERROR.sub("", _TOOL_ERROR.sub("", text).strip().removeprefix("Error: "))
        tool, subagent = self._calls.pop(str(payload.get("id")), ("?", False))
        thread = "subagent" if subagent else "main"
        self._record(tool, text, thread, session_id)
        refused = {"tool": tool, "thread": thread, "reason": text}
        return Event("refused", refused, step=event.step)

    def undone(self, tool: str, reason: str, session_id: str | None) -> Event:
        """A subagent's call that ran but whose effect flower undid (the confine guard):
        recorded as a refusal; the ``refused`` event to emit."""
        self._record(tool, reason, "subagent", session_id)
        refused = {"tool": tool, "thread": "subagent", "reason": reason}
        return Event("refused", refused, step=self.step)

    def _record(self, tool: str, reason: str, thread: str, session_id: str | None) -> None:
        record(
            self.rt,
            refusal_row(
                self.step, self._round(), tool, reason, session_id=session_id, thread=thread
            ),
        )

    def _round(self) -> int:
        """The round this step belongs to: a judge's ``#N``; once a goal is set, the round
        in progress (rounds ruled so far + 1); before that (clarifying, setting the goal)
        and outside a goal-guarded workflow, 0."""
        named = _ROUND_SUFFIX.search(self.step)
        if named:
            return int(named.group(1))
        ctx: dict[str, Any] | None = self.rt.ctx
        if not ctx or GOAL_KEY not in ctx:
            return 0
        return int(ctx.get(ROUND_KEY) or 0) + 1
