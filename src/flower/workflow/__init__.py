"""The workflow layer: steps in order, the clarify step, the goal guard, the starter flow.

``Workflow`` and ``Step`` say what runs in which session and how results hand on;
``clarify_step``, ``goal_step`` and ``with_goal`` are the documented building blocks;
``starter_flow`` assembles them into what ``flower "make X"`` runs, and
``wake_state`` tells, before anything runs, whether a folder would continue;
``bequest`` is the ``Workflow(finish=…)`` that leaves the next tool a note in
``CLAUDE.md`` and ``AGENTS.md`` when a run ends.
"""

from flower.workflow.base import ON_FAIL, Ctx, Step, StepAbort, Workflow
from flower.workflow.bequest import bequeath, bequest
from flower.workflow.clarify import BRIEF_KEY, CLARIFY_RESUME, MISSING_KEY, clarify_step
from flower.workflow.goal import GOAL_KEY, ROUND_KEY, VERDICT_KEY, goal_step, with_goal
from flower.workflow.starter import starter_flow, wake_state, workbench_for

__all__ = [
    "BRIEF_KEY",
    "CLARIFY_RESUME",
    "GOAL_KEY",
    "MISSING_KEY",
    "ON_FAIL",
    "ROUND_KEY",
    "VERDICT_KEY",
    "Ctx",
    "Step",
    "StepAbort",
    "Workflow",
    "bequeath",
    "bequest",
    "clarify_step",
    "goal_step",
    "starter_flow",
    "wake_state",
    "with_goal",
    "workbench_for",
]
