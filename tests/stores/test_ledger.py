"""The judge ledger: every verdict and every human override, by run id, in order, on
SQLite and on Postgres; a store made at revision 0003 gains the table and keeps its rows."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import sqlalchemy as sa

from flower.stores import migrate
from flower.stores.engine import make_engine
from flower.stores.errors import StoreError
from flower.stores.schema import entries, meta
from flower.stores.sqlite import SqliteSessionStore
from flower.stores.steps import record_step
from flower.stores.url import to_url

WHERE = {"workspace": "/m1/proj", "host": "m1", "step": "干活"}
VERDICT: dict[str, Any] = {
    "run_id": "run-a", **WHERE, "round": 1, "kind": "verdict", "state": "not_yet",
    "reason": "测试没有跑：`pytest -q` 报 2 failed ✗", "failed": ["tests pass", "文档更新"],
    "cost_usd": 0.125, "session_id": "judge-sid-1", "said": "", "at": 1000.5,
}  # fmt: skip
OVERRIDE: dict[str, Any] = {
    "run_id": "run-a", **WHERE, "round": 2, "kind": "override", "state": "change_goal",
    "reason": "the judge found the goal unreachable", "failed": [], "cost_usd": 0.0,
    "session_id": None, "said": "目标改为：只支持 SQLite", "at": 1001.0,
}  # fmt: skip


def minimal(run_id: str, round: Any, **more: Any) -> dict[str, Any]:
    return {"run_id": run_id, **WHERE, "round": round, "kind": "verdict", "state": "", **more}


def test_a_verdict_and_an_override_come_back_as_written(store_target: str) -> None:
    store = SqliteSessionStore(store_target)
    store.record_ruling(VERDICT)
    store.record_ruling(OVERRIDE)
    assert store.rulings("run-a") == [VERDICT, OVERRIDE]
    assert isinstance(store.rulings()[0]["failed"], list)
    store.close()


def test_rulings_are_filtered_by_run_and_kept_in_the_order_recorded(store_target: str) -> None:
    store = SqliteSessionStore(store_target)
    store.record_ruling(minimal("run-a", 1, at=300.0))
    store.record_ruling(minimal("run-b", 1, at=100.0))
    store.record_ruling(minimal("run-a", 2, at=200.0))  # recorded later, earlier clock
    store.record_ruling(minimal("run-a", 3, at=250.0))

    assert [r["round"] for r in store.rulings("run-a")] == [1, 2, 3]
    assert [(r["run_id"], r["round"]) for r in store.rulings("run-b")] == [("run-b", 1)]
    assert [r["run_id"] for r in store.rulings()] == ["run-a", "run-b", "run-a", "run-a"]
    assert store.rulings("run-c") == []
    store.close()


def test_missing_optional_keys_get_defaults_and_values_are_coerced(store_target: str) -> None:
    store = SqliteSessionStore(store_target)
    before = time.time()
    store.record_ruling(minimal("run-a", 1))  # a vague verdict: no state, nothing else
    store.record_ruling(
        minimal("run-a", "2", state="unreachable", failed="one check", cost_usd="0.5",
                reason="nul\x00gone, half a pair \ud83d kept as ?", step="步" * 300)
    )  # fmt: skip
    store.record_ruling(minimal("run-a", 3, failed=("a", 7, None), session_id=""))

    vague, coerced, listed = store.rulings("run-a")
    assert before <= vague.pop("at") <= time.time()
    assert vague == {
        "run_id": "run-a", **WHERE, "round": 1, "kind": "verdict", "state": "",
        "reason": "", "failed": [], "cost_usd": 0.0, "session_id": None, "said": "",
    }  # fmt: skip
    assert (coerced["round"], coerced["failed"], coerced["cost_usd"]) == (2, ["one check"], 0.5)
    assert coerced["reason"] == "nulgone, half a pair ? kept as ?"
    assert coerced["step"] == "步" * 255
    assert (listed["failed"], listed["session_id"]) == (["a", "7", "None"], None)
    store.close()


def test_a_row_without_its_run_or_kind_is_refused_and_not_written(store_target: str) -> None:
    store = SqliteSessionStore(store_target)
    with pytest.raises(KeyError, match="round, kind"):
        store.record_ruling({"run_id": "run-a", **WHERE, "state": "achieved"})
    with pytest.raises(
        ValueError,
        match="one of verdict, override, refusal, restored, check, rewind, not 'verdikt'",
    ):
        store.record_ruling({**VERDICT, "kind": "verdikt"})
    with pytest.raises(ValueError, match="run_id must be 1 to 64"):
        store.record_ruling({**VERDICT, "run_id": "r" * 65})
    assert store.rulings() == []
    store.close()


def test_a_store_at_0003_gains_the_ledger_and_keeps_its_rows(store_target: str) -> None:
    assert migrate.upgrade(store_target, "0003") == (None, "0003")
    engine = make_engine(to_url(store_target))
    key = {"project_key": "proj", "session_id": "s1", "subpath": ""}
    line = {"type": "user", "uuid": "u1"}
    with engine.begin() as conn:
        conn.execute(entries.insert().values(**key, uuid="u1", entry=line))
        conn.execute(meta.insert().values(**key, mtime=1))
    record_step(engine, "run-a", "/m1/proj", "m1", {"step": "干活", "ok": True, "ended_at": 5.0})
    assert "ledger" not in sa.inspect(engine).get_table_names()
    engine.dispose()

    if store_target.startswith("postgresql"):  # a shared server waits for `flower db upgrade`
        needs = f"at schema revision 0003, this flower needs {migrate.head()}"
        with pytest.raises(StoreError, match=needs):
            SqliteSessionStore(store_target)
        assert migrate.upgrade(store_target) == ("0003", migrate.head())
    store = SqliteSessionStore(store_target)  # an embedded file upgrades itself on open
    assert migrate.current(store_target) == migrate.head()

    assert asyncio.run(store.load({"project_key": "proj", "session_id": "s1"})) == [line]
    assert [(r["run"], r["last_step"]) for r in store.runs()] == [("run-a", "干活")]
    store.record_ruling(VERDICT)
    assert store.rulings() == [VERDICT]
    store.close()

    assert migrate.downgrade(store_target, "0003") == (migrate.head(), "0003")  # and back down
    engine = make_engine(to_url(store_target))
    assert "ledger" not in sa.inspect(engine).get_table_names()
    engine.dispose()
