"""The default session store: ``PruningSessionStore`` over SQLite at ``run_dir/sessions.db``.

Also answers a ``sqlite:///`` URL in ``FLOWER_STORE_URL``, and refuses any other URL
that no installed plugin claimed with a one-line error, instead of silently writing to
the default file; so is a bare word or a file whose folder does not exist (opening the
store would create them). Adds ``flower db upgrade`` and ``flower db current``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    import click
    from claude_agent_sdk.types import SessionStore

    from flower.plugin_types import StoreSettings


@hookimpl(trylast=True)
def flower_session_store(settings: StoreSettings) -> SessionStore:
    from flower.stores.errors import StoreError
    from flower.stores.url import configured_url, is_postgres, is_sqlite, unknown_scheme

    url = configured_url(settings.url)
    if url is not None and is_postgres(url):
        raise StoreError(
            "FLOWER_STORE_URL names a Postgres database but the postgres plugin is not "
            "loaded: run pip install 'flower[postgres]' and check FLOWER_DISABLED_PLUGINS"
        )
    if url is not None and not is_sqlite(url):
        raise unknown_scheme(url)
    if url is not None:  # before the engine creates the file (and folders) it names
        from flower.stores.url import store_url_problem

        problem = store_url_problem(url)
        if problem is not None:
            raise StoreError(problem)
    return build(url or settings.run_dir / "sessions.db", settings)


def build(target: str | Path, settings: StoreSettings) -> SessionStore:
    """The pruning store at ``target`` (a path or URL) with the Runtime's policies."""
    from flower.stores.prune import PruningSessionStore

    return PruningSessionStore(
        target,
        workspace=settings.workspace,
        policy=settings.trim,
        ephemeral=settings.ephemeral,
        prune=settings.prune,
    )


@hookimpl(trylast=True)
def flower_cli_commands() -> Iterable[click.Command]:
    from flower.commands.db import db

    return [db]
