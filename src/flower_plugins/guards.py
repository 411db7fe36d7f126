"""The default guards: the seed's walls for every spec (whitelist or delegate guard,
spilling, the workbench index, worktree isolation).

A plugin adds its own guard by implementing ``flower_guards`` too; all results are
merged, plugins' before these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flower import hookimpl

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec
    from flower.records.workbench import Workbench


@hookimpl(trylast=True)
def flower_guards(
    spec: AgentSpec, workbench: Workbench | None, spill_threshold: int | None
) -> dict[str, list[Any]] | None:
    from flower.roles.guard import spec_guards

    return spec_guards(spec, workbench, spill_threshold) or None
