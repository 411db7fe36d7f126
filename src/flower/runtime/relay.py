"""The relay: a full session writes its handoff, and a fresh session takes over.

The document itself (its sections, the degraded fallback, where it is saved) is
``records/handoff.py``; who writes it is the ``flower_handoff_writer`` hook. This module is
the Runtime's side: announce the round, give the writer a way to ask the full session
one more question (with the budget lifted: a handoff must get written), and save what
comes back, after the handoff audit (``runtime/audit.py``) has appended what the document
left out of what is still open. A broken writer or an unwritable notes folder never
loses the step: the document then travels in the successor's prompt only.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from flower.kernel.events import Event, EventCallback
from flower.kernel.files import WorkbenchError
from flower.kernel.result import StepResult
from flower.plugins import emit
from flower.records.handoff import Handoff, degraded, save
from flower.runtime.attempt import run_attempt
from flower.runtime.audit import audit_handoff
from flower.runtime.parts import Live, RuntimeParts

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec


async def hand_off(
    rt: RuntimeParts,
    live: Live,
    spec: AgentSpec,
    step: str,
    task: str,
    result: StepResult,
    on_event: EventCallback | None,
    *,
    overflow: bool,
    cache_env: Mapping[str, str],
) -> Handoff:
    """Have the full session's handoff written (through the plugins), save it.

    ``cache_env``: the step's cache rhythm, as the Runtime decided it (``run_attempt``)."""
    from flower.plugin_types import AuditRequest, HandoffRequest
    from flower.plugins import get_plugin_manager

    sid = result.session_id
    assert sid is not None
    used, window = live.ctx, live.window or rt.handoff.window
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
        got = await run_attempt(
            rt, live, lifted, text, step=step, resume=sid, fork=False, resume_at=None,
            on_event=None, result=None, cache_env=cache_env, watch=False,
        )  # fmt: skip
        round_.ok, round_.text, round_.error = got.ok, got.text, got.error
        round_.cost_usd, round_.num_turns = got.cost_usd, got.num_turns
        round_.ended_at = time.time()
        result.cost_usd += got.cost_usd
        return round_

    request = HandoffRequest(
        runtime=rt,
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
            await pending if pending is not None else degraded(step, task, why="no handoff writer")
        )
    except Exception as exc:  # a broken writer must not lose the step
        doc = degraded(step, task, why=f"{type(exc).__name__}: {exc}")
    doc.step = step
    missing = audit_handoff(
        AuditRequest(
            runtime=rt, step=step, doc=doc, ctx=getattr(rt, "ctx", None),
            workspace=rt.workspace, run_dir=rt.run_dir,
        )
    )  # fmt: skip
    result.audited += len(missing)
    path: Path | None = None
    if rt.workbench is not None:
        try:
            path = save(doc, rt.workbench)
        except (OSError, WorkbenchError) as exc:  # e.g. notes/ made a link out of it
            print(f"flower: could not save the handoff of {step!r}: {exc}", file=sys.stderr)
    payload = {
        "phase": "done",
        "degraded": doc.degraded,
        "path": str(path) if path else None,
        "sections": [name for name, text in doc.sections().items() if text.strip()],
        "session_id": sid,
        "generation": generation + 1,
        "audited": len(missing),
        "open_items": dict(Counter(item.kind for item in missing)),
    }
    emit(Event("handoff", payload, step=step), on_event)
    return doc
