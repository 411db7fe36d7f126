"""The plugin manager: default plugins first, then entry points of the ``flower`` group.

Loading is lazy: nothing here runs at import time; the first call to
:func:`get_plugin_manager` builds the manager and caches it. One broken plugin never
stops flower: an entry point that fails to import, or whose hooks do not validate
(a misspelt ``flower_*`` function), is reported in :func:`plugin_errors`, shown by
``flower plugins list`` and warned about on stderr, and left out.

Two environment variables choose what loads, as in ``llm`` and ``conda``:

- ``FLOWER_LOAD_PLUGINS``: a comma-separated allowlist of third-party plugins (entry
  point or distribution names). Set but empty, no third-party plugin loads.
- ``FLOWER_DISABLED_PLUGINS``: a comma-separated blocklist; names may be entry point
  names, distribution names, or default plugin names (``flower_plugins.store``).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

import pluggy

from flower import hookspecs
from flower.discovery import Found

if TYPE_CHECKING:
    # types only: flower --help loads this module and no event code
    from flower.kernel.events import Event, EventCallback

ENTRY_POINT_GROUP = "flower"

#: The default plugins, registered before any entry point. Each implements its hooks
#: with ``trylast=True`` so an installed plugin overrides it.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "flower_plugins.scripted_model",
    "flower_plugins.guards",
    "flower_plugins.store",
    "flower_plugins.roles",
    "flower_plugins.resilience",
    "flower_plugins.handoff",
    "flower_plugins.audit",
    "flower_plugins.human",
    "flower_plugins.render",
)


@dataclass
class PluginRecord:
    """What flower knows about one plugin, loaded or not."""

    name: str
    distribution: str
    version: str
    default: bool
    status: str = "ok"  # "ok", "error", "disabled"
    error: str | None = None
    hooks: list[str] = field(default_factory=list)


_records: list[PluginRecord] = []


def _names(variable: str) -> set[str] | None:
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _hooks_of(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    return sorted(caller.name for caller in pm.get_hookcallers(plugin) or [])


def _register_checked(pm: pluggy.PluginManager, plugin: object, name: str) -> None:
    """Register ``plugin`` and validate it; on failure leave nothing behind and raise.

    ``check_pending`` is what turns a misspelt ``flower_*`` function from a hook that
    silently never runs into an error; the message names the closest real hook.
    """
    pm.register(plugin, name=name)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        import difflib

        pm.unregister(plugin)
        known = [n for n in dir(hookspecs) if n.startswith("flower_")]
        unknown = [n for n in dir(plugin) if n.startswith("flower_") and n not in known]
        hints = []
        for wrong in unknown:
            close = difflib.get_close_matches(wrong, known, n=1)
            hints.append(
                f"unknown hook {wrong!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
            )
        raise pluggy.PluginValidationError(plugin, "; ".join(hints) or str(exc)) from None


def _flower_version() -> str:
    from flower.kernel.version import __version__

    return __version__


@cache
def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, built on first use."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    _records.clear()
    disabled = _names("FLOWER_DISABLED_PLUGINS") or set()
    allowed = _names("FLOWER_LOAD_PLUGINS")

    for module_name in DEFAULT_PLUGINS:
        record = PluginRecord(module_name, "flower", _flower_version(), default=True)
        _records.append(record)
        if module_name in disabled:
            record.status = "disabled"
            continue
        module = import_module(module_name)
        # A default plugin that fails validation is a bug in flower itself: fail loudly.
        _register_checked(pm, module, module_name)
        record.hooks = _hooks_of(pm, module)

    for ep in _entry_points():
        dist_name, version = ep.distribution, ep.version
        record = PluginRecord(ep.name, dist_name, version, default=False)
        _records.append(record)
        if {ep.name, dist_name} & disabled or (
            allowed is not None and not {ep.name, dist_name} & allowed
        ):
            record.status = "disabled"
            pm.set_blocked(ep.name)
            continue
        try:
            plugin = ep.load()
            _register_checked(pm, plugin, ep.name)
        except Exception as exc:  # a broken plugin is reported, never fatal
            record.status, record.error = "error", _describe(exc)
            print(
                f"flower: plugin {ep.name!r} ({dist_name}) was not loaded: {record.error}",
                file=sys.stderr,
            )
            continue
        record.hooks = _hooks_of(pm, plugin)
    return pm


def _entry_points() -> list[Found]:
    """The ``flower`` entry points, by name (the first of a name on the path wins).

    Read by :mod:`flower.discovery` (every command, ``--help`` included, pays for this,
    and ``importlib.metadata`` would be a third of ``flower --help``'s start-up), which
    defers to ``importlib.metadata`` for a path it does not read.
    """
    from flower.discovery import entry_points

    listed = entry_points(ENTRY_POINT_GROUP)
    if listed is None:
        listed = _metadata_entry_points()
    seen: set[str] = set()
    found = []
    for ep in listed:
        if ep.name not in seen:  # the same distribution on the path twice
            seen.add(ep.name)
            found.append(ep)
    return sorted(found, key=lambda ep: ep.name)


def _metadata_entry_points() -> list[Found]:
    """The same list from ``importlib.metadata`` (zips and eggs on the path, finders that
    add distributions)."""
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(ep, "dist", None)
        name = (dist.metadata["Name"] or ep.name) if dist is not None else ep.name
        found.append(Found(ep.name, ep.value, name, dist.version if dist is not None else "?"))
    return found


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def plugin_records() -> list[PluginRecord]:
    """Every plugin flower found, with its status, in registration order."""
    get_plugin_manager()
    return list(_records)


def plugin_errors() -> list[PluginRecord]:
    """Plugins that were found but could not be loaded."""
    return [r for r in plugin_records() if r.status == "error"]


def reset_plugin_manager() -> None:
    """Forget the cached manager so the next call re-reads entry points and variables.

    For tests and for long-lived processes that install plugins at run time.
    """
    get_plugin_manager.cache_clear()
    _records.clear()


def hook() -> Any:
    """Shorthand for ``get_plugin_manager().hook``."""
    return get_plugin_manager().hook


def emit(event: Event, on_event: EventCallback | None = None) -> None:
    """Deliver ``event`` to the caller's callback and to every ``flower_event`` hook.

    Observers must never break the work, so an exception from either is reported on
    stderr and swallowed. It lives with the plugin manager, not with :class:`Event` in
    :mod:`flower.kernel.events`, because delivering is calling the hooks.
    """
    observers: list[EventCallback] = [lambda e: get_plugin_manager().hook.flower_event(event=e)]
    if on_event is not None:
        observers.insert(0, on_event)
    for deliver in observers:
        try:
            deliver(event)
        except Exception as exc:  # observers must not stop the run
            print(f"flower: an event observer failed on {event.kind!r}: {exc!r}", file=sys.stderr)
