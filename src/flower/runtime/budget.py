"""The run budget: one cap on what a whole run spends, whatever runs and however often.

A session can carry ``max_budget_usd``, but a run left alone overnight is many sessions
(clarify, the goal, every work round and its judge, handoff rounds, side questions, the
bequest) in several processes (every wake is one), possibly on several machines. What
people fear is the total, so the total is what this bounds:

- **Counted in the store.** Every session's cost (the CLI's ``total_cost_usd`` for that
  session) is a row of the run's spend in the session store (``stores/spend.py``), by the
  lineage's lasting run id; the run's spend is their sum, read again before every
  session. A killed process, yesterday's wake and another machine sharing a Postgres
  store all count. The cap is kept there too, so a wake without ``--budget`` keeps it.
- **Enforced by the CLI, checked by flower.** No session starts once the spend has
  reached the cap, and a session that starts gets ``max_budget_usd = min(its own, what is
  left)``, so the CLI itself stops it (result subtype ``error_max_budget_usd``) after the
  request that crosses the cap, subagents' requests included. ``Runtime.run`` then raises
  :class:`BudgetReached` at that safe point: the step in flight gets its manifest row (as
  with a quit), the lineage keeps its session, and a higher budget continues it.
- **Warned about.** ``Event("budget")``: ``phase="spent"`` after every paid session
  (``spent``, ``cap``, ``left``: what a page shows), ``"near"`` once when the spend passes
  :data:`WARN_SHARE` of the cap, ``"reached"`` at the stop. The CLI reports a session's
  cost only when the session ends, so the warning comes between sessions.

How far past the cap spending can go (measured with the bundled CLI; docs/runtime.md):
one request per thread running when the cap is crossed (the main thread and each
subagent running in parallel), plus what runs concurrently in a second session (a side
question, capped by the same "what is left").

A Runtime finds its budget with :func:`budget_for`: ``Runtime.budget`` when set (``flower
run --budget``), else the cap the workflow carries (``starter_flow(budget_usd=…)``, or
none: the run's kept cap, if any), bound to the run at its first session and registered
for the workspace, so a side question's own Runtime in the same process counts against
the same run.
"""

from __future__ import annotations

import math
import os
import socket
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any

from flower.kernel.events import Event, EventCallback
from flower.kernel.result import STOPPED
from flower.plugins import emit

if TYPE_CHECKING:
    from flower.kernel.result import StepResult

__all__ = [
    "BUDGET_ENV",
    "BUDGET_KEY",
    "NO_CAP",
    "WARN_SHARE",
    "Budget",
    "BudgetReached",
    "budget_for",
    "env_budget",
    "money",
    "parse_budget",
    "raised",
]

#: The environment variable that gives a run its cap when ``--budget`` does not.
BUDGET_ENV = "FLOWER_BUDGET"
#: The ``ctx`` key under which a workflow carries its cap (``starter_flow(budget_usd=…)``).
BUDGET_KEY = "_budget"
#: The share of the cap at which the view is warned, once per process.
WARN_SHARE = 0.8
#: "No cap": given as ``none`` / ``off``, it clears a cap the run kept.
NO_CAP = math.inf
#: Spend this close to the cap counts as the cap (costs are float sums).
EPSILON = 1e-9
_NO_CAP_WORDS = frozenset({"none", "off", "no"})


