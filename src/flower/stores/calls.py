"""A tool call is in the session store before it runs.

The CLI runs a tool the moment the model asks for it, while the line that records the
call travels to the store on its own (the SDK mirrors transcript lines in the
background). A flower killed in between leaves a command that ran and a store that never
heard of it: the resumed session does not know the call, the model asks for it again,
and the command runs twice. The chaos harness (benchmarks/chaos) measured the window: a
SIGKILL 50 ms into a Bash call found no trace of it in the store.

So a PreToolUse hook (every tool, main thread and workers) waits until the store has
taken the line holding the call's ``tool_use`` block. Then a call cut off by any fault
is in the store without a result, and the resumed session is told it may or may not
have taken effect (:data:`flower.stores.prune.ORPHAN_NOTE`), never left to replay it.
The wait is bounded (:data:`WAIT_S`): a store that cannot take the line in time lets
the call go on rather than stall the run; the usual wait is one store write.
"""

from __future__ import annotations

from typing import Any

import anyio

__all__ = ["WAIT_S", "CallLedger", "durable_calls"]

#: The longest a tool call waits for its line to reach the store.
WAIT_S = 5.0


class CallLedger:
    """The ``tool_use`` ids a store has taken, and the hooks waiting for one."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._waiting: dict[str, anyio.Event] = {}

    def saw(self, entries: list[Any]) -> None:
        """Note the calls in ``entries`` (just stored) and wake whoever waits for them."""
        for entry in entries:
            message = entry.get("message") if isinstance(entry, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    call = str(block.get("id") or "")
                    if call:
                        self._seen.add(call)
                        event = self._waiting.pop(call, None)
                        if event is not None:
                            event.set()

    async def wait(self, call: str, timeout: float = WAIT_S) -> bool:
        """Until the store has taken call ``call``; False when ``timeout`` ran out."""
        if not call or call in self._seen:
            return True
        event = self._waiting.setdefault(call, anyio.Event())
        with anyio.move_on_after(timeout):
            await event.wait()
        self._waiting.pop(call, None)
        return call in self._seen


def durable_calls(ledger: CallLedger) -> dict[str, list[Any]]:
    """The hook configuration: PreToolUse on every tool, waiting for the call's line."""
    from claude_agent_sdk import HookMatcher

    async def hook(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        await ledger.wait(str(tool_use_id or ""))
        return {}

    matcher: Any = HookMatcher(matcher=None, hooks=[hook])  # type: ignore[list-item]
    return {"PreToolUse": [matcher]}
