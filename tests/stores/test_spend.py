"""A run's spend and cap in the shared store: rows from any writer add up by run id, the
newest cap wins, ``none`` clears it, on SQLite and on Postgres; a store at 0005 gains
the tables, and loses them walking down."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from flower.stores import migrate
from flower.stores.database import StoreDatabase


def row(run: str, cost: float, **kw: object) -> dict[str, object]:
    return {"run_id": run, "step": "干活", "session_id": "s-1", "cost_usd": cost, "host": "m1"} | kw


def test_spend_adds_up_by_run_across_writers_and_the_newest_cap_wins(store_target: str) -> None:
    first, second = StoreDatabase(store_target), StoreDatabase(store_target)  # two processes
    try:
        assert first.budget("run-a") == {"cap": None, "spent": 0.0, "sessions": 0}
        first.record_spend(row("run-a", 0.25))
        second.record_spend(row("run-a", 0.125, step="干活·判定#1", session_id=None))
        second.record_spend(row("run-b", 1.0))
        first.set_cap("run-a", 0.5, "m1")
        assert second.budget("run-a") == {"cap": 0.5, "spent": 0.375, "sessions": 2}
        second.set_cap("run-a", 40.0, "m2")  # raised on another machine
        assert first.budget("run-a")["cap"] == 40.0
        first.set_cap("run-a", None, "m1")  # --budget none
        assert first.budget("run-a") == {"cap": None, "spent": 0.375, "sessions": 2}
        assert first.budgets() == {
            "run-a": {"cap": None, "spent": 0.375, "sessions": 2},
            "run-b": {"cap": None, "spent": 1.0, "sessions": 1},
        }
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda db: db.record_spend(row("", 0.1)), "run id"),
        (lambda db: db.record_spend(row("r" * 65, 0.1)), "run id"),
        (lambda db: db.record_spend(row("run-a", -0.1)), "0 or more"),
        (lambda db: db.record_spend(row("run-a", math.nan)), "finite"),
        (lambda db: db.set_cap("run-a", 0.0, "m1"), "above 0"),
        (lambda db: db.set_cap("run-a", math.inf, "m1"), "finite"),
    ],
)
def test_nonsense_is_refused_and_nothing_is_written(
    call: Callable[[StoreDatabase], None], message: str, tmp_path: Path
) -> None:
    db = StoreDatabase(tmp_path / "s.db")
    try:
        with pytest.raises(ValueError, match=message):
            call(db)
        assert db.budgets() == {}
    finally:
        db.close()


def test_a_store_at_0005_gains_the_budget_tables(store_target: str) -> None:
    assert migrate.upgrade(store_target, "0005") == (None, "0005")
    if store_target.startswith("postgresql"):
        migrate.upgrade(store_target)
    db = StoreDatabase(store_target)  # an embedded file upgrades itself on open
    try:
        assert migrate.current(store_target) == migrate.head()
        db.record_spend(row("run-a", 0.5))
        assert db.budget("run-a")["spent"] == 0.5
    finally:
        db.close()
    assert migrate.downgrade(store_target, "0005") == (migrate.head(), "0005")
