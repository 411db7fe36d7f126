"""The run budget's accounting and its refusals, without a model.

Runtimes here are real (their session store is the SQLite file a flower would use); the
cost a session reports is charged the way ``run_attempt`` charges it. The run through a
real ``flower`` in a pipe is tests/commands/test_budget_e2e.py.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flower.kernel.events import Event
from flower.records.lineage import Lineage
from flower.roles.agent import AgentSpec
from flower.runtime.budget import (
    BUDGET_KEY,
    NO_CAP,
    Budget,
    BudgetReached,
    budget_for,
    env_budget,
    money,
    parse_budget,
    raised,
)
from flower.runtime.runner import Runtime

from ..stores.conftest import pg_schemas, pg_url  # noqa: F401  (the Postgres fixtures)


@pytest.fixture
def run_of(workspace: Path, tmp_path: Path) -> Callable[..., Runtime]:
    """``run_of(cap)``: a Runtime in a workflow (``ctx``) of the workspace's one run, as a
    process that continues it sees it; each call is another process's Runtime."""
    run_dir = tmp_path / "runs"
    Lineage.open(run_dir, workspace).bump()  # the run's lasting id
    made: list[Runtime] = []

    def make(cap: float | None = None) -> Runtime:
        rt = Runtime(workspace=workspace, run_dir=run_dir)
        rt.ctx = {BUDGET_KEY: cap} if cap is not None else {}
        made.append(rt)
        return rt

    yield make
    for rt in made:
        rt.close()


def charge(rt: Runtime, cost: float, events: list[Event] | None = None) -> Budget:
    """What ``run_attempt`` does when a session of ``rt`` reports ``cost``."""
    budget = budget_for(rt)
    assert budget is not None
    budget.charge(cost, step="干活", session_id="s-1", on_event=None if events is None
                  else events.append)  # fmt: skip
    return budget


@pytest.mark.parametrize(
    ("given", "cap"),
    [("20", 20.0), (" $0.5 ", 0.5), ("0.05", 0.05), (3, 3.0), ("none", NO_CAP), ("OFF", NO_CAP)],
)
def test_a_budget_is_an_amount_above_zero_or_none(given: object, cap: float) -> None:
    assert parse_budget(given) == cap


@pytest.mark.parametrize("given", ["-1", "0", "abc", "nan", "inf", "", "1e999", True, -0.5])
def test_anything_else_is_refused_in_one_line(given: object) -> None:
    with pytest.raises(ValueError) as caught:
        parse_budget(given)
    assert "\n" not in str(caught.value) and "USD" in str(caught.value)


def test_the_environment_variable_gives_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLOWER_BUDGET", raising=False)
    assert env_budget() is None
    monkeypatch.setenv("FLOWER_BUDGET", " ")
    assert env_budget() is None
    monkeypatch.setenv("FLOWER_BUDGET", "12.5")
    assert env_budget() == 12.5
    monkeypatch.setenv("FLOWER_BUDGET", "-1")
    with pytest.raises(ValueError, match=r"^FLOWER_BUDGET: '-1' is no budget"):
        env_budget()


