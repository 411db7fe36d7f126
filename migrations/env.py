"""Alembic environment for flower's session store.

flower runs migrations itself (``flower db upgrade``, and on first use of a database),
handing this environment an open connection in ``config.attributes["connection"]``
so the check and the upgrade happen in one transaction. Run standalone, it opens
``sqlalchemy.url`` with flower's own engine settings.
"""

from __future__ import annotations

from alembic import context

from flower.stores.engine import make_engine
from flower.stores.schema import VERSION_TABLE, metadata

config = context.config


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        version_table=VERSION_TABLE,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=metadata,
        literal_binds=True,
        version_table=VERSION_TABLE,
    )
    with context.begin_transaction():
        context.run_migrations()
elif config.attributes.get("connection") is not None:
    _run(config.attributes["connection"])
else:
    engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()
