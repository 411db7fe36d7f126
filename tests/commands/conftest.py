"""The Postgres fixtures of the store tests (``pg_url``: a fresh schema per test)."""

from ..stores.conftest import pg_schemas, pg_url  # noqa: F401
