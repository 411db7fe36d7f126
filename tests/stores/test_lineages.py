"""A run's lineage in the shared store: saved on every write, newest wins, read back by
run id, on SQLite and on Postgres; a store at 0004 gains the table."""

from __future__ import annotations

import pytest

from flower.stores import migrate
from flower.stores.sqlite import SqliteSessionStore

DOC = {"workspace": "/m1/proj", "run": "run-a", "woke": 2, "steps": {"干活": "s-1"}}


def test_save_and_load_a_lineage(store_target: str) -> None:
    store = SqliteSessionStore(store_target)
    try:
        assert store.load_lineage("run-a") is None
        store.save_lineage("run-a", "m1", DOC)
        assert store.load_lineage("run-a") == DOC
        newer = {**DOC, "woke": 3, "steps": {"干活": "s-2", "复核": "s-3"}}
        store.save_lineage("run-a", "m2", newer)  # the same run written again: replaced
        store.save_lineage("run-b", "m1", {**DOC, "run": "run-b"})
        assert store.load_lineage("run-a") == newer
        assert store.load_lineage("run-b") == {**DOC, "run": "run-b"}
        with pytest.raises(ValueError, match="run id"):
            store.save_lineage("", "m1", DOC)
    finally:
        store.close()


def test_a_store_at_0004_gains_the_lineages_table(store_target: str) -> None:
    assert migrate.upgrade(store_target, "0004") == (None, "0004")
    if store_target.startswith("postgresql"):
        migrate.upgrade(store_target)
    store = SqliteSessionStore(store_target)  # an embedded file upgrades itself on open
    try:
        assert migrate.current(store_target) == migrate.head()
        store.save_lineage("run-a", "m1", DOC)
        assert store.load_lineage("run-a") == DOC
    finally:
        store.close()
    assert migrate.downgrade(store_target, "0004") == (migrate.head(), "0004")
