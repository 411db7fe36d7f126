"""The Runtime's books: every finished step's row in ``manifest.json``, the step in flight
rescued when the process is about to die, the events that close a step, the cost so far.

Split from :mod:`flower.runtime.runner` because the loop decides what happens next and
this writes down what happened; it is also the part a signal handler calls
(:meth:`StepRecords.rescue`), so it must stay small, synchronous and never raise.
:class:`StepRecords` is a base of :class:`~flower.runtime.runner.Runtime`, which sets the
state it names.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from flower.kernel.events import EventCallback
from flower.kernel.result import KILLED, StepResult
from flower.plugins import emit
from flower.records.manifest import Manifest, manifest_row, mirror_step
from flower.runtime.signals import DEFAULT_SIGNALS
from flower.runtime.signals import rescue_on_signals as _rescue_on_signals
from flower.runtime.step_events import ended

if TYPE_CHECKING:
    from flower.runtime.parts import Live

__all__ = ["StepRecords"]


class StepRecords:
    """The rows of a Runtime's steps, and the rescue of the one in flight."""

    results: list[StepResult]
    manifest: Manifest
    run_id: str
    _current: StepResult | None
    _live: Live

    def total_cost(self) -> float:
        """What this Runtime's finished steps cost, in USD (handoff rounds included)."""
        return sum(r.cost_usd for r in self.results)

    def resave(self) -> None:
        """Write the finished steps' rows to ``manifest.json`` again, after a workflow
        amended one (a gate that refused the last answer and stopped the run says why in
        ``StepResult.refused``). Never raises."""
        try:
            self.manifest.write(manifest_row(r, self.run_id) for r in self.results)
        except OSError as exc:
            print(f"flower: could not write {self.manifest.path}: {exc}", file=sys.stderr)

    def rescue(self) -> None:
        """Write the step in flight to ``manifest.json`` as failed, ``error="killed-by-signal"``.

        For a process that is about to die (SIGHUP, SIGTERM, a second Ctrl-C): the row
        records the session id, cost so far and times, so the step is not silently
        missing. Synchronous and small, fit for a signal handler; safe to call twice
        (the second call finds nothing in flight) and never raises. The run, if it
        somehow continues, does not add a second row for the step.
        """
        current, self._current = self._current, None
        if current is None:
            return
        try:
            if not current.ended_at:  # still running (else: ended, its row not yet written)
                if current.error:
                    current.errors.append(current.error)
                current.ok, current.error = False, KILLED
                current.errors.append(KILLED)
                current.ended_at = time.time()
                current.context = self._live.ctx
            if not any(r is current for r in self.results):
                self.results.append(current)
            self.manifest.write(manifest_row(r, self.run_id) for r in self.results)
        except BaseException as exc:  # a rescue must never raise into a signal handler
            with contextlib.suppress(Exception):
                print(f"flower: could not rescue {current.step!r}: {exc!r}", file=sys.stderr)

    def rescue_on_signals(
        self, *, signals: Iterable[int | str] = DEFAULT_SIGNALS, grace: float = 10.0
    ) -> contextlib.AbstractContextManager[None]:
        """A ``with`` block in which SIGHUP and SIGTERM :meth:`rescue`, then exit 128+signum.

        Enter it in the main thread around the event loop (``with rt.rescue_on_signals():
        anyio.run(main)``). Without it those signals end Python on the spot and the step
        in flight never reaches the manifest. ``finally`` blocks still run on the way
        out; ``grace`` seconds later the process ends regardless. See
        :mod:`flower.runtime.signals`.
        """
        return _rescue_on_signals(self.rescue, signals=signals, grace=grace)

    def _finish(
        self,
        result: StepResult,
        on_event: EventCallback | None,
        classified: dict[str, str] | None = None,
    ) -> None:
        # Still "in flight" until its row is on disk: a signal landing in between is
        # rescued (with the outcome the step already has), not lost.
        result.ended_at = time.time()
        result.context = self._live.ctx
        if not any(r is result for r in self.results):  # rescue() may have added it
            self.results.append(result)
        try:
            self.manifest.write(manifest_row(r, self.run_id) for r in self.results)
        except OSError as exc:  # the step's outcome matters more than its bookkeeping
            print(f"flower: could not write {self.manifest.path}: {exc}", file=sys.stderr)
        finally:
            if self._current is result:
                self._current = None
        mirror_step(self, manifest_row(result, self.run_id))
        for event in ended(result, classified):  # ``error`` when it failed, then ``result``
            emit(event, on_event)
