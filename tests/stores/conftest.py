"""Fixtures for the store tests: a fresh Postgres schema per store, transcript builders.

The Postgres tests use the server at ``FLOWER_TEST_PG_URL`` (default the local one,
127.0.0.1:5432, database ``test``). Where no server answers they skip with the reason,
except under ``CI=true``, where a missing server fails them: CI must prove Postgres.

A test that must hold on both backends takes ``store_target``: it runs once on a SQLite
file and once on a fresh Postgres schema (``[sqlite]`` / ``[postgres]``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

import flower.roles.ephemeral  # noqa: F401  registers the glance classifier expiry uses
from flower.testing import need

PG_URL = os.environ.get("FLOWER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@cache
def _pg_problem() -> str | None:
    try:
        import psycopg
    except ImportError as exc:
        return f"psycopg is not installed ({exc})"
    try:
        with psycopg.connect(_libpq(PG_URL), connect_timeout=3):
            return None
    except Exception as exc:  # any failure means "no usable server"
        return f"no PostgreSQL at {PG_URL}: {str(exc).strip().splitlines()[0]}"


def _libpq(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


@pytest.fixture
def pg_schemas() -> Iterator[Callable[[], str]]:
    """Make fresh Postgres schemas; returns a factory of store URLs, each its own schema."""
    problem = _pg_problem()
    need(problem is None, problem or "")
    import psycopg

    made: list[str] = []

    def fresh() -> str:
        name = f"flower_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        made.append(name)
        return f"{PG_URL}?options=-csearch_path%3D{name}"

    yield fresh
    with psycopg.connect(_libpq(PG_URL), autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture
def pg_url(pg_schemas: Callable[[], str]) -> str:
    return pg_schemas()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store goes: a SQLite file, then (a second run of the test) a Postgres schema."""
    if request.param == "postgres":
        url: str = request.getfixturevalue("pg_url")
        return url
    return str(tmp_path / "s.db")
