"""The Runtime's documented surface and the small pure parts behind its loop."""

from __future__ import annotations

from dataclasses import MISSING, fields
from pathlib import Path
from types import SimpleNamespace

import pytest

from flower.records.workbench import Workbench
from flower.roles.agent import AgentSpec, CompactPolicy, HandoffPolicy
from flower.runtime.resilience import Resilience
from flower.runtime.runner import Runtime, StepResult, _error_text


def test_step_result_fields_and_defaults_are_the_documented_ones() -> None:
    expected = [
        ("step", MISSING), ("session_id", None), ("ok", False), ("cost_usd", 0.0),
        ("num_turns", 0), ("text", ""), ("error", None), ("started_at", 0.0),
        ("ended_at", 0.0), ("attempts", 1), ("errors", list), ("resumed", False),
        ("retired", list), ("context", 0),
        ("audited", 0),  # flower's own, after the documented ones: the handoff audit's count
        ("refused", ""),  # flower's own: why the step's check refused its answer (a stop)
    ]  # fmt: skip
    got = [
        (f.name, f.default_factory if f.default is MISSING and f.default_factory is not MISSING
         else f.default)
        for f in fields(StepResult)
    ]  # fmt: skip
    assert got == expected
    assert StepResult("s").duration_s == 0.0
    assert StepResult("s", started_at=10.0, ended_at=12.5).duration_s == 2.5


def test_class_constants() -> None:
    assert Runtime.INTERRUPTED == "interrupted-by-human"
    assert Runtime.HANDOFF_DUE == "context-full-handoff"
    assert "interrupted" in Runtime.INTERRUPT_NOTE and "不是环境故障" in Runtime.INTERRUPT_NOTE


def test_constructor_defaults_and_policies(workspace: Path, tmp_path: Path) -> None:
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        assert rt.resilience == Resilience() and rt.handoff == HandoffPolicy()
        assert rt.workbench is None and rt.portable and rt.spill_threshold == 4000
        assert (rt.store.policy.enabled, rt.store.ephemeral.enabled) == (False, True)
        assert rt.store.prune_policy.keep_denials == 1
        assert (tmp_path / "runs" / "sessions.db").exists()
        assert not rt.interruptible and not rt.interrupt("hello")
    with Runtime(
        workspace=workspace, run_dir=tmp_path / "r2", trim=True, ephemeral=False, keep_denials=3,
        workbench=True, resilience=False, handoff=False,
    ) as rt:  # fmt: skip
        assert (rt.store.policy.enabled, rt.store.ephemeral.enabled) == (True, False)
        assert rt.store.prune_policy.keep_denials == 3
        assert not rt.resilience.enabled and not rt.handoff.enabled
        assert rt.workbench is not None and rt.workbench.root == tmp_path / "r2" / "workbench"
        assert rt.workbench.notes.is_dir()


def test_a_closed_runtime_refuses_to_run(workspace: Path, tmp_path: Path) -> None:
    import anyio

    rt = Runtime(workspace=workspace, run_dir=tmp_path / "runs")
    rt.close()
    rt.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        anyio.run(rt.run, AgentSpec(name="a", instructions=""), "x")


def test_cli_env_from_the_policies(workspace: Path, tmp_path: Path) -> None:
    plain = AgentSpec(name="a", instructions="")
    with Runtime(workspace=workspace, run_dir=tmp_path / "a") as rt:
        assert rt._cli_env(plain) == {"DISABLE_AUTO_COMPACT": "1"}  # handing off, not compacting
        assert rt._cli_env(AgentSpec(name="a", instructions="", compact=CompactPolicy())) == {}
        own = AgentSpec(name="a", instructions="", env={"DISABLE_COMPACT": "1"})
        assert rt._cli_env(own) == {}
    retries = Resilience(cli_retries=2)
    with Runtime(
        workspace=workspace, run_dir=tmp_path / "b", handoff=False, resilience=retries
    ) as rt:
        assert rt._cli_env(plain) == {"CLAUDE_CODE_MAX_RETRIES": "2"}
        own = AgentSpec(name="a", instructions="", env={"CLAUDE_CODE_MAX_RETRIES": "9"})
        assert rt._cli_env(own) == {}  # the spec's own env wins


def test_an_external_workbench_is_kept(workspace: Path, tmp_path: Path) -> None:
    wb = Workbench(workspace, home=tmp_path / "bench")
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs", workbench=wb) as rt:
        assert rt.workbench is wb and wb.scripts.is_dir()


def _result(**kw: object) -> SimpleNamespace:
    base = {"errors": None, "result": None, "api_error_status": None, "subtype": "success",
            "terminal_reason": None}  # fmt: skip
    return SimpleNamespace(**{**base, **kw})


def test_error_text_carries_what_the_classifier_needs() -> None:
    api = _result(
        result="API Error: 529 Overloaded", api_error_status=529, terminal_reason="api_error"
    )
    assert (
        _error_text(api, "server_error")
        == "API Error: 529 Overloaded (HTTP 529, server_error, api_error)"
    )
    turns = _result(subtype="error_max_turns", errors=["Reached maximum number of turns (3)"])
    assert _error_text(turns, None) == "Reached maximum number of turns (3) (error_max_turns)"
    assert _error_text(_result(terminal_reason="completed"), None) == "the turn failed"
