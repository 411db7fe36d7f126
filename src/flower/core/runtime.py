"""The Runtime: flower's execution core, with one verb, :meth:`Runtime.run` one step.

Everything that keeps a long step alive happens inside that one call: retrying an
attempt the network broke (waiting for the network first and resuming the same
session), continuing after the human interrupts with a remark, and handing a full
context over to a fresh session through a handoff document. The caller sees one
:class:`StepResult`, and ``run_dir/manifest.json`` gets one row for it.

The Runtime drives the CLI with ``ClaudeSDKClient`` rather than ``query()`` because
only the client can interrupt a turn (for the human, and when the context is full).
The SDK is imported inside the methods that need it, so ``import flower`` stays light.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.core.agent import HandoffPolicy, build_options
from flower.core.credentials import check_credentials
from flower.core.events import Event, EventCallback, emit
from flower.core.handoff import Handoff, degraded, is_overflow, save
from flower.core.manifest import Manifest, manifest_row, new_run_id
from flower.core.resilience import Resilience, classify, endpoint
from flower.core.text import one_line
from flower.core.workbench import Workbench, WorkbenchError
from flower.stores.transcript import context_size

if TYPE_CHECKING:
    from claude_agent_sdk.types import SessionStore

    from flower.core.agent import AgentSpec
    from flower.stores.trim import EphemeralPolicy, TrimPolicy

#: What the attempt's synthetic messages and results look like when the CLI made them up.
_SYNTHETIC_MODEL = "<synthetic>"


@dataclass
class StepResult:
    """Everything flower accounts for one finished step.

    ``attempts`` counts attempts that failed and were retried (plus the last one): a
    human interrupt and a handoff are not failed attempts. ``errors`` keeps every error
    met on the way, ``error`` only the one the step ended with. ``retired`` lists the
    session ids handed off, oldest first; ``session_id`` is the one the step ended in.
    ``context`` is the context size (tokens) the model last reported.
    """

    step: str
    session_id: str | None = None
    ok: bool = False
    cost_usd: float = 0.0
    num_turns: int = 0
    text: str = ""
    error: str | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    attempts: int = 1
    errors: list[str] = field(default_factory=list)
    resumed: bool = False
    retired: list[str] = field(default_factory=list)
    context: int = 0

    @property
    def duration_s(self) -> float:
        """Wall time of the step, handoffs and waits included."""
        return max(0.0, self.ended_at - self.started_at) if self.ended_at else 0.0


@dataclass
class _Attempt:
    """What one client session reported, before the loop decides what it means."""

    session_id: str | None = None
    ok: bool = False
    text: str = ""
    error: str | None = None
    cost_usd: float = 0.0
    num_turns: int = 0


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

    The session store is the one the ``flower_session_store`` hook returns: by default
    the pruning store at ``run_dir/sessions.db`` with the policies above;
    ``FLOWER_STORE_URL`` lets a storage plugin serve another backend.

    ``load_dotenv()`` (the current folder's ``.env``, then the workspace's) and
    ``check_credentials()`` run before anything is written to disk, so missing
    credentials raise ``RuntimeError`` here, not minutes into a run.

    One step at a time: the context level, the interrupt and the handoff state are the
    Runtime's own. Use one Runtime per concurrent step.
    """

    INTERRUPTED = "interrupted-by-human"
    HANDOFF_DUE = "context-full-handoff"
    INTERRUPT_NOTE = (
        "\n\n(上面这句是人在你干活时插进来的话。刚才在跑的工具调用返回了 interrupted,"
        "那是打断带来的正常副作用,不是环境故障;需要的话重新执行即可。先回应这句话,再接着做。)"
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
        self.resilience = _policy(resilience, Resilience)
        self.handoff = _policy(handoff, HandoffPolicy)
        self.results: list[StepResult] = []
        #: Called with a session id the moment it is known (the workflow's lineage
        #: writes it to disk right away, so a killed process can still be resumed).
        self.on_session: Callable[[str], None] | None = None
        self.run_id = new_run_id()
        self._ctx, self._warned = 0, False
        self._stop: Any = None  # anyio.Event of the running attempt
        self._said: str | None = None
        self._due = False
        self._closed = False

        _load_dotenv(self.workspace)
        check_credentials()

        self.run_dir.mkdir(parents=True, exist_ok=True)
        if workbench is True:
            self.workbench: Workbench | None = Workbench(
                self.workspace, home=self.run_dir / "workbench"
            )
        else:
            self.workbench = workbench or None
        if self.workbench is not None:
            self.workbench.ensure()
        self.manifest = Manifest(self.run_dir, self.run_id)
        self.store: SessionStore = self._build_store(trim, ephemeral, keep_denials)

    # --- public -------------------------------------------------------------------------

    @property
    def context(self) -> int:
        """The context size (tokens) the running or last step's model last reported."""
        return self._ctx

    def has_session(self, sid: str | None) -> bool:
        """Whether ``sid`` is still in the session store (so it can be resumed).

        A lineage file can outlive ``sessions.db``, and resuming a session that is gone
        fails only after the CLI has started; check here first.
        """
        if not sid:
            return False
        from claude_agent_sdk import project_key_for_directory

        project = project_key_for_directory(str(self.workspace))
        store = self.store

        async def look() -> bool:
            lister = getattr(store, "list_sessions", None)
            if lister is not None:
                try:
                    return any(s.get("session_id") == sid for s in await lister(project))
                except NotImplementedError:
                    pass
            return bool(await store.load({"project_key": project, "session_id": sid}))

        return _run_sync(look)

    @property
    def interruptible(self) -> bool:
        """Whether a turn is running now, so :meth:`interrupt` would reach it."""
        return self._stop is not None and not self._closed

    def interrupt(self, said: str) -> bool:
        """Stop the running step's turn and continue it with the human's ``said``.

        The step goes on in the same session with ``said`` + ``INTERRUPT_NOTE`` as the
        next prompt; it does not count as a failed attempt. Returns ``False`` when no
        step is running. Call it from the event loop's thread (a signal handler added
        with ``loop.add_signal_handler``, or another task); from another thread, go
        through ``loop.call_soon_threadsafe``.
        """
        if not self.interruptible:
            return False
        self._said = said
        self._stop.set()
        return True

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
        self._ctx, self._warned = 0, False
        result = StepResult(step=step, started_at=time.time(), attempts=0)
        attempt = 0
        try:
            while True:
                attempt += 1
                result.attempts = attempt
                got = await self._attempt(
                    spec, prompt, step=step, resume=resume, fork=fork, resume_at=resume_at,
                    on_event=on_event, result=result,
                )  # fmt: skip
                result.cost_usd += got.cost_usd
                result.num_turns += got.num_turns
                result.text, result.ok, result.error = got.text, got.ok, got.error
                result.context = self._ctx
                if got.error:
                    result.errors.append(got.error)
                sid = result.session_id
                if sid:  # whatever comes next continues this session, never forks it again
                    resume, fork, resume_at = sid, False, None

                if result.ok:  # 1. success
                    break

                if result.error == self.INTERRUPTED:  # 2. the human interrupted
                    said, self._said = self._said or "", None
                    if not sid:
                        break
                    prompt = said + self.INTERRUPT_NOTE
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
                    doc = await self._hand_off(
                        spec, step, task, result, on_event, overflow=overflow
                    )
                    result.retired.append(sid)
                    result.session_id = None
                    resume, fork, resume_at = None, False, None
                    prompt = doc.prompt_block()
                    self._ctx, self._warned = 0, False
                    attempt -= 1
                    continue

                error = result.error or "unknown error"  # 4. a failed attempt
                if not self.resilience.enabled or attempt >= self.resilience.max_attempts:
                    break
                verdict = classify(error)
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
                if sid:
                    prompt = self.resilience.resume_prompt
                    result.resumed = True
        except BaseException as exc:
            if not result.error or result.ok:
                result.ok = False
                result.error = f"stopped: {type(exc).__name__}"
            raise
        finally:
            self._finish(result, on_event)
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
        watch: bool = True,
    ) -> _Attempt:
        """One client session: send ``prompt``, read until the turn's result.

        With ``watch`` (every attempt but the handoff round) it tracks the context
        level, announces ``near``, ends the turn when the context crosses
        ``handoff.at``, reports what the agent does, and honours :meth:`interrupt`.
        Without it nothing is emitted: the handoff round is not shown.
        """
        import anyio
        from claude_agent_sdk import (
            AssistantMessage,
            ClaudeSDKClient,
            ResultMessage,
            SystemMessage,
            TextBlock,
            ToolResultBlock,
            ToolUseBlock,
            UserMessage,
        )

        options = build_options(
            spec,
            cwd=self.workspace,
            session_store=self.store,
            resume=resume,
            fork=fork,
            resume_at=resume_at,
            portable=self.portable,
            workbench=self.workbench,
            spill_threshold=self.spill_threshold,
        )
        options.env = {**options.env, **self._cli_env(spec)}

        def say(kind: str, payload: dict[str, Any]) -> None:
            if watch:
                emit(Event(kind, payload, step=step), on_event)

        got = _Attempt(session_id=result.session_id if result else resume)
        stop = anyio.Event()
        if watch:
            self._stop, self._said, self._due = stop, None, False
        api_error: str | None = None
        last_message: str | None = None

        def seen(sid: str | None) -> None:
            if not sid or sid == got.session_id:
                return
            got.session_id = sid
            if result is not None and watch:
                result.session_id = sid
                say("session", {"session_id": sid, "generation": len(result.retired)})
                if self.on_session is not None:
                    try:
                        self.on_session(sid)
                    except Exception as exc:  # the callback must not end the step
                        print(f"flower: on_session failed: {exc!r}", file=sys.stderr)

        async def interrupt_when_asked(client: Any) -> None:
            await stop.wait()
            with anyio.move_on_after(30):
                try:
                    await client.interrupt()
                except Exception:  # the turn may already be over
                    pass

        try:
            async with ClaudeSDKClient(options) as client, anyio.create_task_group() as tasks:
                tasks.start_soon(interrupt_when_asked, client)
                await client.query(prompt)
                async for message in client.receive_response():
                    if isinstance(message, SystemMessage):
                        if message.subtype == "init":
                            seen(message.data.get("session_id"))
                    elif isinstance(message, AssistantMessage):
                        seen(message.session_id)
                        main = message.parent_tool_use_id is None
                        if message.model == _SYNTHETIC_MODEL:
                            api_error = message.error or api_error
                            continue
                        if main and watch:
                            self._track(message, last_message, step, on_event, stop)
                            last_message = message.message_id or last_message
                        for block in message.content:
                            if isinstance(block, ToolUseBlock):
                                say("tool", {"name": block.name, "input": block.input,
                                             "id": block.id, "subagent": not main})  # fmt: skip
                            elif isinstance(block, TextBlock) and main and block.text.strip():
                                say("text", {"text": block.text})
                    elif isinstance(message, UserMessage) and isinstance(message.content, list):
                        for block in message.content:
                            if isinstance(block, ToolResultBlock) and block.is_error:
                                say("tool_error", {"id": block.tool_use_id,
                                                   "text": _preview(block.content)})  # fmt: skip
                    elif isinstance(message, ResultMessage):
                        seen(message.session_id)
                        got.cost_usd = float(message.total_cost_usd or 0.0)
                        got.num_turns = int(message.num_turns or 0)
                        got.text = message.result or ""
                        got.ok = not message.is_error and message.subtype == "success"
                        if not got.ok:
                            got.error = _error_text(message, api_error)
                tasks.cancel_scope.cancel()
        except Exception as exc:  # the CLI died, could not start, or the stream broke
            leaf = _leaf(exc)
            got.ok = False
            got.error = f"{type(leaf).__name__}: {leaf}".strip()
        finally:
            if watch:
                self._stop = None
        if watch and self._said is not None:
            got.ok, got.error = False, self.INTERRUPTED
        elif watch and self._due and not got.ok:
            got.error = self.HANDOFF_DUE
        if got.ok:
            got.error = None
        return got

    def _cli_env(self, spec: AgentSpec) -> dict[str, str]:
        """Variables the Runtime's policies add for the CLI; the spec's own ``env`` wins.

        ``CLAUDE_CODE_MAX_RETRIES`` from ``resilience.cli_retries``; and, while flower
        hands off full contexts, ``DISABLE_AUTO_COMPACT=1`` unless the spec says how to
        compact (``spec.compact``). Otherwise the CLI would compact first, even reactively
        when the API answers "prompt is too long", and the readable handoff would never
        happen. A spec that wants the CLI's compaction as well sets ``compact``.
        """
        extra: dict[str, str] = {}
        if self.resilience.cli_retries is not None:
            extra["CLAUDE_CODE_MAX_RETRIES"] = str(self.resilience.cli_retries)
        compaction = {"DISABLE_AUTO_COMPACT", "DISABLE_COMPACT"}
        if self.handoff.enabled and spec.compact is None and not compaction & spec.env.keys():
            extra["DISABLE_AUTO_COMPACT"] = "1"
        return {k: v for k, v in extra.items() if k not in spec.env}

    def _track(
        self,
        message: Any,
        previous_id: str | None,
        step: str,
        on_event: EventCallback | None,
        stop: Any,
    ) -> None:
        """Follow the context level from the usage the model reports for the main thread.

        One API message arrives as one AssistantMessage per content block, all with the
        same ``message_id`` and usage; the level is input + cache read + cache creation
        of the latest message.
        """
        level = context_size(message.usage or {})
        if level <= 0 or (message.message_id and message.message_id == previous_id):
            return
        self._ctx = level
        policy = self.handoff
        emit(
            Event("context", {"used": level, "window": policy.window, "at": policy.at}, step=step),
            on_event,
        )
        if not policy.enabled:
            return
        if level >= policy.warn_at and not self._warned:
            self._warned = True
            payload = {"phase": "near", "used": level, "at": policy.at, "window": policy.window}
            emit(Event("handoff", payload, step=step), on_event)
        if level >= policy.at and not self._due:
            self._due = True
            stop.set()

    # --- handoff ------------------------------------------------------------------------

    async def _hand_off(
        self,
        spec: AgentSpec,
        step: str,
        task: str,
        result: StepResult,
        on_event: EventCallback | None,
        *,
        overflow: bool,
    ) -> Handoff:
        """Have the full session's handoff written (through the plugins), save it."""
        from flower.plugin_types import HandoffRequest
        from flower.plugins import get_plugin_manager

        sid = result.session_id
        assert sid is not None
        used, window = self._ctx, self.handoff.window
        generation = len(result.retired)
        emit(
            Event(
                "handoff",
                {"phase": "writing", "session_id": sid, "used": used, "window": window,
                 "generation": generation, "overflow": overflow},
                step=step,
            ),
            on_event,
        )  # fmt: skip
        lifted = replace(spec, max_budget_usd=None)

        async def ask(text: str) -> StepResult:
            round_ = StepResult(step=step, session_id=sid, started_at=time.time())
            got = await self._attempt(
                lifted, text, step=step, resume=sid, fork=False, resume_at=None,
                on_event=None, result=None, watch=False,
            )  # fmt: skip
            round_.ok, round_.text, round_.error = got.ok, got.text, got.error
            round_.cost_usd, round_.num_turns = got.cost_usd, got.num_turns
            round_.ended_at = time.time()
            result.cost_usd += got.cost_usd
            return round_

        request = HandoffRequest(
            runtime=self,
            spec=spec,
            step=step,
            session_id=sid,
            prompt=task,
            used=used,
            window=window,
            overflow=overflow,
            generation=generation,
            ask=ask,
        )
        try:
            pending = get_plugin_manager().hook.flower_handoff_writer(request=request)
            doc = (
                await pending
                if pending is not None
                else degraded(step, task, why="no handoff writer")
            )
        except Exception as exc:  # a broken writer must not lose the step
            doc = degraded(step, task, why=f"{type(exc).__name__}: {exc}")
        doc.step = step
        path: Path | None = None
        if self.workbench is not None:
            try:
                path = save(doc, self.workbench)
            except (OSError, WorkbenchError) as exc:  # e.g. notes/ made a link out of it
                print(f"flower: could not save the handoff of {step!r}: {exc}", file=sys.stderr)
        payload = {
            "phase": "done",
            "degraded": doc.degraded,
            "path": str(path) if path else None,
            "sections": [name for name, text in doc.sections().items() if text.strip()],
            "session_id": sid,
            "generation": generation + 1,
        }
        emit(Event("handoff", payload, step=step), on_event)
        return doc

    # --- bookkeeping --------------------------------------------------------------------

    def _finish(self, result: StepResult, on_event: EventCallback | None) -> None:
        result.ended_at = time.time()
        result.context = self._ctx
        self.results.append(result)
        try:
            self.manifest.write(manifest_row(r, self.run_id) for r in self.results)
        except OSError as exc:  # the step's outcome matters more than its bookkeeping
            print(f"flower: could not write {self.manifest.path}: {exc}", file=sys.stderr)
        emit(
            Event(
                "result",
                {"ok": result.ok, "session_id": result.session_id, "cost_usd": result.cost_usd,
                 "num_turns": result.num_turns, "error": result.error, "context": result.context,
                 "attempts": result.attempts, "duration_s": result.duration_s},
                step=result.step,
            ),
            on_event,
        )  # fmt: skip

    def _build_store(
        self, trim: TrimPolicy | bool, ephemeral: EphemeralPolicy | bool, keep_denials: int
    ) -> SessionStore:
        from flower.plugin_types import StoreSettings
        from flower.plugins import get_plugin_manager
        from flower.stores.prune import PrunePolicy
        from flower.stores.trim import EphemeralPolicy, TrimPolicy

        url = os.environ.get("FLOWER_STORE_URL") or None
        settings = StoreSettings(
            run_dir=self.run_dir,
            workspace=self.workspace,
            trim=trim if isinstance(trim, TrimPolicy) else TrimPolicy(enabled=bool(trim)),
            ephemeral=(
                ephemeral
                if isinstance(ephemeral, EphemeralPolicy)
                else EphemeralPolicy(enabled=bool(ephemeral))
            ),
            prune=PrunePolicy(keep_denials=keep_denials),
            url=url,
        )
        store = get_plugin_manager().hook.flower_session_store(settings=settings)
        if store is None:
            where = f"FLOWER_STORE_URL={url}" if url else f"{self.run_dir}/sessions.db"
            raise RuntimeError(
                f"no installed plugin builds a session store for {where}: install the plugin"
                " that serves it, or unset FLOWER_STORE_URL"
            )
        return store