def test_starter_flow_carries_the_cap_and_refuses_a_bad_one_before_writing(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flower.workflow import starter_flow

    monkeypatch.delenv("FLOWER_BUDGET", raising=False)
    runs = tmp_path / "runs"
    assert starter_flow("x", workspace=workspace, run_dir=runs).context == {}
    given = starter_flow("x", workspace=workspace, run_dir=runs, budget_usd=5)
    assert given.context == {BUDGET_KEY: 5.0}
    monkeypatch.setenv("FLOWER_BUDGET", "7")
    assert starter_flow("x", workspace=workspace, run_dir=runs).context == {BUDGET_KEY: 7.0}
    assert starter_flow("x", workspace=workspace, run_dir=runs, budget_usd=2).context == {
        BUDGET_KEY: 2.0  # the argument wins over the variable
    }
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for bad in (-1, 0, float("nan")):
        with pytest.raises(ValueError, match="no budget"):
            starter_flow("x", workspace=fresh, run_dir=tmp_path / "r2", budget_usd=bad)
    monkeypatch.setenv("FLOWER_BUDGET", "abc")
    with pytest.raises(ValueError, match="FLOWER_BUDGET"):
        starter_flow("x", workspace=fresh, run_dir=tmp_path / "r2")
    assert list(fresh.iterdir()) == [] and not (tmp_path / "r2").exists()  # nothing half-written


def test_two_runtimes_of_one_run_add_to_one_spend_and_share_the_kept_cap(
    run_of: Callable[..., Runtime],
) -> None:
    first, second = run_of(1.0), run_of()  # the second wakes without --budget
    charge(first, 0.25)
    budget = charge(second, 0.5)
    assert budget.state() == (1.0, 0.75)  # the cap the first process kept with the run
    assert budget_for(first).state() == (1.0, 0.75)  # type: ignore[union-attr]
    assert budget.session_cap(None) == pytest.approx(0.25)
    assert budget.session_cap(0.1) == 0.1  # a session's own smaller cap stays
    assert budget.refusal() is None and not budget.spent_out()

    charge(first, 0.25)  # exactly the cap: nothing more may start
    assert second.budget is not None and second.budget.spent_out()
    assert second.budget.refusal() == (
        "the run's budget is spent ($1 of $1); nothing more is asked of the model"
    )
    raised_ = run_of(4.0)  # `flower --budget 4`
    assert budget_for(raised_).left() == 3.0  # type: ignore[union-attr]
    assert not second.budget.spent_out()  # the raised cap holds for every process
    cleared = run_of(NO_CAP)  # `flower --budget none`
    assert budget_for(cleared).state() == (None, 1.0)  # type: ignore[union-attr]
    assert budget_for(cleared).session_cap(0.5) == 0.5  # type: ignore[union-attr]


@pytest.mark.e2e
def test_the_spend_of_another_process_counts(
    run_of: Callable[..., Runtime], workspace: Path, tmp_path: Path
) -> None:
    rt = run_of(1.0)
    charge(rt, 0.25)
    other = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(workspace), str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )  # fmt: skip
    assert other.returncode == 0, other.stderr[-2000:]
    assert other.stdout.split() == ["1.0", "0.25"]  # it saw the cap and this process's spend
    assert budget_for(rt).state() == (1.0, 0.75)  # type: ignore[union-attr]


