"""flower's scripted model: test agent workflows against the real Claude Code CLI, offline.

:class:`ScriptedModel` is a loopback emulator of the Anthropic Messages API. Point the CLI at it
(``ANTHROPIC_BASE_URL``) and it plays a :class:`Script`: text and tool calls, HTTP errors that
recover after N attempts, dropped connections, cut streams, "prompt is too long", token usage,
delays. It records every request for assertions. The pytest plugin (installed with flower) gives
the fixtures ``scripted_model`` and ``claude_env``; ``python -m flower.testing serve script.json``
runs it standalone.
"""

from .env import offline_env
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

__all__ = [
    "AGENT_HEADER",
    "OVERFLOW_MESSAGE",
    "Conversation",
    "Fault",
    "Match",
    "RecordedRequest",
    "Script",
    "ScriptError",
    "ScriptedModel",
    "ToolCall",
    "Turn",
    "ask",
    "bash",
    "conversation",
    "inbox",
    "load_script",
    "message_text",
    "offline_env",
    "text",
    "tool",
    "tool_search",
]
