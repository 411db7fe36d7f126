"""Transcripts in the shape the bundled CLI writes them (recorded from 2.1.x runs against
the scripted model: a PreToolUse deny, a permission not granted, an interrupt, a 529
storm), built line by line with a correct ``parentUuid`` chain."""

from __future__ import annotations

import itertools
from typing import Any

DENY_TEXT = "PreToolUse:Bash hook error: not on the main thread: dispatch a worker"
INTERRUPT_TEXT = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
    "it was a file edit, the new_string was NOT written to the file). STOP what you are doing "
    "and wait for the user to tell you how to proceed. Correction to the text above: this "
    "call was stopped while running, not refused before it ran."
)


class Transcript:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self._ids = itertools.count()
        self._parent: str | None = None

    def _add(self, line: dict[str, Any]) -> dict[str, Any]:
        uid = f"uuid-{next(self._ids)}"
        line = {"parentUuid": self._parent, "isSidechain": False, **line, "uuid": uid}
        self.lines.append(line)
        self._parent = uid
        return line

    def prompt(self, text: str) -> dict[str, Any]:
        return self._add({"type": "user", "message": {"role": "user", "content": text}})

    def say(self, text: str) -> dict[str, Any]:
        return self._add(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{len(self.lines)}",
                    "role": "assistant",
                    "model": "claude-opus-5-5",
                    "content": [{"type": "text", "text": text}],
                    "usage": {"input_tokens": 1000 + len(self.lines)},
                },
            }
        )

    def call(self, command: str, output: Any, *, tool: str = "Bash", **fields: Any) -> str:
        """An assistant tool_use line and the user tool_result line answering it."""
        call_id = f"toolu_{len(self.lines)}"
        use = self._add(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{len(self.lines)}",
                    "role": "assistant",
                    "model": "claude-opus-5-5",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": call_id,
                            "name": tool,
                            "input": {"command": command},
                        }
                    ],
                    "stop_reason": "tool_use",
                    "usage": {"input_tokens": 1000 + len(self.lines)},
                },
            }
        )
        block = {"tool_use_id": call_id, "type": "tool_result", "content": output}
        if fields.pop("is_error", False):
            block["is_error"] = True
        self._add(
            {
                "type": "user",
                "message": {"role": "user", "content": [block]},
                "toolUseResult": {
                    "stdout": output if isinstance(output, str) else "",
                    "stderr": "",
                },
                "sourceToolAssistantUUID": use["uuid"],
                **fields,
            }
        )
        return call_id

    def denied(self, command: str) -> str:
        return self.call(
            command,
            DENY_TEXT,
            is_error=True,
            toolDenialKind="permission-rule",
            permissionDecision={"decision": "reject", "source": "hook", "reasonType": "hook"},
        )

    def absent(self, command: str, tool: str = "CronCreate") -> str:
        """A call to a tool outside the session's tool set, as the CLI answers it."""
        return self.call(
            command,
            f"<tool_use_error>Error: No such tool available: {tool}. {tool} is disabled for"
            " this session, in subagents as well as here.</tool_use_error>",
            tool=tool,
            is_error=True,
        )

    def not_granted(self, command: str) -> str:
        return self.call(
            command,
            "Claude requested permissions to use Bash, but you haven't granted it yet.",
            is_error=True,
            toolDenialKind="user-rejected",
            permissionDecision={"decision": "reject", "source": "config"},
        )

    def interrupted(self, command: str) -> str:
        call_id = self.call(command, INTERRUPT_TEXT, is_error=True, toolDenialKind="user-rejected")
        self._add(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "[Request interrupted by user for tool use]"}
                    ],
                },
            }
        )
        return call_id

    def storm(self, retries: int = 2) -> None:
        for attempt in range(1, retries + 1):
            self._add(
                {
                    "type": "system",
                    "subtype": "api_error",
                    "level": "error",
                    "error": {"status": 529, "formatted": "529 Overloaded"},
                    "retryAttempt": attempt,
                }
            )
        self._add(
            {
                "type": "assistant",
                "message": {
                    "id": "synthetic",
                    "model": "<synthetic>",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "API Error: 529 Overloaded."}],
                    "usage": {"input_tokens": 0},
                },
                "isApiErrorMessage": True,
                "apiErrorStatus": 529,
            }
        )

    def last_prompt(self) -> None:
        self.lines.append({"type": "last-prompt", "lastPrompt": "x", "leafUuid": self._parent})


def chain(lines: list[dict[str, Any]]) -> list[str]:
    """The uuids from the leaf back to the root, following ``parentUuid``."""
    by_id = {line["uuid"]: line for line in lines if "uuid" in line}
    leaf = [line for line in lines if "uuid" in line][-1]
    out = []
    while leaf is not None:
        out.append(leaf["uuid"])
        parent = leaf.get("parentUuid")
        assert parent is None or parent in by_id, f"broken chain: {parent} is gone"
        leaf = by_id.get(parent) if parent else None
    return out[::-1]


def results(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        block["tool_use_id"]: block["content"]
        for line in lines
        if line.get("type") == "user" and isinstance(line["message"]["content"], list)
        for block in line["message"]["content"]
        if block.get("type") == "tool_result"
    }


def calls(lines: list[dict[str, Any]]) -> list[str]:
    return [
        block["id"]
        for line in lines
        if line.get("type") == "assistant"
        for block in line["message"]["content"]
        if block.get("type") == "tool_use"
    ]
