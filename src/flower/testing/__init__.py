"""flower's scripted model: test agent workflows against the real Claude Code CLI, offline.

:class:`ScriptedModel` is a loopback emulator of the Anthropic Messages API. Point the CLI at it
(``ANTHROPIC_BASE_URL``) and it plays a :class:`Script`: text and tool calls, HTTP errors that
recover after N attempts, dropped connections, cut streams, "prompt is too long", token usage,
delays. It records every request for assertions. The pytest plugin (installed with flower) gives
the fixtures ``scripted_model`` and ``claude_env``; ``python -m flower.testing serve script.json``
runs it standalone.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: public name -> the module of this package that defines it. Imported on first use, so
#: ``flower --help`` (which lists ``flower scripted-model``) never loads the HTTP server.
_EXPORTS: dict[str, str] = {
    "AGENT_HEADER": "server",
    "OVERFLOW_MESSAGE": "server",
    "Conversation": "script",
    "Fault": "script",
    "Match": "script",
    "RecordedRequest": "server",
    "Script": "script",
    "ScriptError": "script",
    "ScriptedModel": "server",
    "ToolCall": "script",
    "Turn": "script",
    "ask": "script",
    "bash": "script",
    "conversation": "script",
    "inbox": "script",
    "load_script": "script",
    "message_text": "server",
    "need": "pytest_plugin",
    "offline_env": "env",
    "text": "script",
    "tool": "script",
    "tool_search": "script",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'flower.testing' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from .env import offline_env
    from .pytest_plugin import need
    from .script import (
        Conversation,
        Fault,
        Match,
        Script,
        ScriptError,
        ToolCall,
        Turn,
        ask,
        bash,
        conversation,
        inbox,
        load_script,
        text,
        tool,
        tool_search,
    )
    from .server import AGENT_HEADER, OVERFLOW_MESSAGE, RecordedRequest, ScriptedModel, message_text