@pytest.mark.postgres
def test_two_machines_sharing_a_postgres_store_share_the_spend_and_the_cap(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Machine one in /one, machine two with a clone in /two (the run id travels in the
    workbench; here written straight into its lineage): one run, one spend, one cap."""
    import json

    monkeypatch.setenv("FLOWER_STORE_URL", request.getfixturevalue("pg_url"))
    runtimes = []
    run = ""
    for name in ("one", "two"):
        ws = tmp_path / name
        ws.mkdir()
        lineage = Lineage.open(ws / "runs", ws)
        lineage.bump()
        run = run or lineage.run
        data = json.loads(lineage.path.read_text())
        lineage.path.write_text(json.dumps({**data, "run": run}))  # the same run
        rt = Runtime(workspace=ws, run_dir=ws / "runs")
        rt.ctx = {BUDGET_KEY: 1.0} if name == "one" else {}
        runtimes.append(rt)
    try:
        charge(runtimes[0], 0.5)
        budget = charge(runtimes[1], 0.25)
        assert budget.run == run and budget.state() == (1.0, 0.75)
        assert not (tmp_path / "one" / "runs" / "sessions.db").exists()  # all in Postgres
    finally:
        for rt in runtimes:
            rt.close()


OTHER_PROCESS = """
import sys
from flower.runtime.budget import budget_for
from flower.runtime.runner import Runtime

with Runtime(workspace=sys.argv[1], run_dir=sys.argv[2]) as rt:
    rt.ctx = {}
    budget = budget_for(rt)
    cap, spent = budget.state()
    print(cap, spent)
    budget.charge(0.5, step="干活·判定#1", session_id="s-judge")
"""


def test_the_view_hears_where_the_budget_stands_and_is_warned_once(
    run_of: Callable[..., Runtime],
) -> None:
    rt = run_of(0.1)
    events: list[Event] = []
    charge(rt, 0.05, events)
    charge(rt, 0.031, events)  # 81 %: warned
    charge(rt, 0.001, events)  # still near: not again
    phases = [e.payload["phase"] for e in events]
    assert phases == ["spent", "spent", "near", "spent"]
    near = events[2].payload
    assert near["spent"] == pytest.approx(0.081) and near["cap"] == 0.1
    assert near["left"] == pytest.approx(0.019) and near["cost_usd"] == 0.031
    assert all(e.kind == "budget" and e.step == "干活" for e in events)
    charge(rt, 0, events)  # a session that cost nothing is no row and no event
    assert len(events) == 4


def test_a_spent_budget_stops_runtime_run_before_any_session(
    run_of: Callable[..., Runtime],
) -> None:
    rt = run_of(0.1)
    charge(rt, 0.125)
    events: list[Event] = []
    spec = AgentSpec(name="worker", instructions="", allowed_tools=["Read"])
    with pytest.raises(BudgetReached) as caught:
        asyncio.run(rt.run(spec, "go on", step_name="干活", on_event=events.append))
    stop = caught.value
    assert (stop.spent, stop.cap, stop.step) == (0.125, 0.1, "干活")
    assert stop.suggested == 0.23  # the spend plus the cap: twice the cap would not do
    (row,) = rt.manifest.read()  # the step's row, as after a quit
    assert row["error"].startswith("stopped: the run's budget is spent ($0.125 of $0.1)")
    assert row["ok"] is False and row["cost_usd"] == 0.0
    kinds = [(e.kind, e.payload.get("phase")) for e in events]
    assert kinds == [("budget", "reached"), ("result", None)]
    assert events[-1].payload["stopped"] is True  # shown as stopped, not as a failure


def test_a_side_question_counts_against_the_run_in_progress(
    run_of: Callable[..., Runtime], workspace: Path, tmp_path: Path
) -> None:
    from flower.commands.aside import ask_oracle

    rt = run_of(0.1)
    budget = charge(rt, 0.05)
    aside = Runtime(workspace=workspace, run_dir=tmp_path / "runs" / "aside")
    try:
        assert budget_for(aside) is budget  # no workflow of its own: the run's budget
    finally:
        aside.close()
    charge(rt, 0.05)
    said = asyncio.run(
        ask_oracle("where are we?", workspace=workspace, run_dir=tmp_path / "runs" / "aside",
                   workbench=None, recent=[])
    )  # fmt: skip
    assert said.startswith("could not answer: ")  # and no session was started for it
    assert "the run's budget is spent ($0.1 of $0.1); nothing more is asked" in said
    rt.close()  # the run is over: a later Runtime here counts for no run
    lone = Runtime(workspace=workspace, run_dir=tmp_path / "elsewhere")
    try:
        assert budget_for(lone) is None
    finally:
        lone.close()


class RefusingStore:
    """A store that keeps spend and caps but fails to (a server that went away)."""

    def record_spend(self, row: Any) -> None:
        raise OSError("connection refused")

    def set_cap(self, *args: Any) -> None:
        raise OSError("connection refused")

    def budget(self, run: str) -> dict[str, Any]:
        raise OSError("connection refused")


def test_a_store_that_fails_leaves_the_cap_holding_for_this_process(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rt = Runtime(workspace=workspace, run_dir=tmp_path / "runs")
    try:
        rt.store, store = RefusingStore(), rt.store  # type: ignore[assignment]
        rt.budget = Budget(0.1)
        budget = charge(rt, 0.06)
        charge(rt, 0.05)
        assert budget.state() == (0.1, pytest.approx(0.11)) and budget.spent_out()
        assert capsys.readouterr().err.count("could not") == 1  # said once, not per row
    finally:
        rt.store = store
        rt.close()


def test_amounts_read_as_people_write_them() -> None:
    assert [money(x) for x in (0.0521, 0.05, 40.0, 0.0, None, NO_CAP)] == [
        "$0.0521", "$0.05", "$40", "$0", "no cap", "no cap"
    ]  # fmt: skip
    assert raised(0.05, 0.0521) == 0.11  # the spend plus the cap, to the cent
    assert raised(20, 20.4) == 40.4 and raised(20, 5) == 40
