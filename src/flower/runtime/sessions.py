"""What the Runtime asks its session store: the workspace's project key, whether a
session is still there, its context size, copying sessions to a moved workspace, and how
long a session's prompt cache lives.

Split from :mod:`flower.runtime.runner` because these are questions about the store, not
about running a step: each goes through the SDK's ``SessionStore`` protocol or one of
flower's stores' additions (``copy_sessions``, ``context_tokens``, ``cache_lifetimes``),
and answers "unknown" when a third-party store lacks it. :class:`SessionQueries` is a
base of :class:`~flower.runtime.runner.Runtime`, which sets ``store`` and ``workspace``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.runtime.assembly import run_sync

if TYPE_CHECKING:
    from claude_agent_sdk.types import SessionStore

__all__ = ["SessionQueries"]


class SessionQueries:
    """The Runtime's questions to its session store (see the module's docstring)."""

    workspace: Path
    store: SessionStore

    @property
    def project_key(self) -> str:
        """The session store's key for this workspace (the SDK derives it from the path:
        the same folder under another path finds none of its sessions)."""
        from claude_agent_sdk import project_key_for_directory

        return project_key_for_directory(str(self.workspace))

    def adopt_sessions(self, old_workspace: str | Path, session_ids: list[str]) -> int:
        """Copy ``session_ids`` from where ``old_workspace`` kept them to this workspace's
        project key (the folder moved, or this is a copy of it); how many were copied.

        0 when the store cannot copy (a third-party store without ``copy_sessions``): the
        steps then start fresh, which the lineage's notice says.
        """
        from claude_agent_sdk import project_key_for_directory

        copier = getattr(self.store, "copy_sessions", None)
        if copier is None or not session_ids:
            return 0
        old = project_key_for_directory(str(old_workspace))

        async def copy() -> int:
            return int(await copier(old, self.project_key, list(session_ids)))

        return int(run_sync(copy))

    def has_session(self, sid: str | None) -> bool:
        """Whether ``sid`` is still in the session store (so it can be resumed).

        A lineage file can outlive ``sessions.db``, and resuming a session that is gone
        fails only after the CLI has started; check here first.
        """
        if not sid:
            return False
        project = self.project_key
        store = self.store

        async def look() -> bool:
            lister = getattr(store, "list_sessions", None)
            if lister is not None:
                try:
                    return any(s.get("session_id") == sid for s in await lister(project))
                except NotImplementedError:
                    pass
            return bool(await store.load({"project_key": project, "session_id": sid}))

        return bool(run_sync(look))

    def context_of(self, session_id: str | None) -> int:
        """The context size (tokens) of ``session_id``'s latest model reply, from the
        store; 0 when unknown (no such session, or a store that does not keep it).

        What the wake-up line shows ("干活上下文 80.2K"): the number that tells a human
        a session is nearing its window, read without loading the transcript.
        """
        reader = getattr(self.store, "context_tokens", None)
        if not session_id or reader is None:
            return 0
        key = {"project_key": self.project_key, "session_id": session_id}

        async def read() -> Any:
            return await reader(key)

        tokens = run_sync(read)
        return int(tokens) if isinstance(tokens, int) and tokens > 0 else 0

    def _cache_marks(self, session_id: str | None, ttl: str | None) -> None:
        """Tell the store the TTL the CLI's cache marks carry in the session about to
        load ``session_id`` (``None``: not known, so the store places no mark of its
        own: ``stores/anchor.py``)."""
        self._tell_store("cache_ttls", session_id, ttl)

    def _cache_lives(self, session_id: str | None, seconds: float | None) -> None:
        """Tell the store how long the prompt cache ``session_id`` just wrote lives:
        the hour it asked for, else the default (``stores/trim.py``: the next load
        within that time keeps old context as it was, the cache being warm)."""
        self._tell_store("cache_lifetimes", session_id, seconds)

    def _tell_store(self, table: str, session_id: str | None, value: Any) -> None:
        """Set (or, for a false ``value``, forget) ``session_id`` in the store's dict
        ``table``, where the store has one (flower's stores; a bare one has none)."""
        known = getattr(self.store, table, None)
        if not session_id or not isinstance(known, dict):
            return
        if value:
            known[session_id] = value
        else:
            known.pop(session_id, None)
