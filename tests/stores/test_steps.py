"""The store's run list: every finished step by run id, any machine's (status --all)."""

from __future__ import annotations

from flower.stores.sqlite import SqliteSessionStore


def row(step: str, ok: bool, cost: float, ended: float) -> dict:
    return {"step": step, "ok": ok, "cost_usd": cost, "ended_at": ended, "session_id": "s"}


def test_runs_sum_their_steps_newest_run_first(store_target: str) -> None:
    store = SqliteSessionStore(store_target)
    store.record_step("run-a", "/m1/proj", "m1", row("确认需求", True, 0.25, 100.0))
    store.record_step("run-b", "/m2/other", "m2", row("干活", False, 1.0, 300.0))
    store.record_step("run-a", "/m3/proj", "m3", row("干活", True, 0.5, 200.0))  # moved on

    (b, a) = store.runs()
    assert a == {
        "run": "run-a", "steps": 2, "ok": 2, "cost_usd": 0.75, "workspace": "/m3/proj",
        "host": "m3", "last_step": "干活", "ended_at": 200.0,
    }  # fmt: skip
    assert (b["run"], b["steps"], b["ok"], b["host"]) == ("run-b", 1, 0, "m2")
    store.close()


def test_an_empty_store_has_no_runs(store_target: str) -> None:
    store = SqliteSessionStore(store_target)
    assert store.runs() == []
    store.close()
