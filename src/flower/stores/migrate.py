"""Bring a session database to the schema this flower expects, or say why not.

The rules (issue 3):

- a new, empty database is brought to head on first use;
- an embedded SQLite database at an older revision is upgraded in place (it belongs to
  this run directory, nobody else is surprised);
- a shared server database (Postgres) at an older revision is left alone: flower stops
  with a one-line message to run ``flower db upgrade``, because other machines may still
  run the older flower against it;
- a database at a revision this flower does not know (written by a newer flower) is
  refused, as is a database that has tables but no schema version.

The alembic environment ships inside the wheel as ``flower/_migrations``; from a
checkout (an editable install) it is the top-level ``migrations/`` folder.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from flower.kernel.version import __version__
from flower.stores.engine import WRITE, describe, make_engine
from flower.stores.errors import StoreError
from flower.stores.schema import SCHEMA_REVISION, TABLES, VERSION_TABLE
from flower.stores.url import display, sqlite_path, to_url

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

#: Postgres advisory lock held while checking and upgrading, so two processes starting
#: on a fresh database do not both create the tables.
_PG_LOCK = 0x666C6F776572  # "flower"


def migrations_dir() -> Path:
    """The alembic environment: inside the installed package first, then the checkout."""
    package = Path(__file__).resolve().parents[1]  # the installed flower package
    for candidate in (package / "_migrations", package.parents[1] / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise StoreError(
        f"flower's database migrations are missing (looked in {package / '_migrations'}): "
        "reinstall flower"
    )


def alembic_config(connection: sa.Connection | None = None, url: str | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@cache
def scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def head() -> str:
    revision = scripts().get_current_head()
    assert revision is not None, "migrations/versions holds no revision"
    return revision


def known(revision: str) -> bool:
    from alembic.util import CommandError

    try:
        return scripts().get_revision(revision) is not None
    except CommandError:
        return False


def current_revision(connection: sa.Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(
        connection, opts={"version_table": VERSION_TABLE}
    ).get_current_revision()


def _stored_revision(connection: sa.Connection) -> str | None:
    """The revision in the version table, read with plain SQL; ``None`` when there is no
    table or not exactly one row (alembic's own reading then decides what that means)."""
    if not sa.inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    return str(rows[0][0]) if len(rows) == 1 else None


def ensure_schema(engine: sa.Engine, *, upgrade_old: bool) -> None:
    """Check (and create or upgrade) the schema of ``engine``'s database.

    :param upgrade_old: Upgrade a database at an older revision in place (embedded
        SQLite) instead of asking the user to run ``flower db upgrade`` (a server).
    """
    url = engine.url.render_as_string(hide_password=False)
    try:
        with engine.connect().execution_options(**WRITE) as connection, connection.begin():
            _serialize_schema_changes(connection)
            if _stored_revision(connection) == SCHEMA_REVISION:
                return  # the usual case, answered without alembic
            current = current_revision(connection)
            target = head()
            if current == target:
                return
            if current is None:
                found = set(sa.inspect(connection).get_table_names()) & set(TABLES)
                if found:
                    raise StoreError(
                        f"{display(url)} has tables {sorted(found)} but no flower schema "
                        "version: it was not created by flower; point the store elsewhere"
                    )
            elif not known(current):
                raise StoreError(
                    f"{display(url)} is at schema revision {current!r}, which this flower "
                    f"({__version__}) does not know: it was written by a newer flower; "
                    "upgrade flower or use another database"
                )
            elif not upgrade_old:
                raise StoreError(
                    f"{display(url)} is at schema revision {current}, this flower needs "
                    f"{target}: run `flower db upgrade {display(url)}`"
                )
            _upgrade(connection, "head")
    except StoreError:
        raise
    except sa.exc.SQLAlchemyError as exc:
        raise describe(exc, url) from None


def _serialize_schema_changes(connection: sa.Connection) -> None:
    """Let one process at a time check or change the schema of a shared server database.

    Held until the transaction ends; the others then see the revision it left. SQLite
    needs nothing: its write transaction (``WRITE``) already excludes other writers.
    """
    if connection.dialect.name == "postgresql":
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})


def _upgrade(connection: sa.Connection, revision: str) -> None:
    from alembic import command

    command.upgrade(alembic_config(connection), revision)


def upgrade(target: str | Path, revision: str = "head") -> tuple[str | None, str | None]:
    """``flower db upgrade``: move the database at ``target`` to ``revision``.

    :return: The revisions before and after.
    """
    return _migrate(target, revision, "upgrade")


def downgrade(target: str | Path, revision: str) -> tuple[str | None, str | None]:
    """Move the database at ``target`` down to ``revision`` (tests and rollbacks)."""
    return _migrate(target, revision, "downgrade")


def _migrate(target: str | Path, revision: str, direction: str) -> tuple[str | None, str | None]:
    from alembic import command
    from alembic.util import CommandError

    url = to_url(target)
    engine = make_engine(url)
    try:
        with engine.connect().execution_options(**WRITE) as connection, connection.begin():
            _serialize_schema_changes(connection)
            before = current_revision(connection)
            if before is not None and not known(before):
                raise StoreError(
                    f"{display(url)} is at schema revision {before!r}, which this flower "
                    "does not know: upgrade flower instead"
                )
            config = alembic_config(connection)
            try:
                getattr(command, direction)(config, revision)
            except CommandError as exc:
                raise StoreError(f"cannot {direction} {display(url)}: {exc}") from None
            return before, current_revision(connection)
    except StoreError:
        raise
    except sa.exc.SQLAlchemyError as exc:
        raise describe(exc, url) from None
    finally:
        engine.dispose()


def current(target: str | Path) -> str | None:
    """``flower db current``: the revision the database at ``target`` is at (``None``: empty)."""
    url = to_url(target)
    path = sqlite_path(url)
    if path is not None and not path.exists():
        raise StoreError(f"no session store at {path} yet: flower creates it on first use")
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return current_revision(connection)
    except sa.exc.SQLAlchemyError as exc:
        raise describe(exc, url) from None
    finally:
        engine.dispose()
