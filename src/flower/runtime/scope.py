"""Plugins' scopes around one CLI session (the ``flower_session_scope`` hook).

No event comes before the CLI starts, yet a tracer must make its span the active one
*before* the SDK spawns the process (the SDK reads the active OpenTelemetry span into
``TRACEPARENT`` as it starts the CLI) and must see the session end, however it ends.
:class:`SessionScopes` enters every plugin's context manager around the session and
exits them in reverse order. Observing must never break the work: a scope that raises
is reported on stderr and skipped, and no scope can swallow the exception that ended
the session.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Literal

from flower.plugin_types import SessionRequest


class SessionScopes:
    """A ``with`` block that runs every plugin's scope for ``request``."""

    def __init__(self, request: SessionRequest) -> None:
        self.request = request
        self._entered: list[AbstractContextManager[Any]] = []

    def __enter__(self) -> SessionRequest:
        from flower.plugins import get_plugin_manager

        try:
            scopes = get_plugin_manager().hook.flower_session_scope(session=self.request)
        except Exception as exc:  # a plugin's hook that cannot even build its scope
            _report("building", exc)
            return self.request
        for scope in scopes:
            if scope is None:
                continue
            try:
                scope.__enter__()
            except Exception as exc:
                _report("entering", exc)
                continue
            self._entered.append(scope)
        return self.request

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]:
        while self._entered:
            scope = self._entered.pop()
            try:
                scope.__exit__(kind, exc, tb)  # its answer is ignored: nothing is swallowed
            except Exception as failure:
                _report("leaving", failure)
        return False


def _report(doing: str, exc: BaseException) -> None:
    print(f"flower: a session scope failed {doing} a session: {exc!r}", file=sys.stderr)
