"""The context window of each model, learned once and kept, so no session waits for it.

flower plans a handoff against the window of the model in use, which the CLI knows and
the name does not (``claude-sonnet-4-5`` is 200,000 tokens, its name guesses 1M). Asking
the CLI (``get_context_usage()``) costs seven ``count_tokens`` calls and about a second
before the session's first request, in every session: each judge ruling, each side
question, each resume. So the figure is kept per model, in this process and across
processes (``${XDG_CACHE_HOME:-~/.cache}/flower/windows.json``), from what the CLI reports
anyway: every result's ``modelUsage`` carries the model's ``contextWindow``. Only a model
flower has never seen is asked about, once, after the session's first request is on its
way (the conservative plan holds until the answer comes).

The key is the endpoint and the model asked for (``spec.model``, else
``ANTHROPIC_MODEL``, else the CLI's default), since a gateway may serve other windows.
Nothing here raises: a cache that cannot be read or written is only a slower start.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["key_for", "known", "learn", "learn_from_result"]

_memory: dict[str, int] = {}
_lock = threading.Lock()


def _path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base).expanduser() / "flower" / "windows.json"


def key_for(model: str | None, environ: Mapping[str, str]) -> str:
    """The cache key of a session: its endpoint and the model it asks for."""
    endpoint = environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
    return f"{endpoint.rstrip('/')}|{model or environ.get('ANTHROPIC_MODEL') or ''}"


def _read(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): int(v) for k, v in data.items() if isinstance(v, int) and v > 0}


def known(key: str, environ: Mapping[str, str] | None = None) -> int | None:
    """The window learned for ``key``, in this process or an earlier one."""
    with _lock:
        if key in _memory:
            return _memory[key]
    found = _read(_path(environ)).get(key)
    if found:
        with _lock:
            _memory[key] = found
    return found


def learn(key: str, window: int | None, environ: Mapping[str, str] | None = None) -> None:
    """Keep ``window`` as ``key``'s (written through only when it is new or changed)."""
    if not isinstance(window, int) or window <= 0:
        return
    with _lock:
        if _memory.get(key) == window:
            return
        _memory[key] = window
    path = _path(environ)
    try:
        from flower.kernel.files import atomic_write

        data = _read(path)
        if data.get(key) == window:
            return
        data[key] = window
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    except (OSError, ValueError):
        pass  # only a slower start next time


def learn_from_result(key: str, model: str | None, model_usage: Any) -> int | None:
    """The main model's ``contextWindow`` from a result's ``modelUsage`` (the entry of
    ``model``, else the only one), kept as ``key``'s; the window, or ``None``."""
    if not isinstance(model_usage, dict) or not model_usage:
        return None
    entry = model_usage.get(model) if model else None
    if entry is None and len(model_usage) == 1:
        entry = next(iter(model_usage.values()))
    window = entry.get("contextWindow") if isinstance(entry, dict) else None
    if isinstance(window, int) and window > 0:
        learn(key, window)
        return window
    return None


def forget() -> None:
    """Drop what this process learned (tests)."""
    with _lock:
        _memory.clear()
