"""The default handoff writer: the full session writes its own handoff.

Only the session whose context is full knows what it was doing, so the default asks it,
with ``HANDOFF_PROMPT`` (``HANDOFF_PROMPT_EN`` in English), in one more round (the
Runtime lifts the budget for it and shows nothing of it in the UI). What comes back is
parsed with ``Handoff.parse``. When the round cannot run (the API already refused the
prompt as too long) or fails, or the answer lacks a required section, flower falls back
to ``degraded()`` and keeps whatever sections the model did write.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    from flower.plugin_types import HandoffRequest
    from flower.records.handoff import Handoff


@hookimpl(trylast=True)
def flower_handoff_writer(request: HandoffRequest) -> Awaitable[Handoff]:
    return write_handoff(request)


async def write_handoff(request: HandoffRequest) -> Handoff:
    from dataclasses import replace

    from flower.kernel.lang import pick
    from flower.records.handoff import SECTIONS, SECTIONS_EN, Handoff, degraded, handoff_prompt

    if request.overflow or request.ask is None:
        why = (
            pick("接口已拒收(提示过长)", "the API refused the prompt (too long)")
            if request.overflow
            else pick("没有可用的会话来写交接", "no session was there to write the handoff")
        )
        return degraded(request.step, request.prompt, why=why)
    try:
        prompt = handoff_prompt().format(used=request.used, window=request.window)
        answer = await request.ask(prompt)
    except Exception as exc:  # any failure of the round means a mechanical handoff
        return degraded(request.step, request.prompt, why=f"{type(exc).__name__}: {exc}")
    if not getattr(answer, "ok", False):
        failed = str(
            getattr(answer, "error", "") or pick("写交接失败", "writing the handoff failed")
        )
        return degraded(request.step, request.prompt, why=failed)
    doc = Handoff.parse(str(getattr(answer, "text", "") or ""), step=request.step)
    if doc.complete():
        return doc
    headings = pick(SECTIONS, SECTIONS_EN)
    lacked = pick("、", ", ").join(headings[m] for m in doc.missing())
    fallback = degraded(
        request.step, request.prompt, why=pick("交接缺少:", "the handoff lacked ") + lacked
    )
    written = {name: getattr(doc, name) for name in SECTIONS if getattr(doc, name).strip()}
    return replace(fallback, **written)
