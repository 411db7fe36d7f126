"""flower: long-horizon coding agents on the Claude Agent SDK.

The public API is imported lazily: ``import flower`` stays cheap (the command line's
start-up depends on it), and ``from flower import Runtime`` loads only what it needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from flower import moved
from flower.hookspecs import hookimpl
from flower.kernel.version import __version__ as __version__

moved.install()

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Event": "flower.kernel.events",
    "normalize": "flower.kernel.events",
    # runtime, resilience, handoff (runtime/runner.py, runtime/resilience.py, records/handoff.py)
    "Runtime": "flower.runtime.runner",
    "StepResult": "flower.runtime.runner",
    "Resilience": "flower.runtime.resilience",
    "Handoff": "flower.records.handoff",
    "Channel": "flower.kernel.channel_protocol",
    "RoleFactory": "flower.plugin_types",
    "HandoffRequest": "flower.plugin_types",
    "StoreSettings": "flower.plugin_types",
    "get_plugin_manager": "flower.plugins",
    "is_ephemeral": "flower.roles.ephemeral",
    # session stores (stores/sqlite.py, stores/trim.py, stores/prune.py)
    "SqliteSessionStore": "flower.stores.sqlite",
    "TrimmingSessionStore": "flower.stores.trim",
    "PruningSessionStore": "flower.stores.prune",
    "TrimPolicy": "flower.kernel.policies",
    "EphemeralPolicy": "flower.kernel.policies",
    "trim_report": "flower.stores.trim",
    "PrunePolicy": "flower.kernel.policies",
    # agents, guards, workbench (roles/agent.py, roles/guard.py, records/workbench.py)
    "AgentSpec": "flower.kernel.agent_spec",
    "CompactPolicy": "flower.kernel.agent_spec",
    "HandoffPolicy": "flower.kernel.agent_spec",
    "build_options": "flower.roles.agent",
    "default_window": "flower.kernel.agent_spec",
    "Workbench": "flower.records.workbench",
    "whitelist_guard": "flower.roles.guard",
    "delegate_guard": "flower.roles.guard",
    "spill_guard": "flower.roles.guard",
    "index_guard": "flower.roles.guard",
    "isolate_guard": "flower.roles.guard",
    "isolated": "flower.roles.guard",
    "wants_isolation": "flower.roles.guard",
    "workbench_hooks": "flower.roles.guard",
    "merge_hooks": "flower.roles.guard",
    # documents, the human, lineage (workflow/brief.py, workflow/verdicts.py, human/channel.py,
    # records/lineage.py)
    "Brief": "flower.workflow.brief",
    "Goal": "flower.workflow.verdicts",
    "Verdict": "flower.workflow.verdicts",
    "HumanChannel": "flower.human.channel",
    "Ask": "flower.human.channel",
    "Mail": "flower.human.channel",
    "Lineage": "flower.records.lineage",
    "classify": "flower.runtime.resilience",
    "endpoint": "flower.runtime.resilience",
    "reachable": "flower.runtime.resilience",
    # the workflow layer (workflow/base.py, clarify.py, goal.py, starter.py)
    "Step": "flower.workflow.base",
    "Workflow": "flower.workflow.base",
    "StepAbort": "flower.workflow.base",
    "clarify_step": "flower.workflow.clarify",
    "BRIEF_KEY": "flower.workflow.clarify",
    "MISSING_KEY": "flower.workflow.clarify",
    "CLARIFY_RESUME": "flower.workflow.clarify",
    "goal_step": "flower.workflow.goal",
    "with_goal": "flower.workflow.goal",
    "GOAL_KEY": "flower.workflow.goal",
    "VERDICT_KEY": "flower.workflow.goal",
    "ROUND_KEY": "flower.workflow.goal",
    "starter_flow": "flower.workflow.starter",
    "wake_state": "flower.workflow.starter",
    # roles (roles/factory.py)
    "coordinator": "flower.roles.factory",
    "worker": "flower.roles.factory",
    "clarify": "flower.roles.factory",
    "judge": "flower.roles.factory",
    "oracle": "flower.roles.factory",
    "COORDINATOR_RULES": "flower.roles.factory",
    "WORKER_RULES": "flower.roles.factory",
    "CLARIFY_RULES": "flower.roles.factory",
    "CLARIFIER_RULES": "flower.roles.factory",
    "JUDGE_RULES": "flower.roles.factory",
    "ORACLE_RULES": "flower.roles.factory",
}

__all__ = ["__version__", "hookimpl", *sorted(_EXPORTS)]


#: Names whose expiry of glances needs the guard's classifier, which the stores never
#: import: handing one out loads :mod:`flower.roles.ephemeral`, which registers it
#: (:func:`flower.kernel.policies.register_glance`).
_NEED_GLANCE = frozenset({"EphemeralPolicy", "TrimmingSessionStore", "PruningSessionStore"})


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'flower' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    if name in _NEED_GLANCE:
        import_module("flower.roles.ephemeral")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public API only: completion and ``dir(flower)`` should not offer this module's
    own helpers (``import_module``, ``TYPE_CHECKING``, ``_EXPORTS``...)."""
    return sorted(__all__)


if TYPE_CHECKING:
    from flower.human.channel import Ask, HumanChannel, Mail
    from flower.kernel.agent_spec import AgentSpec, CompactPolicy, HandoffPolicy, default_window
    from flower.kernel.channel_protocol import Channel
    from flower.kernel.events import Event, normalize
    from flower.plugin_types import HandoffRequest, RoleFactory, StoreSettings
    from flower.plugins import get_plugin_manager
    from flower.records.handoff import Handoff
    from flower.records.lineage import Lineage
    from flower.records.workbench import Workbench
    from flower.roles.agent import build_options
    from flower.roles.ephemeral import is_ephemeral
    from flower.roles.factory import (
        CLARIFIER_RULES,
        CLARIFY_RULES,
        COORDINATOR_RULES,
        JUDGE_RULES,
        ORACLE_RULES,
        WORKER_RULES,
        clarify,
        coordinator,
        judge,
        oracle,
        worker,
    )
    from flower.roles.guard import (
        delegate_guard,
        index_guard,
        isolate_guard,
        isolated,
        merge_hooks,
        spill_guard,
        wants_isolation,
        whitelist_guard,
        workbench_hooks,
    )
    from flower.runtime.resilience import Resilience, classify, endpoint, reachable
    from flower.runtime.runner import Runtime, StepResult
    from flower.stores.prune import PrunePolicy, PruningSessionStore
    from flower.stores.sqlite import SqliteSessionStore
    from flower.stores.trim import EphemeralPolicy, TrimmingSessionStore, TrimPolicy, trim_report
    from flower.workflow.base import Step, StepAbort, Workflow
    from flower.workflow.brief import Brief
    from flower.workflow.clarify import BRIEF_KEY, CLARIFY_RESUME, MISSING_KEY, clarify_step
    from flower.workflow.goal import GOAL_KEY, ROUND_KEY, VERDICT_KEY, goal_step, with_goal
    from flower.workflow.starter import starter_flow, wake_state
    from flower.workflow.verdicts import Goal, Verdict