def _policy(value: Any, kind: type) -> Any:
    """``True`` -> the defaults, ``False`` -> the defaults switched off, else as given."""
    if value is True:
        return kind()
    if value is False or value is None:
        return kind(enabled=False)
    if not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__} or a bool, not {type(value).__name__}")
    return value


def _load_dotenv(workspace: Path) -> None:
    """``.env`` of the current folder (or the nearest above it), then the workspace's.

    Variables already set win: a ``.env`` fills gaps, it never overrides the shell.
    """
    from dotenv import find_dotenv, load_dotenv

    here = find_dotenv(usecwd=True)
    if here:
        load_dotenv(here, override=False)
    there = workspace / ".env"
    if there.is_file() and (not here or Path(here).resolve() != there.resolve()):
        load_dotenv(there, override=False)


def _error_text(message: Any, api_error: str | None) -> str:
    """One line that says why a turn failed, with what the classifier needs.

    The CLI's prose ("API Error: 529 Overloaded…"), then the HTTP status and the SDK's
    error category, then the result subtype when it is not ``success``.
    """
    errors = [e for e in (message.errors or []) if isinstance(e, str) and e.strip()]
    prose = "; ".join(errors) or (message.result or "").strip()
    tags = []
    if message.api_error_status:
        tags.append(f"HTTP {message.api_error_status}")
    if api_error:
        tags.append(api_error)
    if message.subtype and message.subtype != "success":
        tags.append(message.subtype)
    if message.terminal_reason and message.terminal_reason not in ("completed",):
        tags.append(message.terminal_reason)
    text = prose or "the turn failed"
    return f"{text} ({', '.join(tags)})" if tags else text


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups, which task groups add."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _preview(content: Any, limit: int = 300) -> str:
    if isinstance(content, list):
        content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return one_line(str(content or ""), limit)


def _run_sync(make: Callable[[], Any]) -> Any:
    """Run the coroutine ``make()`` to completion from sync code, inside a loop or not."""
    import asyncio
    import concurrent.futures

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
