"""The Runtime: flower's execution core, with one verb, :meth:`Runtime.run` one step.

Everything that keeps a long step alive happens inside that one call: retrying an
attempt the network broke (waiting for the network first and resuming the same
session), continuing after the human interrupts with a remark, and handing a full
context over to a fresh session through a handoff document. The caller sees one
:class:`StepResult`, and ``run_dir/manifest.json`` gets one row for it.

The loop lives here; one attempt (one ``ClaudeSDKClient`` session, read to the end of
its turn) is ``runtime/attempt.py``, the handoff round ``runtime/relay.py``, the wait between a
failed attempt and the next ``runtime/retrying.py``, the signal handlers
``runtime/signals.py``. The Runtime's questions to its session store are
``runtime/sessions.py`` and its books (manifest rows, the rescue of the step in
flight) ``runtime/bookkeeping.py``: two bases of :class:`Runtime`, so every method is
still the Runtime's. The Runtime drives the CLI with ``ClaudeSDKClient``
rather than ``query()`` because only the client can interrupt a turn (for the human,
and when the context is full). The SDK is imported inside the methods that need it, so
``import flower`` stays light.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.agent_spec import HandoffPolicy
from flower.kernel.credentials import check_credentials
from flower.kernel.events import Event, EventCallback
from flower.kernel.files import keep_out_of_git
from flower.kernel.result import KILLED, StepResult, stopped_by
from flower.plugins import emit
from flower.records.handoff import is_overflow
from flower.records.manifest import Manifest, new_run_id
from flower.records.workbench import Workbench
from flower.roles.sandbox import Sandbox
from flower.runtime.assembly import build_store, policy, read_dotenv
from flower.runtime.attempt import Attempt, cli_env, error_text, run_attempt
from flower.runtime.bookkeeping import StepRecords
from flower.runtime.budget import budget_for
from flower.runtime.cache_rhythm import CacheRhythm, lifetime, marks_ttl
from flower.runtime.cutoff_words import cut_off_report
from flower.runtime.parts import PAUSED, Live, Words
from flower.runtime.relay import hand_off
from flower.runtime.resilience import Resilience, classify
from flower.runtime.resume_texts import CONTINUE_NOTE, INTERRUPT_NOTE, interrupt_prompt
from flower.runtime.retrying import wait_to_retry
from flower.runtime.sessions import SessionQueries
from flower.runtime.step_events import failure, reset

if TYPE_CHECKING:
    from claude_agent_sdk.types import SessionStore

    from flower.kernel.agent_spec import AgentSpec
    from flower.runtime.budget import Budget
    from flower.stores.trim import EphemeralPolicy, TrimPolicy

__all__ = ["KILLED", "Runtime", "StepResult"]

#: Kept importable from here for callers written before the split.
_error_text = error_text


class Runtime(SessionQueries, StepRecords):
    """Runs steps: one agent session (or a chain of them) per :meth:`run` call.

    Args:
        workspace: The project folder the agents work in (must exist).
        run_dir: Where ``sessions.db``, ``manifest.json`` and (``workbench=True``) the
            workbench live; relative to the current directory, not to ``workspace``.
        portable: Ignore this machine's user settings and outside MCP servers, so a
            spec behaves the same everywhere (see ``build_options``).
        trim: Trimming of large old tool results when a session is resumed
            (``TrimPolicy``; ``True`` for the defaults). Off by default; pruning of
            retry-storm errors, old denials and interruption leftovers happens anyway.
        ephemeral: Expiry of stale one-off command results on resume.
        keep_denials: Denied tool calls kept in a resumed context (the latest ones).
        workbench: A ``Workbench``, ``True`` for one at ``<run_dir>/workbench``
            (outside the repository), or ``False`` for none.
        spill_threshold: Characters above which a tool result is spilled to the
            workbench (``None``: never).
        resilience: A ``Resilience`` policy, ``True`` for the defaults, ``False`` for
            no retries.
        handoff: A ``HandoffPolicy``, ``True`` for the defaults, ``False`` to never hand
            off (the CLI's auto-compact is then the only relief).
        sandbox: Where Bash runs (:mod:`flower.roles.sandbox`): a ``Sandbox``, ``False``
            for no sandbox, ``True`` or ``None`` (the default) for the CLI's sandbox unless
            ``FLOWER_SANDBOX=0``. Every session with Bash in some thread runs its commands
            in it: writes in the workspace only, flower's state (:meth:`protect`) out of
            reach, homes hidden, no network but ``allow_net``. Read after the ``.env``
            files, so ``FLOWER_SANDBOX`` and ``FLOWER_ALLOW_NET`` may be set there.
        cache: When a step's sessions ask for the API's 1-hour prompt cache
            (:mod:`flower.runtime.cache_rhythm`): a ``CacheRhythm``, ``True`` for the
            default (once the step's waits between its sessions run past 4 minutes, as a
            coordinator's do while a slow judge works), ``False`` to never ask.

    The session store is the one the ``flower_session_store`` hook returns: by default
    the pruning store at ``run_dir/sessions.db`` with the policies above;
    ``FLOWER_STORE_URL`` lets a storage plugin serve another backend.

    ``load_dotenv()`` (the current folder's ``.env``, then the workspace's) and
    ``check_credentials()`` run before anything is written to disk, so missing
    credentials raise ``RuntimeError`` here, not minutes into a run.

    One step at a time: the context level, the interrupt and the handoff state are the
    Runtime's own. Use one Runtime per concurrent step. :meth:`interrupt` and
    :meth:`rescue` are the two calls meant for another thread or a signal handler.
    """

    INTERRUPTED = "interrupted-by-human"
    HANDOFF_DUE = "context-full-handoff"
    #: The prompt's tail after the human's words when they interrupted a turn, and the
    #: prompt after a pause the human ended without a word (Enter). The texts are
    #: ``runtime/resume_texts.py``'s; a subclass may set its own.
    INTERRUPT_NOTE = INTERRUPT_NOTE
    CONTINUE_NOTE = CONTINUE_NOTE

    def __init__(
        self,
        *,
        workspace: str | Path,
        run_dir: str | Path = "runs",
        portable: bool = True,
        trim: TrimPolicy | bool = False,
        ephemeral: EphemeralPolicy | bool = True,
        keep_denials: int = 1,
        workbench: Workbench | bool = False,
        spill_threshold: int | None = 4000,
        resilience: Resilience | bool = True,
        handoff: HandoffPolicy | bool = True,
        sandbox: Sandbox | bool | None = None,
        cache: CacheRhythm | bool = True,
    ) -> None:
        self.workspace = Path(workspace).expanduser().absolute()
        if not self.workspace.is_dir():
            raise ValueError(
                f"workspace {self.workspace} is not a folder: create it or pass another"
            )
        if keep_denials < 0:
            raise ValueError(f"keep_denials must be 0 or more, not {keep_denials}")
        self.run_dir = Path(run_dir).expanduser().absolute()
        self.portable = portable
        self.spill_threshold = spill_threshold
        self.resilience = policy(resilience, Resilience)
        self.handoff = policy(handoff, HandoffPolicy)
        self.cache = policy(cache, CacheRhythm)
        self.results: list[StepResult] = []
        #: Called with a session id the moment it is known (the workflow's lineage
        #: writes it to disk right away, so a killed process can still be resumed).
        self.on_session: Callable[[str], None] | None = None
        #: The ``ctx`` of the workflow running on this Runtime (set by
        #: ``Workflow.run``, ``None`` outside one): the handoff audit reads the last
        #: verdict, the brief and the channel from it.
        self.ctx: dict[str, Any] | None = None
        self.run_id = new_run_id()
        #: The run's budget (``runtime/budget.py``): what every session of the run may still
        #: spend. ``None``: found at the first session (the workflow's cap, or the one the
        #: run kept); set a :class:`~flower.runtime.budget.Budget` to give one.
        self.budget: Budget | None = None
        self._live = Live()
        self._words = Words()
        self._current: StepResult | None = None  # the step in flight, for rescue()
        self._closed = False

        read_dotenv(self.workspace)
        check_credentials()
        self.sandbox = Sandbox.resolve(sandbox)
        #: Paths no agent may write, beside the run's own state (``protect()``).
        self.protected: set[Path] = set()

        self.run_dir.mkdir(parents=True, exist_ok=True)
        try:  # the store holds every conversation: never in a commit (`git add -A`)
            keep_out_of_git(self.run_dir, "the run's store and records")
        except (OSError, ValueError) as exc:
            print(f"flower: could not keep {self.run_dir} out of git: {exc}", file=sys.stderr)
        if workbench is True:
            self.workbench: Workbench | None = Workbench(
                self.workspace, home=self.run_dir / "workbench"
            )
        else:
            self.workbench = workbench or None
        if self.workbench is not None:
            self.workbench.ensure()
        self.manifest = Manifest(self.run_dir, self.run_id)
        self.store: SessionStore = build_store(
            self.run_dir, self.workspace, trim, ephemeral, keep_denials
        )

    # --- public -------------------------------------------------------------------------

    @property
    def context(self) -> int:
        """The context size (tokens) the running or last step's model last reported."""
        return self._live.ctx

    @property
    def manifest_path(self) -> Path:
        """``run_dir/manifest.json``: one row per finished step, every process's."""
        return self.manifest.path

    def protect(self, *paths: str | Path) -> None:
        """Keep every agent's hands off ``paths`` from the next session on: no Bash
        command writes them (the sandbox), no Write or Edit reaches them (the state
        wall). The workflow protects what it freezes (the brief, the goal, the ledger);
        the run folder, the spill and archive folders and the run id always are."""
        self.protected.update(Path(p).expanduser().absolute() for p in paths)

    @property
    def interruptible(self) -> bool:
        """Whether a turn is running now, so :meth:`interrupt` would reach it."""
        return self._live.running and not self._closed

    def interrupt(self, said: str) -> bool:
        """Stop the running step's turn and continue it with the human's ``said``.

        The step goes on in the same session with ``said`` + ``INTERRUPT_NOTE`` as the
        next prompt (``CONTINUE_NOTE`` when ``said`` is blank); it does not count as a
        failed attempt. After :meth:`pause` this gives the paused step its words.
        Returns ``False`` when no step is running or paused. Safe from any thread (a
        UI's input thread, a signal handler in the loop's thread): the stop is handed to
        the event loop, waking it, and never awaited, so the call returns at once.
        """
        if self._closed:
            return False
        if self._words.give(said):
            return True
        return self._live.interrupt(said)

    def pause(self) -> bool:
        """Stop the running step's turn now, and wait for the human's words.

        The running tool is stopped with the turn and nothing more runs; the step
        resumes the same session when :meth:`interrupt` brings the words (blank: go on
        with nothing added). What a terminal's first Ctrl-C does. ``False`` when no
        turn is running. Safe from any thread, like :meth:`interrupt`.
        """
        if self._closed:
            return False
        return self._live.interrupt(PAUSED)

    @property
    def paused(self) -> bool:
        """Whether a paused step is waiting for the human's words."""
        return self._words.waiting

    async def run(
        self,
        spec: AgentSpec,
        prompt: str,
        *,
        step_name: str | None = None,
        resume: str | None = None,
        fork: bool = False,
        resume_at: str | None = None,
        on_event: EventCallback | None = None,
    ) -> StepResult:
        """Run one step to its end: success, a stop the loop cannot get past, or a limit.

        The loop's four exits: success; a human interrupt (resume the same session with
        the remark, not counted as an attempt); a full context (hand off to a new
        session, not counted; ``max_generations`` stops it with a diagnostic); a failed
        attempt (classify it; a transient one waits for the network, backs off and
        resumes the same session with ``resilience.resume_prompt``).
        """
        if self._closed:
            raise RuntimeError("this Runtime is closed; create a new one")
        step = step_name or spec.name
        task = prompt
        self._live.reset_level()
        result = StepResult(step=step, started_at=time.time(), attempts=0)
        self._current = result
        self.cache.started(step, resume, result.started_at)
        # once a step: every attempt asks the same
        cache_env = self.cache.env(step, spec.env, self.workspace)
        hour = lifetime(spec.env, cache_env)
        marks = marks_ttl(spec.env, cache_env, cwd=self.workspace)
        attempt = 0
        classified: dict[str, str] = {}  # error text -> its class, so no plugin is asked twice
        try:
            while True:
                attempt += 1
                result.attempts = attempt
                self._cache_marks(resume, marks)  # the attempt loads ``resume``
                got = await self._attempt(
                    spec, prompt, step=step, resume=resume, fork=fork, resume_at=resume_at,
                    on_event=on_event, result=result, cache_env=cache_env,
                )  # fmt: skip
                result.cost_usd += got.cost_usd
                result.num_turns += got.num_turns
                result.text, result.ok, result.error = got.text, got.ok, got.error
                result.context = self._live.ctx
                if got.error:
                    result.errors.append(got.error)
                sid = result.session_id
                if sid:  # whatever comes next continues this session, never forks it again
                    resume, fork, resume_at = sid, False, None

                if result.ok:  # 1. success
                    break

                budget = budget_for(self)  # the run's budget is spent: stop at this safe point
                if budget is not None and budget.spent_out():
                    raise budget.reached(step, result, on_event)

                if result.error == self.INTERRUPTED:  # 2. the human interrupted
                    said = got.said or ""
                    if not sid:
                        break
                    if said == PAUSED:  # stopped at once; the words come after
                        payload = {"said": None, "session_id": sid, "paused": True}
                        emit(Event("interrupt", payload, step=step), on_event)
                        said = await self._words.wait()
                    prompt = interrupt_prompt(said, self.INTERRUPT_NOTE, self.CONTINUE_NOTE)
                    attempt -= 1
                    emit(Event("interrupt", {"said": said, "session_id": sid}, step=step), on_event)
                    continue

                overflow = is_overflow(result.error)
                if result.error == self.HANDOFF_DUE or (self.handoff.enabled and sid and overflow):
                    if len(result.retired) >= self.handoff.max_generations:  # 3. context full
                        result.error = (
                            f"the context filled {len(result.retired) + 1} times in step {step!r};"
                            f" stopping instead of handoff number {len(result.retired) + 1}"
                            f" (HandoffPolicy.max_generations={self.handoff.max_generations}):"
                            " split the task into smaller steps, or raise max_generations"
                        )
                        break
                    assert sid is not None
                    doc = await hand_off(
                        self,
                        self._live,
                        spec,
                        step,
                        task,
                        result,
                        on_event,
                        overflow=overflow,
                        cache_env=cache_env,
                    )
                    result.retired.append(sid)
                    generation = len(result.retired)
                    emit(
                        reset(step, sid, generation, path=doc.path, degraded=doc.degraded), on_event
                    )
                    result.session_id = None
                    resume, fork, resume_at = None, False, None
                    prompt = doc.prompt_block()
                    self._live.reset_level()
                    attempt -= 1
                    continue

                error = result.error or "unknown error"  # 4. a failed attempt
                if not self.resilience.enabled or attempt >= self.resilience.max_attempts:
                    break
                verdict = classified[error] = classify(error)
                if not self.resilience.retries(verdict):
                    break
                gave_up = await wait_to_retry(
                    self.resilience, {**os.environ, **spec.env}, step=step, attempt=attempt,
                    error=error, verdict=verdict, resume=bool(sid), on_event=on_event,
                )  # fmt: skip
                if gave_up:
                    result.error = gave_up
                    break
                if sid:  # and what the outage cut off: workers mid-task (runtime/cutoff.py)
                    cut = await cut_off_report(self.store, self.project_key, sid, spec=spec)
                    prompt = self.resilience.resume_prompt + cut
                    result.resumed = True
        except BaseException as exc:
            if not result.error or result.ok or result.error == self.INTERRUPTED:
                result.ok = False
                result.error = stopped_by(exc)
            raise
        finally:
            self.cache.ended(result.session_id, time.time())
            self._cache_lives(result.session_id, hour)
            failed = failure(result)  # the ``error`` event carries its class: asked once
            if failed is not None and failed not in classified:
                try:
                    classified[failed] = classify(failed)
                except Exception as exc:  # a broken classifier must not cost the step its row
                    print(f"flower: could not classify {failed!r}: {exc!r}", file=sys.stderr)
            self._finish(result, on_event, classified)
        return result

    def close(self) -> None:
        """Release the session store. The Runtime cannot run steps afterwards."""
        if self._closed:
            return
        self._closed = True
        closer = getattr(self.store, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- one attempt ----------------------------------------------------------------------

    async def _attempt(
        self,
        spec: AgentSpec,
        prompt: str,
        *,
        step: str,
        resume: str | None,
        fork: bool,
        resume_at: str | None,
        on_event: EventCallback | None,
        result: StepResult | None,
        cache_env: Mapping[str, str],
        watch: bool = True,
    ) -> Attempt:
        """One client session (``runtime/attempt.py``) with this Runtime's live state."""
        return await run_attempt(
            self, self._live, spec, prompt, step=step, resume=resume, fork=fork,
            resume_at=resume_at, on_event=on_event, result=result, cache_env=cache_env,
            watch=watch,
        )  # fmt: skip

    def _cli_env(self, spec: AgentSpec) -> dict[str, str]:
        """What the policies add to the CLI's environment (see ``attempt.cli_env``)."""
        return cli_env(spec, self.resilience, self.handoff)
