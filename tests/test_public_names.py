"""The API reference's 62 public names all import from ``flower``; Ctx stays in flower.workflow."""

from __future__ import annotations

import flower
import flower.workflow

#: The names the API reference documents as ``flower.__all__`` (seed 000).
SEED_NAMES = """
AgentSpec CompactPolicy HandoffPolicy build_options default_window Event normalize Ask
HumanChannel Brief Goal Verdict Lineage Handoff Workbench coordinator worker clarify judge
oracle COORDINATOR_RULES WORKER_RULES CLARIFIER_RULES JUDGE_RULES ORACLE_RULES delegate_guard
spill_guard index_guard workbench_hooks merge_hooks isolate_guard isolated wants_isolation
whitelist_guard Runtime StepResult Resilience classify endpoint reachable SqliteSessionStore
TrimmingSessionStore TrimPolicy EphemeralPolicy is_ephemeral trim_report PruningSessionStore
PrunePolicy Step Workflow StepAbort clarify_step BRIEF_KEY MISSING_KEY CLARIFY_RESUME goal_step
with_goal GOAL_KEY VERDICT_KEY ROUND_KEY starter_flow wake_state
""".split()


def test_every_name_of_the_api_reference_is_exported() -> None:
    assert len(SEED_NAMES) == 62 == len(set(SEED_NAMES))
    missing = [name for name in SEED_NAMES if name not in flower.__all__]
    assert missing == []
    for name in SEED_NAMES:
        assert getattr(flower, name) is not None


def test_ctx_is_a_workflow_name_only_and_clarify_rules_keep_both_names() -> None:
    assert "Ctx" in flower.workflow.__all__ and "Ctx" not in flower.__all__
    assert flower.CLARIFIER_RULES is flower.CLARIFY_RULES
