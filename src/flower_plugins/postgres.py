"""Sessions in Postgres: answers the session-store hook for a ``postgresql://`` URL.

Registered through the ``flower`` entry-point group, so it loads like any third-party
plugin and ``FLOWER_DISABLED_PLUGINS=postgres`` turns it off. Point ``FLOWER_STORE_URL``
at the database (``postgresql+psycopg://user@host:5432/db``; ``postgres://`` and
``postgresql://`` mean the same) and every Runtime keeps its sessions there, with the
same pruning, expiry and trimming as the embedded store. The driver comes with
``pip install 'flower[postgres]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    from claude_agent_sdk.types import SessionStore

    from flower.plugin_types import StoreSettings


@hookimpl
def flower_session_store(settings: StoreSettings) -> SessionStore | None:
    from flower.stores.url import configured_url, is_postgres

    url = configured_url(settings.url)
    if url is None or not is_postgres(url):
        return None
    require_driver()
    from flower_plugins.store import build

    return build(url, settings)


def require_driver() -> None:
    """Fail in one line, naming the extra to install, when psycopg is missing."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        from flower.stores.engine import missing_driver

        raise missing_driver("postgresql+psycopg://", exc) from None
