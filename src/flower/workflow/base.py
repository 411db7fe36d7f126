"""Steps and workflows: the layer you design, on top of the Runtime's one verb.

flower does not ship domain workflows; it fixes how one step runs and how steps hand
state to each other. A workflow is an ordered list of :class:`Step` declarations::

    Workflow([
        Step("调研", researcher, "…"),
        Step("方案", architect, lambda ctx: f"基于:\\n{ctx['调研']}"),
        Step("实现", coder, "…", resume_from="方案"),
        Step("复核", reviewer, "…", resume_from="实现", fork=True),
    ])

How a step attaches to a session (within one run):

- ``resume_from=None``: a new session that only knows what its prompt says (cheap,
  isolated). With ``Workflow.continuous`` (the default) a step that already has a live
  session in ``run_dir/lineage.json`` resumes *that* session instead, so a second
  process continues the conversation a killed one left.
- ``resume_from="<step>"``: resume that step's session (full context, coherent). A
  step that produced no session is a ``ValueError``, never a silent new session.
- ``resume_from=… , fork=True``: a fork of it; the original stays untouched (reviews,
  alternatives side by side).

``Ctx`` is a plain dict. ``ctx[step.name]`` holds what a passed step hands on (its text,
or what ``reduce`` makes of it); the private keys all start with ``_``:

====================  ====================================================================
``_runtime``          the Runtime running the workflow (gates that run agents need it)
``_on_event``         the ``on_event`` callback given to :meth:`Workflow.run`
``_channel``          the workflow's human channel (``None`` without one)
``_sessions``         step name -> its session id (pre-filled from the lineage)
``_results``          step name -> its last :class:`StepResult`
``_lineage``          the :class:`~flower.records.lineage.Lineage` (``continuous`` only)
``_woke``             which wake-up this is: 1 on a first run, 2 on the next process…
``_aborted``          why a gate raised :class:`StepAbort`
``_failed_why``       why the step at ``_failed_at`` stopped the run (one line)
``_gate_why``         what a gate found wrong with the last answer (set by gates that know)
``_failed_at``        the step whose failure stopped the workflow (``on_fail="stop"``)
====================  ====================================================================
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flower.kernel.events import Event, EventCallback
from flower.plugins import emit

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec
    from flower.records.lineage import Lineage
    from flower.runtime.runner import Runtime, StepResult

Ctx = dict[str, Any]

#: What a failed step does to the rest of the workflow.
#: ``stop``: ``ctx["_failed_at"] = name`` and the workflow ends;
#: ``skip``: go on without ``ctx[name]``; ``continue``: ``ctx[name] = result.text``, go on.
ON_FAIL = ("stop", "skip", "continue")

Prompt = str | Callable[[Ctx], str]
Gate = Callable[["StepResult", Ctx], bool | Awaitable[bool]]
When = Callable[[Ctx], bool | Awaitable[bool]]
Reject = Callable[["StepResult", Ctx], str | Awaitable[str]]
Reduce = Callable[["StepResult", Ctx], str]


class StepAbort(Exception):
    """Raised by a gate: stop now, another round will not help.

    Returning ``False`` from a gate means "not this time, try again"; raising this
    means "trying again only burns money" (the goal is unreachable and nobody answers).
    The step counts as failed without spending its remaining retries,
    ``ctx["_aborted"]`` gets the message, and ``on_fail`` decides what happens next.
    """


@dataclass
class Step:
    """One step: which agent, what to tell it, and how to judge and retry it.

    A Step is a declaration; ``Runtime.run(step.spec, prompt, …)`` does the work. The
    first three fields are positional: ``Step("取词", terse, "读 seed.txt …")``.

    Attributes:
        name: The step's name: the key in ``ctx``, in the lineage and in the manifest.
        spec: The agent that runs it.
        prompt: The prompt, or a function of ``ctx`` that builds it.
        resume_from: Resume this earlier step's session instead of starting a new one.
        fork: With ``resume_from``: fork that session, leaving it untouched.
        retries: Extra attempts when the result fails or the gate says no.
        gate: ``(result, ctx) -> bool`` (or async) run once per successful attempt;
            ``False`` fails the attempt, :class:`StepAbort` fails the step at once.
        on_fail: ``"stop"`` (default), ``"skip"`` or ``"continue"``, see :data:`ON_FAIL`.
        when: ``ctx -> bool`` (or async); ``False`` skips the step.
        on_reject: ``(result, ctx) -> str`` (or async), called when the gate says no.
            A non-empty return resumes the rejected session with it as the prompt
            (``name#roundN``); without it, or on ``""``, or when the attempt has no
            session, the next attempt starts over (``name#retryN``).
        resume_prompt: What to say instead of ``prompt`` when the step continues its
            own session from an earlier process: the session already holds the task,
            and sending it again reads as "the requirements changed".
        reduce: ``(result, ctx) -> str``: what a passed step puts in ``ctx[name]``
            (default: ``result.text``).
    """

    name: str
    spec: AgentSpec
    prompt: Prompt

    resume_from: str | None = None
    fork: bool = False

    retries: int = 0
    gate: Gate | None = None
    on_fail: str = "stop"
    when: When | None = None
    on_reject: Reject | None = None
    resume_prompt: Prompt | None = None
    reduce: Reduce | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError("a Step needs a name: Step('实现', spec, 'prompt')")
        if self.on_fail not in ON_FAIL:
            raise ValueError(
                f"Step {self.name!r}: on_fail must be one of {', '.join(ON_FAIL)},"
                f" not {self.on_fail!r}"
            )
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"Step {self.name!r}: retries must be 0 or more, not {self.retries!r}")
        if self.fork and not self.resume_from:
            raise ValueError(
                f"Step {self.name!r}: fork=True needs resume_from=<step> to say what to fork"
            )

    def render(self, ctx: Ctx, *, resumed: bool = False) -> str:
        """The prompt for this attempt: ``resume_prompt`` when continuing its own session."""
        template = self.resume_prompt if resumed and self.resume_prompt is not None else self.prompt
        return template(ctx) if callable(template) else template


@dataclass
class Workflow:
    """Steps run in order, with state handed on through ``ctx``.

    Attributes:
        steps: The steps (positional: ``Workflow([...])``).
        name: For the reader.
        context: The initial ``ctx``; :meth:`run` fills and returns this same dict.
        channel: The human channel its agents ask through. While :meth:`run` runs, it
            routes the channel's events to ``on_event`` when the channel has no
            ``on_event`` of its own, so a UI watches one stream; a driver finds the
            channel here to answer.
        workbench: The workbench its documents live in. While the workflow runs, the
            Runtime uses this one (and goes back to its own afterwards): the brief and
            goal must be in the workbench whose index the coordinator is shown.
        continuous: Keep ``run_dir/lineage.json`` and continue each step's session
            from an earlier process (default). ``False``: every run starts fresh.
        finish: ``ctx -> None`` (or async), called once when the steps are over,
            whether they all passed or the workflow stopped on a failed step; not when
            the run is cancelled or raises. The starter flow's bequest
            (``flower.workflow.bequest``) is one. An exception from it is reported on
            stderr and does not change the outcome.
        start: ``ctx -> None`` (or async), called once before the first step, when the
            run's records are open (``ctx["_runtime"]``, the lineage, the channel's
            wiring): the starter flow appends the human's wake remark to the brief here,
            so it is kept as the frozen brief (``records/frozen_copy.py``).
    """

    steps: list[Step]
    name: str = "workflow"
    context: Ctx = field(default_factory=dict)
    channel: Any = None
    workbench: Any = None
    continuous: bool = True
    finish: Callable[[Ctx], Any] | None = None
    start: Callable[[Ctx], Any] | None = None

    def __post_init__(self) -> None:
        names = [step.name for step in self.steps]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(
                f"workflow {self.name!r}: step names must be unique (they key ctx and the"
                f" lineage), repeated: {', '.join(twice)}"
            )

    def _protect(self, runtime: Runtime) -> None:
        """What flower writes for this workflow and no agent may: the judge ledger's notes
        and the channel's question log (the frozen documents protect themselves as they
        are loaded or frozen, ``workflow/frozen.py``)."""
        from flower.records.ledger import LEDGER_NAME

        protect = getattr(runtime, "protect", None)
        if protect is None:
            return
        workbench = self.workbench or getattr(runtime, "workbench", None)
        if workbench is not None:
            protect(workbench.notes / LEDGER_NAME)
        log = getattr(self.channel, "log_path", None)
        if log:
            protect(log)

    async def run(
        self,
        runtime: Runtime,
        *,
        on_event: EventCallback | None = None,
        on_step: Callable[[Step, StepResult], None] | None = None,
    ) -> Ctx:
        """Run the steps in order and return ``ctx``.

        Emits ``Event("wake", {"woke", "steps", "notice"})`` first when continuous (what
        the lineage gave, and ``notice``: why something on disk was not used, "" when
        all of it was), ``Event("step", {"index", "total", "resumed", "woke"})`` before
        a step runs and ``Event("skip", {"index", "total", "woke"})`` when its ``when``
        says no.
        """
        ctx = self.context
        ctx["_runtime"] = runtime
        ctx["_on_event"] = on_event
        ctx["_channel"] = self.channel
        for stale in ("_failed_at", "_failed_why", "_aborted", "_gate_why"):  # not this run's
            ctx.pop(stale, None)
        lent = self.channel is not None and getattr(self.channel, "on_event", False) is None
        if lent:
            self.channel.on_event = on_event
        kept = self.channel is not None and getattr(self.channel, "on_amended", False) is None
        if kept:  # an amended brief is the frozen one from then on (records/frozen_copy.py)
            from flower.records.frozen_copy import keep

            self.channel.on_amended = lambda path: keep(runtime, path)
        sessions: dict[str, str] = ctx.setdefault("_sessions", {})
        results: dict[str, StepResult] = ctx.setdefault("_results", {})

        from flower.records.drift import Drift, record, since

        lineage = self._lineage(runtime)
        if lineage is not None:
            ctx["_lineage"] = lineage
            for step_name, sid in lineage.steps.items():
                sessions.setdefault(step_name, sid)
            ctx["_woke"] = lineage.bump()
            drift = since(lineage.workspace, lineage.path.parent) if lineage.steps else Drift()
            ctx["_drift"] = drift.prompt()
            notice = "; ".join(
                filter(None, [lineage.notice, self._unmatched(lineage), drift.summary()])
            )
            wake = {"woke": ctx["_woke"], "steps": dict(lineage.steps), "notice": notice}
            emit(Event("wake", wake), on_event)
        else:
            ctx["_woke"] = 1
        woke: int = ctx["_woke"]

        own_workbench = getattr(runtime, "workbench", None)
        if self.workbench is not None:
            self.workbench.ensure()
            runtime.workbench = self.workbench
        self._protect(runtime)
        outer_ctx, runtime.ctx = getattr(runtime, "ctx", None), ctx
        outcome = _Outcome(runtime if lineage is not None else None)
        try:
            if self.start is not None:
                await _settle(self.start(ctx))
            total = len(self.steps)
            for index, step in enumerate(self.steps, 1):
                if step.when is not None and not await _settle(step.when(ctx)):
                    info = {"index": index, "total": total, "woke": woke}
                    emit(Event("skip", info, step=step.name), on_event)
                    continue
                outcome.running(step.name)
                result, passed = await self._run_step(
                    step, ctx, runtime, lineage, index=index, on_event=on_event
                )
                if lineage is not None:  # the picture the next wake compares with
                    record(lineage.workspace, lineage.path.parent)
                results[step.name] = result
                if result.session_id:
                    sessions[step.name] = result.session_id
                if on_step is not None:
                    on_step(step, result)
                if passed:
                    ctx[step.name] = step.reduce(result, ctx) if step.reduce else result.text
                    continue
                if step.on_fail == "stop":
                    ctx["_failed_at"] = step.name
                    ctx["_failed_why"] = _failure(result, ctx)
                    if result.ok:  # its session was fine: its check refused the answer
                        result.refused = ctx["_failed_why"]
                        resave = getattr(runtime, "resave", None)
                        if callable(resave):
                            resave()
                    break
                if step.on_fail == "continue":
                    ctx[step.name] = result.text
            if self.finish is not None:
                try:
                    await _settle(self.finish(ctx))
                except Exception as exc:  # closing words must not undo the run's outcome
                    print(f"flower: the workflow's finish failed: {exc}", file=sys.stderr)
                if lineage is not None:  # what finish wrote is no drift for the next wake
                    record(lineage.workspace, lineage.path.parent)
            if lineage is not None:  # the last round's work, for `flower diff` and a rewind
                from flower.workflow.rewind import take

                take(runtime, sessions, kind="end", step=str(ctx.get("_failed_at") or ""))
            outcome.ended(ctx)
        except BaseException as exc:
            outcome.broke(exc)
            raise
        finally:
            runtime.ctx = outer_ctx
            if self.workbench is not None:
                runtime.workbench = own_workbench
            if lent:  # given back: a later run routes the channel to its own on_event
                self.channel.on_event = None
            if kept:
                self.channel.on_amended = None
        return ctx

    def _unmatched(self, lineage: Lineage) -> str:
        """Why a step of ours finds no session while the lineage has one for a name we
        lack (a renamed step starts fresh: said, not silent); "" when nothing fits that."""
        names = {step.name for step in self.steps}
        unused = [name for name in lineage.steps if name not in names]
        if not unused or all(name in lineage.steps for name in names):
            return ""
        return (
            f"the lineage has sessions for {', '.join(repr(n) for n in unused)}, which"
            " this workflow has no step of; a renamed step starts fresh"
        )

    def _lineage(self, runtime: Runtime) -> Lineage | None:
        """The run's lineage when continuous and the Runtime has somewhere to keep it."""
        run_dir = getattr(runtime, "run_dir", None)
        workspace = getattr(runtime, "workspace", None)
        if not self.continuous or run_dir is None or workspace is None:
            return None
        from flower.records.lineage import LINEAGE_NAME, Lineage
        from flower.records.runstate import mirror_for, restore

        store = getattr(runtime, "store", None)
        workbench = self.workbench or getattr(runtime, "workbench", None)
        marker = workbench.root if workbench is not None else None
        restored = restore(run_dir, marker, store)  # a clone that came without runs/
        adopt = getattr(runtime, "adopt_sessions", None)
        lineage = Lineage.open(
            run_dir,
            workspace,
            alive=runtime.has_session,
            adopt=adopt,
            mirror=mirror_for(store, marker),
        )
        if restored:
            said = f"no {LINEAGE_NAME} here: run {restored[:8]} came from the session store"
            lineage.notice = "; ".join(filter(None, [said, lineage.notice]))
        return lineage

    async def _run_step(
        self,
        step: Step,
        ctx: Ctx,
        runtime: Runtime,
        lineage: Lineage | None,
        *,
        index: int,
        on_event: EventCallback | None,
    ) -> tuple[StepResult, bool]:
        """Every attempt of one step; returns the last result and whether it passed."""
        sessions: dict[str, str] = ctx["_sessions"]
        if step.resume_from:
            origin = sessions.get(step.resume_from)
            if not origin:
                raise ValueError(
                    f"step {step.name!r} resumes from {step.resume_from!r}, which has no"
                    " session (it did not run, was skipped, or failed before starting)"
                )
            start_resume: str | None = origin
            start_fork = step.fork
        else:
            start_resume, start_fork = None, False
        own = lineage.steps.get(step.name) if lineage is not None else None
        resumed = bool(own)

        info = {"index": index, "total": len(self.steps), "resumed": resumed, "woke": ctx["_woke"]}
        emit(Event("step", info, step=step.name), on_event)

        # Locals, never written back: the same Step object may run again.
        resume: str | None
        if own:
            prompt, resume, fork = step.render(ctx, resumed=True), own, False
            if ctx.get("_drift"):  # what changed while it was paused, before it relies on memory
                prompt = f"{prompt}\n\n{ctx['_drift']}"
        else:
            prompt, resume, fork = step.render(ctx), start_resume, start_fork
        late = _late_answers(runtime, step.name)
        if late:  # answers to what this step asked before its run stopped (its session,
            prompt = f"{late}\n\n{prompt}"  # or a fresh one if the store lost that)

        run_dir = getattr(runtime, "run_dir", None) if lineage is not None else None
        rewound = _rewound(run_dir, step.name)
        resume_at: str | None = None
        if rewound is not None:  # `flower rewind`: as the session stood when the round began
            at = rewound.get("session")
            fallback = step.render(ctx, resumed=bool(at))
            prompt = _rewound_prompt(rewound, fallback)
            resume, fork = (
                (at, bool(rewound.get("fork", True))) if at else (start_resume, start_fork)
            )
            resume_at = rewound.get("at") if at and fork else None

        def remember(sid: str) -> None:
            sessions[step.name] = sid
            if lineage is not None:
                lineage.remember(step.name, sid)
            if rewound is not None:  # the fork is the step's session now: rewound once
                _rewound_done(run_dir)

        result: StepResult | None = None
        passed = False
        for attempt in range(step.retries + 1):
            if attempt == 0:
                label = step.name
            elif step.on_reject is not None:
                label = f"{step.name}#round{attempt + 1}"
            else:
                label = f"{step.name}#retry{attempt}"
            if lineage is not None:  # the folder and every session, before this round
                _checkpoint(runtime, step, ctx, label=label, prompt=prompt)
            outer = runtime.on_session
            runtime.on_session = remember
            at, resume_at = resume_at, None  # a rewind's message cut, on its first attempt only
            try:
                result = await runtime.run(
                    step.spec, prompt, step_name=label, resume=resume, fork=fork,
                    on_event=on_event, **({"resume_at": at} if at else {}),
                )  # fmt: skip
            finally:
                runtime.on_session = outer
            gated = False
            try:
                if result.ok and step.gate is not None:
                    gated = True
                    passed = bool(await _settle(step.gate(result, ctx)))
                else:
                    passed = result.ok
            except StepAbort as exc:
                ctx["_aborted"] = str(exc)
                passed = False
                break
            if passed or attempt == step.retries:
                break
            feedback = ""
            if gated and step.on_reject is not None and result.session_id:
                feedback = await _settle(step.on_reject(result, ctx)) or ""
            if feedback:
                prompt, resume, fork = feedback, result.session_id, False
            else:  # from scratch: the step's declared attachment, as on a first run
                prompt, resume, fork = step.render(ctx), start_resume, start_fork
        assert result is not None
        return result, passed


