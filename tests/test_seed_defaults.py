"""The seed's defaults are the contract: every documented default, as the API reference
(seed 000) prints it. A changed default changes what every user's run does without a word
in their code, so each one is pinned here (a mutation run found some only tests of the
behaviour they tune would notice)."""

from __future__ import annotations

from typing import Any

import pytest

import flower

#: class -> (the required arguments, the seed's defaults for every other field)
SEED: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "CompactPolicy": ({}, {"mode": "auto", "window": None}),
    "HandoffPolicy": ({}, {"enabled": True, "headroom": 50000, "max_generations": 8}),
    "TrimPolicy": (
        {},
        {"keep_recent": 20, "min_chars": 2000, "spill_dirname": ".flower/spill", "enabled": True},
    ),
    "EphemeralPolicy": (
        {},
        {
            "enabled": True,
            "keep_recent": 6,
            "max_chars": 2000,
            "text": "[{cmd} 的结果已过期(第 {age} 轮前),当前状态可能已变。需要请重新执行]",
        },
    ),
    "AgentSpec": (
        {"name": "a", "instructions": "i"},
        {
            "model": None, "effort": None, "max_turns": None, "max_budget_usd": None,
            "permission_mode": "default", "agents": None, "hooks": None, "compact": None,
            "glance": False, "workbench": True, "delegate_only": False,
        },
    ),
    "StepResult": (
        {"step": "s"},
        {
            "session_id": None, "ok": False, "cost_usd": 0.0, "num_turns": 0, "text": "",
            "error": None, "started_at": 0.0, "ended_at": 0.0, "attempts": 1,
            "resumed": False, "context": 0,
        },
    ),
    "Workflow": ({"steps": []}, {"name": "workflow", "channel": None, "workbench": None,
                                 "continuous": True}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SEED))
def test_every_documented_default_is_the_seeds(name: str) -> None:
    required, defaults = SEED[name]
    made = getattr(flower, name)(**required)
    assert {field: getattr(made, field) for field in defaults} == defaults
