"""The schema's life: created on first use, upgraded in place (SQLite) or on request
(Postgres), walked down and up with the data kept, refused when unknown, and found
from an installed wheel, not only from a checkout."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from flower.cli import main
from flower.stores import migrate
from flower.stores.errors import StoreError
from flower.stores.sqlite import SqliteSessionStore
from flower.stores.url import to_url

KEY = {"project_key": "proj", "session_id": "s1"}
SUB = {**KEY, "subpath": "subagents/agent-1"}
ENTRIES = [
    {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "build it"}},
    {
        "type": "assistant",
        "uuid": "a1",
        "message": {"id": "m1", "usage": {"input_tokens": 900, "cache_read_input_tokens": 100}},
    },
    {"type": "custom-title", "customTitle": "building"},
]


def fill(target: str | Path) -> None:
    store = SqliteSessionStore(target)
    asyncio.run(store.append(KEY, ENTRIES))
    asyncio.run(store.append(SUB, ENTRIES[:1]))
    store.close()


def snapshot(target: str | Path) -> tuple:
    store = SqliteSessionStore(target)
    try:
        return (
            asyncio.run(store.load(KEY)),
            asyncio.run(store.load(SUB)),
            asyncio.run(store.list_session_summaries("proj"))[0]["data"],
            asyncio.run(store.list_subkeys(KEY)),
            asyncio.run(store.context_tokens(KEY)),
        )
    finally:
        store.close()


def columns(target: str | Path, table: str) -> set[str]:
    engine = sa.create_engine(to_url(target))
    try:
        return {c["name"] for c in sa.inspect(engine).get_columns(table)}
    finally:
        engine.dispose()


def test_a_new_database_is_brought_to_head_on_first_use(tmp_path: Path) -> None:
    db = tmp_path / "runs" / "sessions.db"
    SqliteSessionStore(db).close()
    assert migrate.current(db) == migrate.head() == "0009"


def test_the_revision_opened_without_alembic_is_alembics_head() -> None:
    """A new migration must move SCHEMA_REVISION too, or every store at the old head would
    skip the upgrade that adds its tables."""
    from flower.stores.schema import SCHEMA_REVISION

    assert SCHEMA_REVISION == migrate.head()


def test_sqlite_walks_down_and_up_with_data_kept_and_upgrades_in_place(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    fill(db)
    before = snapshot(db)
    assert before[4] == 1000

    assert migrate.downgrade(db, "0001") == ("0009", "0001")
    assert "context_tokens" not in columns(db, "meta")
    assert sqlite3.connect(db).execute("SELECT count(*) FROM entries").fetchone() == (4,)
    assert migrate.upgrade(db) == ("0001", "0009")
    assert snapshot(db) == before  # context_tokens re-derived from the entries

    migrate.downgrade(db, "0001")
    assert snapshot(db) == before  # opening an old embedded database upgrades it in place
    assert migrate.current(db) == "0009"


@pytest.mark.postgres
def test_postgres_walks_down_and_up_with_data_kept_and_is_never_upgraded_silently(
    pg_url: str,
) -> None:
    fill(pg_url)
    before = snapshot(pg_url)

    migrate.downgrade(pg_url, "0001")
    assert "context_tokens" not in columns(pg_url, "meta")
    with pytest.raises(StoreError) as caught:
        SqliteSessionStore(pg_url)
    message = str(caught.value)
    assert "\n" not in message and "at schema revision 0001, this flower needs 0009" in message
    assert "run `flower db upgrade postgresql+psycopg://" in message
    assert migrate.current(pg_url) == "0001"  # nothing was touched

    assert migrate.upgrade(pg_url) == ("0001", "0009")
    assert snapshot(pg_url) == before


def test_a_revision_from_a_newer_flower_is_refused(store_target: str) -> None:
    fill(store_target)
    engine = sa.create_engine(to_url(store_target))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE flower_schema_version SET version_num = 'f00dface'"))
    engine.dispose()

    with pytest.raises(StoreError) as caught:
        SqliteSessionStore(store_target)
    assert "'f00dface', which this flower (0.1.0) does not know" in str(caught.value)
    with pytest.raises(StoreError, match="upgrade flower instead"):
        migrate.upgrade(store_target)


def test_flower_db_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FLOWER_STORE_URL", raising=False)
    runner = CliRunner()

    missing = runner.invoke(main, ["db", "current"])
    assert missing.exit_code == 2 and "no session store at" in missing.output
    assert not (tmp_path / "runs" / "sessions.db").exists()

    done = runner.invoke(main, ["db", "upgrade"])
    assert done.exit_code == 0, done.output
    assert done.output.strip() == "runs/sessions.db: upgraded (empty) -> 0009"
    assert runner.invoke(main, ["db", "current"]).output.strip() == "runs/sessions.db: 0009 (head)"

    migrate.downgrade("runs/sessions.db", "0001")
    behind = runner.invoke(main, ["db", "current", "runs/sessions.db"]).output
    assert "0001 (behind 0009: run `flower db upgrade`)" in behind

    monkeypatch.setenv("FLOWER_STORE_URL", "redis://cache/0")
    refused = runner.invoke(main, ["db", "upgrade"])
    assert refused.exit_code == 2
    assert refused.output.count("\n") == 1 and "unknown session store URL" in refused.output

    (tmp_path / "junk.db").write_text("not sqlite\n" * 100)
    corrupt = runner.invoke(main, ["db", "upgrade", "junk.db"])
    assert corrupt.exit_code == 2 and "is not a usable SQLite database" in corrupt.output
    assert (tmp_path / "junk.db").read_text() == "not sqlite\n" * 100


UPGRADE_FROM_WHEEL = r"""
import sys
from pathlib import Path
import flower
from flower.stores import migrate
print(flower.__file__)
print(migrate.migrations_dir())
print(migrate.upgrade(Path(sys.argv[1])))
"""


def test_migrations_ship_inside_the_wheel_and_run_from_it(
    flower_wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(flower_wheel) as archive:
        names = archive.namelist()
        assert "flower/_migrations/env.py" in names
        assert "flower/_migrations/versions/0001_initial.py" in names
        archive.extractall(site)

    db = tmp_path / "from-wheel.db"
    ran = subprocess.run(
        [sys.executable, "-c", UPGRADE_FROM_WHEEL, str(db)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    package, migrations, result = ran.stdout.splitlines()
    assert Path(package).is_relative_to(site)
    assert Path(migrations) == site / "flower" / "_migrations"
    assert result == "(None, '0009')"


def test_an_applications_own_alembic_history_is_left_alone(store_target: str) -> None:
    engine = sa.create_engine(to_url(store_target))
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
        conn.execute(sa.text("INSERT INTO alembic_version VALUES ('app_rev_42')"))
    engine.dispose()

    SqliteSessionStore(store_target).close()  # flower's schema goes in beside the app's

    assert migrate.current(store_target) == migrate.head()
    engine = sa.create_engine(to_url(store_target))
    with engine.connect() as conn:
        assert (
            conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
            == "app_rev_42"
        )
    engine.dispose()


@pytest.mark.postgres
def test_two_upgrades_at_once_on_postgres_take_turns(pg_url: str) -> None:
    fill(pg_url)
    migrate.downgrade(pg_url, "0001")
    barrier = threading.Barrier(2)

    def upgrade() -> tuple[str | None, str | None]:
        barrier.wait()
        return migrate.upgrade(pg_url)

    with ThreadPoolExecutor(2) as pool:
        results = sorted(f.result() for f in [pool.submit(upgrade), pool.submit(upgrade)])

    assert results == [("0001", "0009"), ("0009", "0009")]
