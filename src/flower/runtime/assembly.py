"""What a Runtime is assembled from: its policies, the environment, its session store.

Kept apart from the run loop (``runtime/runner.py``) because none of it runs per step.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claude_agent_sdk.types import SessionStore

    from flower.stores.trim import EphemeralPolicy, TrimPolicy

__all__ = ["build_store", "policy", "read_dotenv", "run_sync"]


def build_store(
    run_dir: Path,
    workspace: Path,
    trim: TrimPolicy | bool,
    ephemeral: EphemeralPolicy | bool,
    keep_denials: int,
) -> SessionStore:
    """The store the ``flower_session_store`` hook builds for these policies."""
    from flower.plugin_types import StoreSettings
    from flower.plugins import get_plugin_manager
    from flower.stores.prune import PrunePolicy
    from flower.stores.trim import EphemeralPolicy, TrimPolicy

    url = os.environ.get("FLOWER_STORE_URL") or None
    settings = StoreSettings(
        run_dir=run_dir,
        workspace=workspace,
        trim=trim if isinstance(trim, TrimPolicy) else TrimPolicy(enabled=bool(trim)),
        ephemeral=(
            ephemeral
            if isinstance(ephemeral, EphemeralPolicy)
            else EphemeralPolicy(enabled=bool(ephemeral))
        ),
        prune=PrunePolicy(keep_denials=keep_denials),
        url=url,
    )
    store = get_plugin_manager().hook.flower_session_store(settings=settings)
    if store is None:
        where = f"FLOWER_STORE_URL={url}" if url else f"{run_dir}/sessions.db"
        raise RuntimeError(
            f"no installed plugin builds a session store for {where}: install the plugin"
            " that serves it, or unset FLOWER_STORE_URL"
        )
    return store


def policy(value: Any, kind: type) -> Any:
    """``True`` -> the defaults, ``False`` -> the defaults switched off, else as given."""
    if value is True:
        return kind()
    if value is False or value is None:
        return kind(enabled=False)
    if not isinstance(value, kind):
        raise TypeError(f"expected {kind.__name__} or a bool, not {type(value).__name__}")
    return value


def read_dotenv(workspace: Path) -> list[str]:
    """Fill the environment's gaps from the ``.env`` files and Claude Code's settings.

    The lookup order is :func:`flower.kernel.env.load_environment`'s (the process wins,
    then ``$FLOWER_ENV``, ``./.env``, the workspace's, the user config's, then borrowed
    credential keys); returns what was loaded from where.
    """
    from flower.kernel.env import load_environment

    return load_environment(workspace)


def run_sync(make: Callable[[], Any]) -> Any:
    """Run the coroutine ``make()`` to completion from sync code, inside a loop or not."""
    import asyncio
    import concurrent.futures

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
