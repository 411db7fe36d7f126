"""The Runtime: flower's execution core, with one verb, :meth:`Runtime.run` one step.

Everything that keeps a long step alive happens inside that one call: retrying an
attempt the network broke (waiting for the network first and resuming the same
session), continuing after the human interrupts with a remark, and handing a full
context over to a fresh session through a handoff document. The caller sees one
:class:`StepResult`, and ``run_dir/manifest.json`` gets one row for it.

The loop lives here; one attempt (one ``ClaudeSDKClient`` session, read to the end of
its turn) is ``core/attempt.py``, the handoff round ``core/relay.py``, the signal
handlers ``core/signals.py``. The Runtime drives the CLI with ``ClaudeSDKClient``
rather than ``query()`` because only the client can interrupt a turn (for the human,
and when the context is full). The SDK is imported inside the methods that need it, so
``import flower`` stays light.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.core.agent import HandoffPolicy
from flower.core.assembly import build_store, policy, read_dotenv, run_sync
from flower.core.attempt import PAUSED, Attempt, Live, Words, cli_env, error_text, run_attempt
from flower.core.budget import budget_for
from flower.core.cache_rhythm import CacheRhythm, lifetime
from flower.core.credentials import check_credentials
from flower.core.events import Event, EventCallback, emit
from flower.core.handoff import is_overflow
from flower.core.manifest import Manifest, manifest_row, mirror_step, new_run_id
from flower.core.relay import hand_off
from flower.core.resilience import Resilience, classify, endpoint
from flower.core.result import KILLED, StepResult, stopped_by
from flower.core.sandbox import Sandbox
from flower.core.signals import DEFAULT_SIGNALS
from flower.core.signals import rescue_on_signals as _rescue_on_signals
from flower.core.step_events import ended, reset
from flower.core.workbench import Workbench, keep_out_of_git

if TYPE_CHECKING:
    from claude_agent_sdk.types import SessionStore

    from flower.core.agent import AgentSpec
    from flower.core.budget import Budget
    from flower.stores.trim import EphemeralPolicy, TrimPolicy

__all__ = ["KILLED", "Runtime", "StepResult"]

#: Kept importable from here for callers written before the split.
_error_text = error_text


class Runtime:
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
        sandbox: Where Bash runs (:mod:`flower.core.sandbox`): a ``Sandbox``, ``False``
            for no sandbox, ``True`` or ``None`` (the default) for the CLI's sandbox unless
            ``FLOWER_SANDBOX=0``. Every session with Bash in some thread runs its commands
            in it: writes in the workspace only, flower's state (:meth:`protect`) out of
            reach, homes hidden, no network but ``allow_net``. Read after the ``.env``
            files, so ``FLOWER_SANDBOX`` and ``FLOWER_ALLOW_NET`` may be set there.
        cache: When a step's sessions ask for the API's 1-hour prompt cache
            (:mod:`flower.core.cache_rhythm`): a ``CacheRhythm``, ``True`` for the
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
    INTERRUPT_NOTE = (
        "\n\n(上面这句是人在你干活时插进来的话。刚才在跑的工具调用返回了 interrupted,"
        "那是打断带来的正常副作用,不是环境故障;需要的话重新执行即可。先回应这句话,再接着做。)"
    )
    #: The prompt after a pause the human ended without a word (Enter).
    CONTINUE_NOTE = (
        "(人刚才按了一下暂停,没有要补充的话。刚才在跑的工具调用返回了 interrupted,"
        "那是暂停带来的正常副作用,不是环境故障;它们可能没做完,需要的话核实后重新执行。接着做。)"
    )

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
        #: The run's budget (``core/budget.py``): what every session of the run may still
        #: spend. ``None``: found at the first session (the workflow's cap, or the one the
        #: run kept); set a :class:`~flower.core.budget.Budget` to give one.
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

    @property
    def project_key(self) -> str:
        """The session store's key for this workspace (the SDK derives it from the path:
        the same folder under another path finds none of its sessions)."""
        from claude_agent_sdk import project_key_for_directory

        return project_key_for_directory(str(self.workspace))

    def adopt_sessions(self, old_workspace: str | Path, session_ids: list[str]) -> int:
        """Copy ``session_ids`` from where ``old_workspace`` kept them to this workspace's
        project key (the folder moved, or this is a copy of it); how many were copied.

        0 when the store cannot copy (a third-party store without ``copy_sessions``): the
        steps then start fresh, which the lineage's notice says.
        """
        from claude_agent_sdk import project_key_for_directory

        copier = getattr(self.store, "copy_sessions", None)
        if copier is None or not session_ids:
            return 0
        old = project_key_for_directory(str(old_workspace))

        async def copy() -> int:
            return int(await copier(old, self.project_key, list(session_ids)))

        return int(run_sync(copy))

    def has_session(self, sid: str | None) -> bool:
        """Whether ``sid`` is still in the session store (so it can be resumed).

        A lineage file can outlive ``sessions.db``, and resuming a session that is gone
        fails only after the CLI has started; check here first.
        """
        if not sid:
            return False
        project = self.project_key
        store = self.store

        async def look() -> bool:
            lister = getattr(store, "list_sessions", None)
            if lister is not None:
                try:
                    return any(s.get("session_id") == sid for s in await lister(project))
                except NotImplementedError:
                    pass
            return bool(await store.load({"project_key": project, "session_id": sid}))

        return bool(run_sync(look))

    def context_of(self, session_id: str | None) -> int:
        """The context size (tokens) of ``session_id``'s latest model reply, from the
        store; 0 when unknown (no such session, or a store that does not keep it).

        What the wake-up line shows ("干活上下文 80.2K"): the number that tells a human
        a session is nearing its window, read without loading the transcript.
        """
        reader = getattr(self.store, "context_tokens", None)
        if not session_id or reader is None:
            return 0
        key = {"project_key": self.project_key, "session_id": session_id}

        async def read() -> Any:
            return await reader(key)

        tokens = run_sync(read)
        return int(tokens) if isinstance(tokens, int) and tokens > 0 else 0

    def protect(self, *paths: str | Path) -> None:
        """Keep every agent's hands off ``paths`` from the next session on: no Bash
        command writes them (the sandbox), no Write or Edit reaches them (the state
        wall). The workflow protects what it freezes (the brief, the goal, the ledger);
        the run folder, the spill and archive folders and the run id always are."""
        self.protected.update(Path(p).expanduser().absolute() for p in paths)

    def total_cost(self) -> float:
        """What this Runtime's finished steps cost, in USD (handoff rounds included)."""
        return sum(r.cost_usd for r in self.results)

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
        :mod:`flower.core.signals`.
        """
        return _rescue_on_signals(self.rescue, signals=signals, grace=grace)

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
        cache_env = self.cache.env(step, spec.env)  # once a step: every attempt asks the same
        hour = lifetime(spec.env, cache_env)
        attempt = 0
        classified: dict[str, str] = {}  # error text -> its class, so no plugin is asked twice
        try:
            while True:
                attempt += 1
                result.attempts = attempt
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
                    from flower.core.resume_texts import interrupt_prompt

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
                        self, self._live, spec, step, task, result, on_event, overflow=overflow,
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
                delay = self.resilience.delay_for(attempt)
                env = {**os.environ, **spec.env}
                host, port = endpoint(env)
                emit(
                    Event(
                        "retry",
                        {
                            "attempt": attempt,
                            "max_attempts": self.resilience.max_attempts,
                            "error": error,
                            "class": verdict,
                            "delay": delay,
                            "resume": bool(sid),
                        },
                        step=step,
                    ),
                    on_event,
                )

                def offline(
                    waited: float, next_in: float, host: str = host, port: int = port
                ) -> None:
                    payload = {
                        "host": host,
                        "port": port,
                        "waited": waited,
                        "next_probe_in": next_in,
                        "max_wait": self.resilience.max_offline_wait,
                    }
                    emit(Event("offline", payload, step=step), on_event)

                if not await self.resilience.wait_online(env, on_offline=offline):
                    result.error = (
                        f"{host}:{port} stayed unreachable for"
                        f" {self.resilience.max_offline_wait:.0f}s; gave up after: {error}"
                    )
                    break
                import anyio

                await anyio.sleep(delay)
                if sid:  # and what the outage cut off: workers mid-task (core/cutoff.py)
                    from flower.core.cutoff import cut_off_report

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
            self._finish(result, on_event, classified)
        return result

    def _cache_lives(self, session_id: str | None, seconds: float | None) -> None:
        """Tell the store how long the prompt cache ``session_id`` just wrote lives:
        the hour it asked for, else the default (``stores/trim.py``: the next load
        within that time keeps old context as it was, the cache being warm)."""
        lives = getattr(self.store, "cache_lifetimes", None)
        if not session_id or not isinstance(lives, dict):
            return
        if seconds:
            lives[session_id] = seconds
        else:
            lives.pop(session_id, None)

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
        """One client session (``core/attempt.py``) with this Runtime's live state."""
        return await run_attempt(
            self, self._live, spec, prompt, step=step, resume=resume, fork=fork,
            resume_at=resume_at, on_event=on_event, result=result, cache_env=cache_env,
            watch=watch,
        )  # fmt: skip

    def _cli_env(self, spec: AgentSpec) -> dict[str, str]:
        """What the policies add to the CLI's environment (see ``attempt.cli_env``)."""
        return cli_env(spec, self.resilience, self.handoff)

    # --- bookkeeping --------------------------------------------------------------------

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
