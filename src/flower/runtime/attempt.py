"""One attempt of a step: one ``ClaudeSDKClient`` session, read until its turn ends.

The Runtime's loop (``runtime/runner.py``) decides what an attempt's outcome means
(success, retry, handoff, the human's remark); this module only runs the session and
reports: the session id the moment it is known, the context level of every main-thread
reply, what the agent does, and why a turn failed. :class:`Live`, the state of the turn
running now (what another thread touches when the human interrupts), and :class:`Words`
live in ``runtime/parts.py``, below everything that shares them; they stay importable
from here. The attempt reads the Runtime as :class:`~flower.runtime.parts.RuntimeParts`.

The SDK is imported inside the functions that need it, so ``import flower`` stays light.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.events import Event, EventCallback, normalize
from flower.plugin_types import SessionRequest
from flower.plugins import emit
from flower.roles.agent import build_options
from flower.roles.guard import confine_guard, merge_hooks, wants_isolation
from flower.roles.sandbox import SandboxUnavailable, protected_paths, session_sandbox
from flower.runtime import windows
from flower.runtime.budget import budget_for
from flower.runtime.lifeline import watch_new_clis
from flower.runtime.parts import PAUSED, Live, RuntimeParts, Words
from flower.runtime.refusals import Refusals
from flower.runtime.scope import SessionScopes
from flower.runtime.stream_reading import (
    answered_within_budget,
    error_text,
    leaf,
    reply_text,
    reported_window,
    track,
    track_level,
)

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec, HandoffPolicy
    from flower.kernel.result import StepResult
    from flower.runtime.resilience import Resilience

__all__ = [
    "PAUSED",
    "SYNTHETIC_MODEL",
    "Attempt",
    "Live",
    "Words",
    "cli_env",
    "error_text",
    "extra_dirs",
    "isolated_roles",
    "run_attempt",
]

#: What the attempt's synthetic messages and results look like when the CLI made them up.
SYNTHETIC_MODEL = "<synthetic>"


@dataclass
class Attempt:
    """What one client session reported, before the loop decides what it means."""

    session_id: str | None = None
    ok: bool = False
    text: str = ""
    error: str | None = None
    cost_usd: float = 0.0
    num_turns: int = 0
    #: The human's remark when an interrupt ended this turn.
    said: str | None = None
    #: The model the CLI reported (its init message, then its replies), when it said.
    model: str | None = None
    #: The session's token usage as its result message totals it (``input_tokens``,
    #: ``output_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``).
    usage: dict[str, Any] | None = None


def cli_env(spec: AgentSpec, resilience: Resilience, handoff: HandoffPolicy) -> dict[str, str]:
    """Variables the Runtime's policies add for the CLI; the spec's own ``env`` wins.

    ``CLAUDE_CODE_MAX_RETRIES`` from ``resilience.cli_retries``; and, while flower
    hands off full contexts, ``DISABLE_AUTO_COMPACT=1`` unless the spec says how to
    compact (``spec.compact``). Otherwise the CLI would compact first, even reactively
    when the API answers "prompt is too long", and the readable handoff would never
    happen. A spec that wants the CLI's compaction as well sets ``compact``.
    """
    extra: dict[str, str] = {}
    if resilience.cli_retries is not None:
        extra["CLAUDE_CODE_MAX_RETRIES"] = str(resilience.cli_retries)
    compaction = {"DISABLE_AUTO_COMPACT", "DISABLE_COMPACT"}
    if handoff.enabled and spec.compact is None and not compaction & spec.env.keys():
        extra["DISABLE_AUTO_COMPACT"] = "1"
    return {k: v for k, v in extra.items() if k not in spec.env}


def isolated_roles(spec: AgentSpec) -> frozenset[str]:
    """The names of ``spec``'s workers that run in worktrees of their own."""
    return frozenset(n for n, a in (spec.agents or {}).items() if wants_isolation(a))


def extra_dirs(rt: RuntimeParts, spec: AgentSpec) -> list[str] | None:
    """The workbench root when it lies outside the workspace and this agent uses it.

    Measured with the bundled CLI: a worker subagent of a coordinator running in
    ``acceptEdits`` (the coordinator itself without Write) is refused a Write into
    ``<run_dir>/workbench`` ("…you haven't granted it yet") unless the folder is one of
    the session's ``add_dirs``; inside the workspace it needs nothing.
    """
    wb = rt.workbench
    if wb is None or not spec.workbench or not wb.external:
        return None
    return [str(wb.root)]


