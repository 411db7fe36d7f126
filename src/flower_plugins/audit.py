"""The default open items of the handoff audit (``runtime/audit.py``).

What the starter flow and any workflow built on ``with_goal`` / ``clarify_step`` leave in
``ctx`` and on the channel: the checks the judge's last verdict failed, remarks still in
the inbox, questions still waiting, files changed since the last step ended, and the
lines of the brief's 未知与假设 that say they are open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    from flower.plugin_types import AuditRequest, OpenItem


@hookimpl(trylast=True)
def flower_open_items(request: AuditRequest) -> list[OpenItem]:
    from flower.runtime import audit
    from flower.workflow.clarify import BRIEF_KEY
    from flower.workflow.goal import VERDICT_KEY

    ctx = request.ctx or {}
    channel = ctx.get("_channel")
    return [
        *audit.failed_checks(ctx.get(VERDICT_KEY)),
        *audit.undelivered(channel),
        *audit.waiting_questions(channel),
        *audit.changed_files(request.workspace, request.run_dir),
        *audit.open_unknowns(ctx.get(BRIEF_KEY)),
    ]
