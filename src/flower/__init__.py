"""flower: long-horizon coding agents on the Claude Agent SDK.

The public API is imported lazily: ``import flower`` stays cheap (the command line's
start-up depends on it), and ``from flower import Runtime`` loads only what it needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from flower.hookspecs import hookimpl

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Event": "flower.core.events",
    "Channel": "flower.core.channel",
    "RoleFactory": "flower.plugin_types",
    "HandoffRequest": "flower.plugin_types",
    "StoreSettings": "flower.plugin_types",
    "get_plugin_manager": "flower.plugins",
}

__all__ = ["__version__", "hookimpl", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'flower' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from flower.core.channel import Channel
    from flower.core.events import Event
    from flower.plugin_types import HandoffRequest, RoleFactory, StoreSettings
    from flower.plugins import get_plugin_manager