async def run_attempt(
    rt: RuntimeParts,
    live: Live,
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
    """One client session: send ``prompt``, read until the turn's result.

    ``cache_env`` is what the step's cache rhythm adds to the CLI's environment (the
    1-hour prompt cache when waits are long): the Runtime decides it once per step, at its
    start (``CacheRhythm.env``), for every attempt and the handoff round alike.

    With ``watch`` (every attempt but the handoff round) it learns the window of the
    session's model from the CLI (when the policy's window is a guess), tracks the
    context level, announces ``near``, ends the turn when the context crosses the
    handoff point, reports what the agent does, and honours an interrupt.
    Without it nothing is emitted: the handoff round is not shown.
    """
    import anyio
    from claude_agent_sdk import (
        AssistantMessage,
        ClaudeSDKClient,
        ResultMessage,
        SystemMessage,
    )

    protected = protected_paths(rt.run_dir, rt.workbench, rt.protected)
    options = build_options(
        spec,
        cwd=rt.workspace,
        protected=protected,
        session_store=rt.store,
        resume=resume,
        fork=fork,
        resume_at=resume_at,
        portable=rt.portable,
        add_dirs=extra_dirs(rt, spec),
        workbench=rt.workbench,
        spill_threshold=rt.spill_threshold,
    )
    options.env = {
        **options.env,
        **cli_env(spec, rt.resilience, rt.handoff),
        **cache_env,  # the 1-hour prompt cache when waits are long
    }
    isolated = isolated_roles(spec)
    try:  # where its Bash runs (roles/sandbox.py): refused here, before it is paid for
        options.sandbox = session_sandbox(  # type: ignore[assignment]
            rt.sandbox,
            options.tools or (),  # type: ignore[arg-type]
            workspace=rt.workspace,
            protected=protected,
            writable=[Path(d) for d in options.add_dirs],
            environ={**os.environ, **options.env},
            isolated=bool(isolated) and isolated == frozenset(spec.agents or ()),
            read_only=spec.read_only,
        )
    except SandboxUnavailable as exc:
        return Attempt(session_id=result.session_id if result else resume, error=str(exc))
    budget = budget_for(rt)  # the run's budget (runtime/budget.py): none left, no session;
    if budget is not None:  # else the CLI itself stops this one at what is left
        refused = budget.refusal()
        if refused:
            return Attempt(session_id=result.session_id if result else resume, error=refused)
        options.max_budget_usd = budget.session_cap(options.max_budget_usd)

    def say(kind: str, payload: dict[str, Any]) -> None:
        if watch:
            emit(Event(kind, payload, step=step), on_event)

    refusals = Refusals(rt, step)
    if isolated and options.sandbox is not None:  # what the sandbox cannot mount read-only
        wb = rt.workbench
        quarantine = (wb.root if wb is not None and wb.external else rt.run_dir) / "quarantine"

        def moved(text: str) -> None:
            emit(refusals.undone("Bash", text, got.session_id), on_event)

        confine = confine_guard(rt.workspace, isolated, quarantine, on_moved=moved)
        options.hooks = merge_hooks(options.hooks, confine)  # type: ignore[arg-type]
    #: Each thread's context as its latest reply reported it (None: the main thread; a
    #: subagent by the id of the Agent call it runs under), for the events of messages
    #: that carry no usage of their own (tool results, system notices).
    levels: dict[str | None, int] = {}

    def show(message: Any) -> None:
        if watch:
            thread = getattr(message, "parent_tool_use_id", None)
            known = levels.get(thread) or (live.ctx if thread is None else 0) or None
            for event in normalize(message, step=step, context=known):
                if event.payload.get("context"):
                    levels[thread] = event.payload["context"]
                emit(event, on_event)
                refused = refusals.see(event, got.session_id)
                if refused is not None:
                    emit(refused, on_event)

    got = Attempt(session_id=result.session_id if result else resume)
    stop = anyio.Event()
    if watch:
        live.open(stop)
    api_error: str | None = None
    last_message: str | None = None
    final_text, final_id = "", None

    def seen(sid: str | None) -> None:
        if not sid or sid == got.session_id:
            return
        got.session_id = sid
        if result is not None and watch:
            result.session_id = sid
            say("session", {"session_id": sid, "generation": len(result.retired)})
            if rt.on_session is not None:
                try:
                    rt.on_session(sid)
                except Exception as exc:  # the callback must not end the step
                    print(f"flower: on_session failed: {exc!r}", file=sys.stderr)

    async def interrupt_when_asked(client: Any) -> None:
        await stop.wait()
        with anyio.move_on_after(30):
            try:
                await client.interrupt()
            except Exception:  # the turn may already be over
                pass

    said: str | None = None
    if watch:  # the handoff round (unwatched) leaves the full session's figure alone
        live.window = rt.handoff.window_for(None)
    window_key = windows.key_for(spec.model, {**os.environ, **options.env})

    async def learn_window(client: Any) -> None:
        """The window of a model flower has not learned yet, asked once; the level seen
        meanwhile is judged against it (a handoff the conservative plan would have made
        too early waits for this answer)."""
        try:
            window = await reported_window(client)
            if window:
                windows.learn(window_key, window)
                live.window = rt.handoff.window_for(window)
        finally:
            live.asking = False
        if live.ctx:
            track_level(live, rt.handoff, live.ctx, step, on_event, stop)

    session = SessionRequest(
        runtime=rt, spec=spec, step=step, resume=resume, fork=fork, watch=watch,
        attempt=result.attempts if result is not None else 1,
        generation=len(result.retired) if result is not None else 0,
        env=options.env, outcome=got,
    )  # fmt: skip
    try:
        # Plugins' scopes around the session (a tracer's span is the active one while
        # the SDK starts the CLI, which it passes on as TRACEPARENT).
        with SessionScopes(session):
            async with ClaudeSDKClient(options) as client, anyio.create_task_group() as tasks:
                watch_new_clis()  # the CLI ends with this flower, even by SIGKILL
                learned = windows.known(window_key) if watch and rt.handoff.guessed else None
                if learned:  # the model's window, known: nothing waits for it
                    live.window = rt.handoff.window_for(learned)
                tasks.start_soon(interrupt_when_asked, client)
                say("prompt", {"text": prompt, "resume": resume, "fork": fork})
                await client.query(prompt)
                ask_window = watch and rt.handoff.guessed and not learned
                live.asking = ask_window  # until it answers, no handoff on the guess
                async for message in client.receive_response():
                    if isinstance(message, SystemMessage):
                        if message.subtype == "init":
                            seen(message.data.get("session_id"))
                            got.model = message.data.get("model") or got.model
                        show(message)
                    elif isinstance(message, AssistantMessage):
                        seen(message.session_id)
                        main = message.parent_tool_use_id is None
                        if main and message.model != SYNTHETIC_MODEL:
                            got.model = message.model or got.model
                        if message.model == SYNTHETIC_MODEL:
                            api_error = message.error or api_error
                            continue
                        if main:  # the turn's last words, if it ends on them
                            same = message.message_id is not None and message.message_id == final_id
                            final_text = reply_text(message, final_text if same else "")
                            final_id = message.message_id
                        if main and watch:
                            track(live, rt.handoff, message, last_message, step, on_event, stop)
                            last_message = message.message_id or last_message
                        if ask_window:  # once per model, after the first reply: off its path
                            ask_window = False
                            tasks.start_soon(learn_window, client)
                        show(message)
                    elif isinstance(message, ResultMessage):
                        seen(message.session_id)
                        windows.learn_from_result(window_key, got.model, message.model_usage)
                        got.cost_usd = float(message.total_cost_usd or 0.0)
                        got.num_turns = int(message.num_turns or 0)
                        got.usage = dict(message.usage or {})
                        got.text = message.result or ""
                        got.ok = not message.is_error and message.subtype == "success"
                        if answered_within_budget(message, final_text):
                            got.text, got.ok = final_text, True  # the answer is whole: keep it
                        if not got.ok:
                            got.error = error_text(message, api_error)
                    else:  # tool results, and whatever else the SDK streams
                        show(message)
                tasks.cancel_scope.cancel()
    except Exception as exc:  # the CLI died, could not start, or the stream broke
        inner = leaf(exc)
        if not (got.ok and got.text == final_text and final_text):  # not the budget's exit
            got.ok = False
            got.error = f"{type(inner).__name__}: {inner}".strip()
    finally:
        if watch:
            said = live.close()
        if budget is not None:  # what this session cost counts against the run's budget
            budget.charge(got.cost_usd, step=step, session_id=got.session_id, on_event=on_event)
    if watch and said is not None:
        got.said = said
        got.ok, got.error = False, rt.INTERRUPTED
    elif watch and live.due and not got.ok:
        got.error = rt.HANDOFF_DUE
    if got.ok:
        got.error = None
    return got