def _failure(result: StepResult, ctx: Ctx) -> str:
    """Why a step stopped the run, in a line (the closing line, status and the next wake
    say it): a gate's abort, the step's own error, or what its answer lacked."""
    if ctx.get("_aborted"):
        return str(ctx["_aborted"])
    if not result.ok and result.error:
        return result.error
    from flower.workflow.verdicts import VERDICT_KEY

    verdict = ctx.get(VERDICT_KEY)
    if verdict is not None and not getattr(verdict, "achieved", True):
        state = getattr(verdict, "state", "") or "vague"
        return f"the judge's last verdict was {state}: {getattr(verdict, 'reason', '')}".strip()
    if ctx.get("_gate_why"):  # a gate said what was wrong (frozen_step: the sections)
        return str(ctx["_gate_why"])
    attempts = result.attempts or 1
    return f"its answer did not pass the step's check ({attempts} attempt(s))"


class _Outcome:
    """Keeps ``outcome.json`` (:mod:`flower.records.outcome`) up to date for a continuous run:
    which step runs now, then how the run ended."""

    def __init__(self, runtime: Any) -> None:
        self.run_dir = getattr(runtime, "run_dir", None) if runtime is not None else None
        self.step = ""

    def running(self, step: str) -> None:
        self.step = step
        self._write("running")

    def ended(self, ctx: Ctx) -> None:
        from flower.workflow.verdicts import VERDICT_KEY

        if ctx.get("_failed_at"):
            self._write("stopped", step=str(ctx["_failed_at"]), why=str(ctx.get("_failed_why")))
            return
        verdict = ctx.get(VERDICT_KEY)
        met = bool(getattr(verdict, "achieved", False))
        self._write("done", why="the goal was met (the judge: achieved)" if met else "", met=met)

    def broke(self, exc: BaseException) -> None:
        import asyncio
        import signal

        from flower.runtime.signals import received

        signum = received()
        if signum is not None:  # a kill unwinds as a cancel does: it is no Ctrl-C
            self._write("killed", why=signal.Signals(signum).name)
        elif isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
            self._write("quit")
        elif not isinstance(exc, SystemExit):  # a signal's exit leaves "running": killed
            self._write("stopped", why=" ".join(str(exc).split())[:300] or type(exc).__name__)

    def _write(
        self, state: str, *, step: str | None = None, why: str = "", met: bool = False
    ) -> None:
        if self.run_dir is None:
            return
        from pathlib import Path

        from flower.records.outcome import write_outcome

        where = self.step if step is None else step
        write_outcome(Path(self.run_dir), state, step=where, why=why, met=met)