def parse_budget(value: object) -> float:
    """A budget as given (``"20"``, ``"$0.5"``, ``0.05``): USD above 0, or :data:`NO_CAP`
    for ``none``/``off`` (and ``math.inf`` given from code; ``"inf"`` typed is refused, as
    is any amount too large to be one).

    :raise ValueError: one line saying what a budget looks like.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an amount in USD")
    if isinstance(value, int | float):
        if value == NO_CAP:  # from code: math.inf, as the words say it
            return NO_CAP
        amount = float(value)
    else:
        text = str(value).strip().lower().removeprefix("$").strip()
        if text in _NO_CAP_WORDS:
            return NO_CAP
        try:
            amount = float(text)
        except ValueError:
            raise ValueError(
                f"{str(value)!r} is not an amount in USD: give one above 0 (20, 0.5),"
                " or none for no cap"
            ) from None
    if not math.isfinite(amount) or amount <= 0:
        raise ValueError(
            f"{value!r} is no budget: give an amount in USD above 0 (20, 0.5), or none for no cap"
        )
    return amount


def env_budget() -> float | None:
    """The cap :data:`BUDGET_ENV` gives, ``None`` when it is unset or empty.

    :raise ValueError: the variable holds no budget (one line naming it).
    """
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if not raw:
        return None
    try:
        return parse_budget(raw)
    except ValueError as exc:
        raise ValueError(f"{BUDGET_ENV}: {exc}") from None


def money(amount: float | None) -> str:
    """``$0.0521``, ``$0.05``, ``$40``: at most four decimals, no trailing zeros."""
    if amount is None or not math.isfinite(amount):
        return "no cap"
    text = f"{amount:.4f}".rstrip("0").rstrip(".")
    return f"${text if text not in ('', '-0') else '0'}"


def raised(cap: float, spent: float) -> float:
    """The budget to suggest when ``cap`` stopped a run that spent ``spent``: twice the
    cap, or the spend plus the cap when the cap was set below what was already spent;
    rounded up to the cent."""
    return math.ceil(max(2 * cap, spent + cap) * 100 - 1e-6) / 100


def spent_text(spent: float, cap: float | None) -> str:
    """Why nothing more may be asked of the model, in one line."""
    return (
        f"the run's budget is spent ({money(spent)} of {money(cap)});"
        " nothing more is asked of the model"
    )


class BudgetReached(Exception):
    """The run's budget is spent: raised by ``Runtime.run`` at a safe point (before a
    session starts, or after the one the CLI stopped at the cap) instead of going on.

    The step in flight already has its manifest row (``error`` begins ``"stopped: "``)
    and the lineage its session, exactly as after a quit: a higher budget continues it.
    """

    def __init__(self, spent: float, cap: float, *, step: str | None = None, run: str = "") -> None:
        self.spent, self.cap, self.step, self.run = spent, cap, step, run
        super().__init__(spent_text(spent, cap))

    @property
    def suggested(self) -> float:
        """A budget that would let the run go on (:func:`raised`)."""
        return raised(self.cap, self.spent)


class Budget:
    """A run's cap and what it has spent, kept in the session store by run id.

    Args:
        cap: What this process was given (USD above 0; :data:`NO_CAP` clears the run's
            kept cap); ``None`` keeps whatever cap the run has (or none).
        warn_share: The share of the cap at which ``Event("budget", phase="near")`` fires.

    A Budget counts nothing until :meth:`bind` ties it to a Runtime's run (its first
    session does that, through :func:`budget_for`). Nothing here raises into the run but
    :class:`BudgetReached`: a store that refuses a row keeps the cost in this process's
    count, so the cap still holds for what this process spends.
    """

    def __init__(self, cap: float | None = None, *, warn_share: float = WARN_SHARE) -> None:
        if cap is not None:
            cap = parse_budget(cap)
        if not 0 < warn_share <= 1:
            raise ValueError(f"warn_share is a share of the cap, in (0, 1], not {warn_share}")
        self.cap = cap
        self.warn_share = warn_share
        #: The run this budget counts for ("" until bound).
        self.run = ""
        self.host = socket.gethostname()
        self._store: Any = None
        self._owner: weakref.ref[Any] | None = None
        self._lock = threading.RLock()
        self._lost = 0.0  # costs the store did not keep: counted here only
        self._known: tuple[float | None, float] | None = None  # the last (cap, spent) read
        self._unread = 0.0  # costs kept since that read
        self._warned = False
        self._complained = False

    def __repr__(self) -> str:
        return f"Budget(cap={self.cap!r}, run={self.run!r})"

    @property
    def bound(self) -> bool:
        return bool(self.run)

    def bind(self, rt: Any) -> Budget:
        """Count for ``rt``'s run (the lineage's lasting id, else the Runtime's own) in its
        store; keep this process's cap with the run; let side questions in the same
        workspace find it. Returns ``self``."""
        from flower.records.lineage import continuing_run

        with self._lock:
            self.run = continuing_run(rt.run_dir, rt.workspace) or str(rt.run_id)
            self._store = rt.store
            self._owner = weakref.ref(rt)
            _ACTIVE[_key(rt.workspace)] = self
            if self.cap is not None:
                keep = getattr(self._store, "set_cap", None)
                if callable(keep):
                    cap = None if self.cap == NO_CAP else self.cap
                    self._quietly(lambda: keep(self.run, cap, self.host), "keep the cap of")
                    from flower.records.state_copy import save_state

                    save_state(rt, self.run)  # the cap outside the workspace too
        return self

    # --- reading ------------------------------------------------------------------------

    def state(self) -> tuple[float | None, float]:
        """``(cap, spent)`` now: the cap in effect (``None``: none) and the run's spend,
        every process's, read from the store."""
        own = None if self.cap in (None, NO_CAP) else self.cap
        reader = getattr(self._store, "budget", None)
        with self._lock:
            if callable(reader) and self.run:
                found = self._quietly(lambda: reader(self.run), "read the spend of")
                if isinstance(found, dict):
                    cap = found.get("cap")
                    if cap is None and self.cap is not None and self.cap != NO_CAP:
                        cap = self.cap  # a store that keeps spend but not caps
                    self._known = (cap, float(found.get("spent") or 0.0))
                    self._unread = 0.0
                    return cap, self._known[1] + self._lost
            if self._known is not None:
                return self._known[0], self._known[1] + self._unread + self._lost
            return own, self._lost

    def left(self) -> float | None:
        """What may still be spent (``None``: no cap); 0 or less once the cap is reached."""
        cap, spent = self.state()
        return None if cap is None else cap - spent

    def spent_out(self) -> bool:
        """Whether the cap is reached: no new session may start."""
        left = self.left()
        return left is not None and left <= EPSILON

    def session_cap(self, own: float | None) -> float | None:
        """The ``max_budget_usd`` for a session starting now: the smaller of its own and
        what is left of the run's budget."""
        left = self.left()
        if left is None:
            return own
        left = max(left, EPSILON)
        return left if own is None else min(own, left)

    def refusal(self) -> str | None:
        """Why no session may start now, or ``None`` when one may."""
        cap, spent = self.state()
        if cap is None or cap - spent > EPSILON:
            return None
        return spent_text(spent, cap)

    # --- counting -----------------------------------------------------------------------

    def charge(
        self,
        cost: float,
        *,
        step: str | None,
        session_id: str | None,
        on_event: EventCallback | None = None,
    ) -> None:
        """Add one session's ``cost`` to the run's spend; tell the view where it stands
        (``phase="spent"``, and ``"near"`` once past the warning share). Never raises."""
        try:
            cost = float(cost or 0.0)
        except (TypeError, ValueError):
            return
        if not self.run or not math.isfinite(cost) or cost <= 0:
            return
        row = {"run_id": self.run, "step": step or "", "session_id": session_id,
               "cost_usd": cost, "host": self.host}  # fmt: skip
        recorder = getattr(self._store, "record_spend", None)
        with self._lock:
            kept = callable(recorder) and self._quietly(
                lambda: recorder(row) or True, "add a session's cost to"
            )
            if kept:
                self._unread += cost
                owner = self._owner() if self._owner is not None else None
                if owner is not None:  # the spend outside the workspace too (state_copy.py)
                    from flower.records.state_copy import save_state

                    save_state(owner, self.run)
            else:
                self._lost += cost
            cap, spent = self.state()
            near = (
                cap is not None
                and not self._warned
                and self.warn_share * cap <= spent < cap - EPSILON
            )
            if near:
                self._warned = True
        payload = {"spent": round(spent, 6), "cap": cap, "run": self.run, "cost_usd": cost,
                   "left": None if cap is None else round(max(cap - spent, 0.0), 6)}  # fmt: skip
        emit(Event("budget", {"phase": "spent", **payload}, step=step), on_event)
        if near:
            emit(Event("budget", {"phase": "near", **payload}, step=step), on_event)

    def reached(
        self, step: str | None, result: StepResult, on_event: EventCallback | None
    ) -> BudgetReached:
        """Mark ``result`` stopped by the budget, tell the view, and return the exception
        for ``Runtime.run`` to raise."""
        cap, spent = self.state()
        result.ok, result.error = False, STOPPED + spent_text(spent, cap)
        payload = {"phase": "reached", "spent": round(spent, 6), "cap": cap, "left": 0.0,
                   "run": self.run, "suggested": raised(cap or 0.0, spent)}  # fmt: skip
        emit(Event("budget", payload, step=step), on_event)
        return BudgetReached(spent, cap or 0.0, step=step, run=self.run)

    def _quietly(self, call: Any, what: str) -> Any:
        """``call()``, or ``None`` after one line on stderr (said once per Budget)."""
        try:
            return call()
        except Exception as exc:
            if not self._complained:
                self._complained = True
                print(
                    f"flower: could not {what} run {self.run[:8]} in the session store:"
                    f" {exc}; this process counts its own spend",
                    file=sys.stderr,
                )
            return None


