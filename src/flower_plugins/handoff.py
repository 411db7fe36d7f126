"""The default handoff writer: the full session writes its own handoff.

Only the session whose context is full knows what it was doing, so the default asks it,
with ``HANDOFF_PROMPT``, in one more round (the Runtime lifts the budget for it and
shows nothing of it in the UI). What comes back is parsed with ``Handoff.parse``. When
the round cannot run (the API already refused the prompt as too long) or fails, or the
answer lacks a required section, flower falls back to ``degraded()`` and keeps whatever
sections the model did write.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    from flower.core.handoff import Handoff
    from flower.plugin_types import HandoffRequest


@hookimpl(trylast=True)
def flower_handoff_writer(request: HandoffRequest) -> Awaitable[Handoff]:
    return write_handoff(request)


async def write_handoff(request: HandoffRequest) -> Handoff:
    from dataclasses import replace

    from flower.core.handoff import HANDOFF_PROMPT, SECTIONS, Handoff, degraded

    if request.overflow or request.ask is None:
        why = "接口已拒收(提示过长)" if request.overflow else "没有可用的会话来写交接"
        return degraded(request.step, request.prompt, why=why)
    try:
        answer = await request.ask(HANDOFF_PROMPT.format(used=request.used, window=request.window))
    except Exception as exc:  # any failure of the round means a mechanical handoff
        return degraded(request.step, request.prompt, why=f"{type(exc).__name__}: {exc}")
    if not getattr(answer, "ok", False):
        return degraded(
            request.step, request.prompt, why=str(getattr(answer, "error", "") or "写交接失败")
        )
    doc = Handoff.parse(str(getattr(answer, "text", "") or ""), step=request.step)
    if doc.complete():
        return doc
    fallback = degraded(
        request.step,
        request.prompt,
        why="交接缺少:" + "、".join(SECTIONS[m] for m in doc.missing()),
    )
    written = {name: getattr(doc, name) for name in SECTIONS if getattr(doc, name).strip()}
    return replace(fallback, **written)
