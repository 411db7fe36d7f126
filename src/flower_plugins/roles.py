"""The default roles: coordinator, worker, clarify, judge and oracle.

A plugin adds a role (or shadows one of these) by returning its own ``RoleFactory`` from
``flower_roles``; :func:`flower.roles.factory.role_factories` collects them by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    from flower.plugin_types import RoleFactory


@hookimpl(trylast=True)
def flower_roles() -> list[RoleFactory]:
    from flower.plugin_types import RoleFactory
    from flower.roles import factory as roles

    return [
        RoleFactory(
            "coordinator",
            roles.coordinator,
            returns="spec",
            description="splits the work, dispatches workers, decides; never works by hand",
        ),
        RoleFactory(
            "worker",
            roles.worker,
            returns="agent",
            description="a subagent that does the work and verifies each change",
        ),
        RoleFactory(
            "clarify",
            roles.clarify,
            returns="spec",
            description="asks the human what is wanted; ends with the four brief sections",
        ),
        RoleFactory(
            "judge",
            roles.judge,
            returns="spec",
            description="sets the goal, then gives an independent verdict each round",
        ),
        RoleFactory(
            "oracle",
            roles.oracle,
            returns="spec",
            description="answers 'where are we?' from events and the workbench during a run",
        ),
    ]