def _checkpoint(runtime: Any, step: Step, ctx: Ctx, *, label: str, prompt: str) -> None:
    """A checkpoint before an attempt (:mod:`flower.workflow.rewind`): a work round when the
    step is guarded by a judge (its round numbered as the ledger will number it)."""
    from flower.workflow.rewind import take
    from flower.workflow.verdicts import ROUND_KEY

    guarded = step.on_reject is not None and ROUND_KEY in ctx
    round_ = int(ctx.get(ROUND_KEY) or 0) + 1 if guarded else None
    kind = "round" if guarded else "step"
    take(runtime, ctx["_sessions"], kind=kind, step=step.name, label=label, round_=round_,
         prompt=prompt)  # fmt: skip


def _rewound(run_dir: Any, step: str) -> dict[str, Any] | None:
    from flower.workflow.rewind import take_pending

    return take_pending(run_dir, step)


def _rewound_prompt(data: dict[str, Any], fallback: str) -> str:
    from flower.workflow.rewind import rewound_prompt

    return rewound_prompt(data, fallback)


def _rewound_done(run_dir: Any) -> None:
    from flower.workflow.rewind import done_pending

    done_pending(run_dir)


def _late_answers(runtime: Any, step: str) -> str:
    """What the human answered since, to questions ``step`` asked before its run stopped
    (:mod:`flower.records.pending`); ``""`` without a run folder or answers."""
    from pathlib import Path

    from flower.records.pending import take_answers

    run_dir = getattr(runtime, "run_dir", None)
    return take_answers(Path(run_dir), step) if run_dir else ""


async def _settle(value: Any) -> Any:
    """``when``, ``gate`` and ``on_reject`` may be plain functions or coroutines."""
    if inspect.isawaitable(value):
        return await value
    return value


__all__ = ["ON_FAIL", "Ctx", "Step", "StepAbort", "Workflow"]
