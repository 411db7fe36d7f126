"""What a command says when a Runtime cannot start, or a session id is not where it looks.

Shared by ``flower once`` and ``flower "..."``: both build a Runtime from user input
(``-w``, ``-r``, ``FLOWER_STORE_URL``), and both owe the user one line that names the
thing that failed rather than a bare ``[Errno 20] Not a directory: '...'``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flower.runtime.runner import Runtime

__all__ = ["session_elsewhere", "startup_problem", "store_url_refusal", "unwritable_workspace"]


def startup_problem(exc: BaseException, run_dir: Path) -> str:
    """One line for an exception raised while a Runtime was being built.

    An ``OSError`` on a path is said in terms of what that path is for: the run folder
    (which holds the session store and the manifest) or the session store itself.
    """
    if not isinstance(exc, OSError) or not exc.filename:
        return str(exc)
    where = Path(exc.filename).absolute()
    run_dir = run_dir.expanduser().absolute()
    why = (exc.strerror or str(exc)).lower()
    if where == run_dir or run_dir.is_relative_to(where) or where.is_relative_to(run_dir):
        return (
            f"cannot create the run folder {run_dir}, which holds the session store"
            f" (sessions.db) and manifest.json: {why}; pass another -r/--run-dir"
        )
    return f"cannot create the session store at {where}: {why}; check FLOWER_STORE_URL"


def store_url_refusal() -> str | None:
    """One line when ``FLOWER_STORE_URL`` cannot be used, else ``None``; said before any
    folder or file is made, because opening a store creates what the value names
    (:func:`flower.stores.url.store_url_problem`).

    A scheme flower does not know is refused here only when no installed plugin besides
    flower's own implements ``flower_session_store``: another plugin may serve it, and
    the store hook itself refuses it otherwise.
    """
    import os

    from flower.stores.url import KNOWN_SCHEMES, URL_VARIABLE, scheme_of, store_url_problem

    value = os.environ.get(URL_VARIABLE, "")
    scheme = scheme_of(value.strip())
    unknown = scheme is not None and scheme.split("+")[0] not in KNOWN_SCHEMES
    return store_url_problem(value, plugin_schemes=unknown and _other_stores())


#: Plugins shipped with flower that build session stores (they serve KNOWN_SCHEMES only).
_OWN_STORES = ("flower_plugins.store", "flower_plugins.postgres")


def _other_stores() -> bool:
    """Whether a plugin that is not flower's own implements ``flower_session_store``."""
    from flower.plugins import get_plugin_manager

    impls = get_plugin_manager().hook.flower_session_store.get_hookimpls()
    return any(getattr(impl.plugin, "__name__", "") not in _OWN_STORES for impl in impls)


def unwritable_workspace(workspace: Path) -> str | None:
    """One line when the main job cannot write in ``workspace`` (its workbench
    ``.flower`` is there, and so is the work), else ``None``. Asked before the run
    folder, the session store or ``run.lock`` are made, so a refused start leaves nothing
    behind (it used to end in a traceback from deep inside the workflow, the lock and the
    store already made in a writable ``-r``)."""
    import os

    for target in (workspace, workspace / ".flower"):
        if target.is_dir() and not os.access(target, os.W_OK | os.X_OK):
            return (
                f"cannot write in {target}: the main job keeps its brief, goal and notes in"
                f" {workspace / '.flower'} and works in the folder; make it writable, or"
                " pass another -w/--workspace"
            )
    return None


def session_elsewhere(rt: Runtime, session_id: str) -> str | None:
    """The workspace under which ``session_id`` is stored, when it is not ``rt``'s.

    Resuming looks a session up under the workspace's project key, so the right id
    with the wrong ``-w`` reads as "no such session". The transcript's own ``cwd``
    names the workspace; the project key is the fallback.
    """
    from functools import partial

    from claude_agent_sdk.types import SessionKey

    from flower.runtime.assembly import run_sync

    finder = getattr(rt.store, "projects_of", None)
    if finder is None:
        return None
    try:
        keys: list[str] = run_sync(lambda: finder(session_id))
        for key in keys:
            if key == rt.project_key:
                continue
            where = SessionKey(project_key=key, session_id=session_id)
            entries: list[Any] = run_sync(partial(rt.store.load, where)) or []
            for entry in entries:
                cwd = entry.get("cwd") if isinstance(entry, dict) else None
                if isinstance(cwd, str) and cwd:
                    return cwd
            return f"the project {key}"
    except Exception:  # a hint on the way to an error: never the cause of another one
        return None
    return None


def lost_store(workspace: Path, run_dir: Path, workbench_root: Path) -> tuple[str, str] | None:
    """``(run id, one line)`` when this folder's run has lost its embedded store: the
    lineage or the workbench names a run, flower kept its state outside the workspace
    (``records/state_copy.py``), and ``run_dir/sessions.db`` is gone. ``None`` otherwise,
    and always with ``FLOWER_STORE_URL`` set (a server's store is not a file to lose)."""
    import os

    from flower.records.lineage import continuing_run
    from flower.records.runstate import marked_run
    from flower.records.state_copy import load_state, state_path

    if os.environ.get("FLOWER_STORE_URL") or (run_dir / "sessions.db").exists():
        return None
    run = continuing_run(run_dir, workspace) or marked_run(workbench_root)
    if not run or not load_state(run):
        return None
    return run, (
        f"this run's store {run_dir / 'sessions.db'} is gone, and with it the run's budget,"
        f" verdicts and conversations; flower kept its budget, verdicts and frozen documents"
        f" in {state_path(run)}: put the store back, or run again with --recover to carry"
        " on from that copy (the conversations start over), or --new to start over"
    )


#: Variables that send the CLI through a proxy: then a direct handshake proves nothing.
_PROXIES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def dead_endpoint(workspace: Path) -> str | None:
    """One line when nothing answers at the API's address (no name, or no connection
    within 5 s), else ``None``: the CLI would otherwise retry ten times over three and a
    half minutes before it said "connection refused". Only with credentials known (else
    setup comes first) and without a proxy (a direct handshake would prove nothing)."""
    import os

    from flower.kernel.credentials import check_credentials
    from flower.runtime.assembly import read_dotenv
    from flower.runtime.resilience import endpoint, reachable

    read_dotenv(workspace)  # what the run will use: the .env files fill the gaps
    try:
        check_credentials()
    except RuntimeError:
        return None
    if any(os.environ.get(name) for name in _PROXIES):
        return None
    host, port = endpoint()
    if reachable(host, port, timeout=5.0):
        return None
    named = os.environ.get("ANTHROPIC_BASE_URL")
    where = f" (ANTHROPIC_BASE_URL={named})" if named else ""
    return (
        f"nothing answers at {host}:{port}{where}: check the address and the network"
        " (flower setup tests the endpoint and the key), then run flower again"
    )
