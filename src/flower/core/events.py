"""What flower tells observers while it works.

Every progress report (a step starting, a retry, a handoff phase, a tool call) is an
:class:`Event`. The Runtime passes events to the ``on_event`` callback of the call
that caused them and to every plugin's ``flower_event`` hook, so a plugin can log,
meter or forward them without the caller wiring anything.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    """One thing that happened.

    Attributes:
        kind: What happened: ``"step"``, ``"retry"``, ``"handoff"``, ``"task"``,
            ``"tool"``, ``"text"``, ``"result"``, ``"context"``, ``"offline"``...
        payload: Details; each kind documents its keys where it is sent
            (``Event("handoff")`` carries ``payload["phase"]`` of
            ``near`` / ``writing`` / ``done``).
        step: Name of the step it belongs to, when there is one.
        at: ``time.time()`` when it was made.
    """

    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    step: str | None = None
    at: float = field(default_factory=time.time)


#: Receives events for one call (``Runtime.run(on_event=...)``); may be ``None``.
EventCallback = Callable[[Event], None]


def emit(event: Event, on_event: EventCallback | None = None) -> None:
    """Deliver ``event`` to the caller's callback and to every ``flower_event`` hook.

    Observers must never break the work, so an exception from either is reported on
    stderr and swallowed.
    """
    from flower.plugins import get_plugin_manager

    observers: list[EventCallback] = [lambda e: get_plugin_manager().hook.flower_event(event=e)]
    if on_event is not None:
        observers.insert(0, on_event)
    for deliver in observers:
        try:
            deliver(event)
        except Exception as exc:  # observers must not stop the run
            print(f"flower: an event observer failed on {event.kind!r}: {exc!r}", file=sys.stderr)
