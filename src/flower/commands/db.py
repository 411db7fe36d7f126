"""``flower db``: look at and upgrade the session store's schema.

Contributed by the default store plugin through ``flower_cli_commands``; only click is
imported here, SQLAlchemy and alembic load when a command runs.
"""

from __future__ import annotations

import sys

import click

EXIT_USAGE = 2


@click.group(name="db")
def db() -> None:
    """Inspect and upgrade the session store's schema.

    \b
      flower db current                 which schema revision ./runs/sessions.db is at
      flower db upgrade postgresql+psycopg://flower@db/flower
    """


@db.command(name="upgrade")
@click.argument("target", required=False, metavar="[URL]")
def upgrade_command(target: str | None) -> None:
    """Bring the database to the newest schema (needed for Postgres after a flower upgrade).

    URL is a sessions.db path or a database URL; the default is FLOWER_STORE_URL, else
    ./runs/sessions.db.
    """
    from flower.stores import migrate
    from flower.stores.url import display

    target = target or _default_target()
    before, after = _run(lambda: migrate.upgrade(target))
    if before == after:
        click.echo(f"{display(target)}: already at {after} (head)")
    else:
        click.echo(f"{display(target)}: upgraded {before or '(empty)'} -> {after}")


@db.command(name="current")
@click.argument("target", required=False, metavar="[URL]")
def current_command(target: str | None) -> None:
    """Show the schema revision the database is at, and whether it is the newest.

    URL is a sessions.db path or a database URL; the default is FLOWER_STORE_URL, else
    ./runs/sessions.db.
    """
    from flower.stores import migrate
    from flower.stores.url import display

    target = target or _default_target()
    revision = _run(lambda: migrate.current(target))
    head = migrate.head()
    if revision is None:
        state = "(empty: no flower schema yet)"
    elif revision == head:
        state = f"{revision} (head)"
    elif migrate.known(revision):
        state = f"{revision} (behind {head}: run `flower db upgrade`)"
    else:
        state = f"{revision} (unknown to this flower: written by a newer one)"
    click.echo(f"{display(target)}: {state}")


def _default_target() -> str:
    """``FLOWER_STORE_URL``, checked before anything is made (a bare word would become a
    SQLite file of that name here), else ``./runs/sessions.db``."""
    from flower.commands.startup import store_url_refusal
    from flower.stores.url import default_target

    refusal = store_url_refusal()
    if refusal is not None:
        click.echo(f"flower: {refusal}", err=True)
        sys.exit(EXIT_USAGE)
    return default_target()


def _run(work):  # type: ignore[no-untyped-def]
    from flower.stores.errors import StoreError

    try:
        return work()
    except StoreError as exc:
        click.echo(f"flower: {exc}", err=True)
        sys.exit(EXIT_USAGE)