#: Canonical workspace -> the budget a run in this process bound there.
_ACTIVE: dict[str, Budget] = {}


def _key(workspace: Any) -> str:
    return os.path.realpath(os.fspath(workspace))


def _active(workspace: Any) -> Budget | None:
    """The budget of a run in progress in ``workspace`` in this process, if any."""
    found = _ACTIVE.get(_key(workspace))
    owner = found._owner() if found is not None and found._owner is not None else None
    if found is None or owner is None or getattr(owner, "_closed", False):
        return None
    return found


def budget_for(rt: Any) -> Budget | None:
    """The budget ``rt``'s next session counts against, bound at first use; ``None`` when
    there is none to count for.

    ``rt.budget`` when set; else, inside a workflow (``rt.ctx``), one for the run with the
    cap the workflow carries (:data:`BUDGET_KEY`; none: the run's kept cap), kept as
    ``rt.budget``; else (a side question's Runtime, ``flower once``) the budget of a run
    in progress in the same workspace in this process.
    """
    own: Budget | None = getattr(rt, "budget", None)
    if own is not None:
        return own if own.bound else own.bind(rt)
    ctx = getattr(rt, "ctx", None)
    if ctx is None:
        return _active(rt.workspace)
    from flower.records.lineage import continuing_run

    cap = ctx.get(BUDGET_KEY)
    if cap is None and not continuing_run(rt.run_dir, rt.workspace):
        return None  # a workflow without a lineage and without a cap: nothing to count for
    budget = Budget(cap).bind(rt)
    rt.budget = budget
    return budget
