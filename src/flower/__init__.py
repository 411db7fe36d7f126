"""flower: long-horizon coding agents on the Claude Agent SDK.

The public API is imported lazily: ``import flower`` stays cheap (the command line's
start-up depends on it), and ``from flower import Runtime`` loads only what it needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from flower.hookspecs import hookimpl

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Event": "flower.core.events",
    "normalize": "flower.core.events",
    # runtime, resilience, handoff (core/runtime.py, core/resilience.py, core/handoff.py)
    "Runtime": "flower.core.runtime",
    "StepResult": "flower.core.runtime",
    "Resilience": "flower.core.resilience",
    "Handoff": "flower.core.handoff",
    "Channel": "flower.core.channel",
    "RoleFactory": "flower.plugin_types",
    "HandoffRequest": "flower.plugin_types",
    "StoreSettings": "flower.plugin_types",
    "get_plugin_manager": "flower.plugins",
    "is_ephemeral": "flower.core.ephemeral",
    # session stores (stores/sqlite.py, stores/trim.py, stores/prune.py)
    "SqliteSessionStore": "flower.stores.sqlite",
    "TrimmingSessionStore": "flower.stores.trim",
    "PruningSessionStore": "flower.stores.prune",
    "TrimPolicy": "flower.stores.trim",
    "EphemeralPolicy": "flower.stores.trim",
    "trim_report": "flower.stores.trim",
    "PrunePolicy": "flower.stores.prune",
    # agents, guards, workbench (core/agent.py, core/guard.py, core/workbench.py)
    "AgentSpec": "flower.core.agent",
    "CompactPolicy": "flower.core.agent",
    "HandoffPolicy": "flower.core.agent",
    "build_options": "flower.core.agent",
    "default_window": "flower.core.agent",
    "Workbench": "flower.core.workbench",
    "whitelist_guard": "flower.core.guard",
    "delegate_guard": "flower.core.guard",
    "spill_guard": "flower.core.guard",
    "index_guard": "flower.core.guard",
    "isolate_guard": "flower.core.guard",
    "isolated": "flower.core.guard",
    "wants_isolation": "flower.core.guard",
    "workbench_hooks": "flower.core.guard",
    "merge_hooks": "flower.core.guard",
    # documents, the human, lineage (core/brief.py, core/goal.py, core/human.py, core/lineage.py)
    "Brief": "flower.core.brief",
    "Goal": "flower.core.goal",
    "Verdict": "flower.core.goal",
    "HumanChannel": "flower.core.human",
    "Ask": "flower.core.human",
    "Mail": "flower.core.human",
    "Lineage": "flower.core.lineage",
    "classify": "flower.core.resilience",
    "endpoint": "flower.core.resilience",
    "reachable": "flower.core.resilience",
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
    # roles (core/roles.py)
    "coordinator": "flower.core.roles",
    "worker": "flower.core.roles",
    "clarify": "flower.core.roles",
    "judge": "flower.core.roles",
    "oracle": "flower.core.roles",
    "COORDINATOR_RULES": "flower.core.roles",
    "WORKER_RULES": "flower.core.roles",
    "CLARIFY_RULES": "flower.core.roles",
    "CLARIFIER_RULES": "flower.core.roles",
    "JUDGE_RULES": "flower.core.roles",
    "ORACLE_RULES": "flower.core.roles",
}

__all__ = ["__version__", "hookimpl", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'flower' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public API only: completion and ``dir(flower)`` should not offer this module's
    own helpers (``import_module``, ``TYPE_CHECKING``, ``_EXPORTS``...)."""
    return sorted(__all__)


if TYPE_CHECKING:
    from flower.core.agent import (
        AgentSpec,
        CompactPolicy,
        HandoffPolicy,
        build_options,
        default_window,
    )
    from flower.core.brief import Brief
    from flower.core.channel import Channel
    from flower.core.ephemeral import is_ephemeral
    from flower.core.events import Event, normalize
    from flower.core.goal import Goal, Verdict
    from flower.core.guard import (
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
    from flower.core.handoff import Handoff
    from flower.core.human import Ask, HumanChannel, Mail
    from flower.core.lineage import Lineage
    from flower.core.resilience import Resilience, classify, endpoint, reachable
    from flower.core.roles import (
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
    from flower.core.runtime import Runtime, StepResult
    from flower.core.workbench import Workbench
    from flower.plugin_types import HandoffRequest, RoleFactory, StoreSettings
    from flower.plugins import get_plugin_manager
    from flower.stores.prune import PrunePolicy, PruningSessionStore
    from flower.stores.sqlite import SqliteSessionStore
    from flower.stores.trim import EphemeralPolicy, TrimmingSessionStore, TrimPolicy, trim_report
    from flower.workflow.base import Step, StepAbort, Workflow
    from flower.workflow.clarify import BRIEF_KEY, CLARIFY_RESUME, MISSING_KEY, clarify_step
    from flower.workflow.goal import GOAL_KEY, ROUND_KEY, VERDICT_KEY, goal_step, with_goal
    from flower.workflow.starter import starter_flow, wake_state
