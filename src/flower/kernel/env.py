"""Where flower's credentials and endpoint come from, and how to show them safely.

The Runtime runs the bundled CLI with ``setting_sources=["project"]`` (portable: the
user's and the machine's local settings do not change an agent's behaviour; only the
project's own shared settings load), so the CLI never sees the ``env`` block of the
user's Claude Code settings, and an installed flower has no repository folder to keep a
``.env`` in. flower therefore gathers the few variables it needs itself, key by key,
the first source that has a non-empty value winning:

1. the process environment;
2. the file named by ``$FLOWER_ENV``;
3. ``./.env`` (the current folder);
4. the workspace's ``.env``;
5. ``${XDG_CONFIG_HOME:-~/.config}/flower/.env`` (what ``flower setup`` writes);
6. the credential and endpoint keys of Claude Code's ``settings.json`` ``env`` block,
   borrowed only when no credential was found above (a gateway's URL belongs with its
   token: mixing the user's own API key with a borrowed gateway URL would send the key
   to that gateway).

``FLOWER_DOTENV=0`` (also ``off``, ``false``, ``no``) turns all of it off: no file is
read and nothing is borrowed, the process environment is all there is. ``flower demo``
and the scripted model's printed environment set it, because an offline run that filled
its gaps from the user's files could pick up a real key, gateway or cloud switch.

An empty value never blocks a later source (``KEY=`` in a ``.env`` is a placeholder, not
a decision). Files are parsed by python-dotenv: ``export K=V``, quotes and trailing
comments behave as in a shell. Values are taken literally (no ``${VAR}`` expansion), so a
secret containing ``$`` arrives intact.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, MutableMapping
from pathlib import Path

__all__ = [
    "BORROWED_KEYS",
    "CREDENTIAL_KEYS",
    "DEFAULT_BASE_URL",
    "DOTENV_SWITCH",
    "env_files",
    "forget",
    "load_environment",
    "mask",
    "origin",
    "parse_env_file",
    "remember",
    "resolve",
    "show_path",
    "user_env_path",
]

#: The variables that authenticate a request, in the order the CLI prefers them.
CREDENTIAL_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
#: Switches that hand authentication to a cloud provider's own credentials.
PROVIDER_SWITCHES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
#: The model names the CLI reads, shown by ``-v``.
MODEL_KEYS = (
    "ANTHROPIC_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "CLAUDE_CODE_SUBAGENT_MODEL",
)
#: What may be borrowed from Claude Code's settings: how to reach and pay for a model.
BORROWED_KEYS = (*CREDENTIAL_KEYS, "ANTHROPIC_BASE_URL", *MODEL_KEYS)
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: ``FLOWER_DOTENV=0``: read no ``.env`` file and borrow nothing (see the module's doc).
DOTENV_SWITCH = "FLOWER_DOTENV"

PROCESS = "the environment"

#: key -> where load_environment() found the value it set (for ``-v``).
_origins: dict[str, str] = {}


def user_env_path(environ: Mapping[str, str] | None = None) -> Path:
    """``${XDG_CONFIG_HOME:-~/.config}/flower/.env``: one place that works for any install."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or str(_home(environ) / ".config")
    return Path(base).expanduser() / "flower" / ".env"


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or Path.home())


def show_path(path: Path, environ: Mapping[str, str] | None = None) -> str:
    """``path`` with the home folder written ``~``: shorter, and no user name in a paste."""
    environ = os.environ if environ is None else environ
    try:
        return "~/" + str(path.absolute().relative_to(_home(environ).absolute()))
    except ValueError:
        return str(path)


def env_files(
    workspace: str | Path | None, environ: Mapping[str, str] | None = None
) -> list[tuple[str, Path]]:
    """The ``.env`` files to read, highest priority first, as ``(label, path)``.

    A file reachable under two names (the workspace is the current folder) is listed once.
    """
    environ = os.environ if environ is None else environ
    if _sealed(environ):
        return []
    candidates: list[tuple[str, Path]] = []
    if named := environ.get("FLOWER_ENV", "").strip():
        candidates.append(("$FLOWER_ENV", Path(named).expanduser()))
    candidates.append(("./.env", Path.cwd() / ".env"))
    if workspace is not None:
        candidates.append(("the workspace's .env", Path(workspace).expanduser() / ".env"))
    candidates.append(("the user config", user_env_path(environ)))
    seen: set[Path] = set()
    out: list[tuple[str, Path]] = []
    for label, path in candidates:
        key = path.absolute().resolve() if path.exists() else path.absolute()
        if key in seen:
            continue
        seen.add(key)
        out.append((label, path))
    return out


def parse_env_file(path: Path) -> dict[str, str]:
    """A ``.env`` file's non-empty values, literally (python-dotenv's grammar, no ``${}``)."""
    from dotenv import dotenv_values

    values = dotenv_values(path, interpolate=False, encoding="utf-8")
    return {k: v for k, v in values.items() if v is not None and v.strip()}


def claude_settings_path(environ: Mapping[str, str] | None = None) -> Path:
    """Claude Code's user settings: under ``CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    environ = os.environ if environ is None else environ
    config = environ.get("CLAUDE_CONFIG_DIR") or str(_home(environ) / ".claude")
    return Path(config).expanduser() / "settings.json"


def _claude_settings_env(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    block = data.get("env") if isinstance(data, dict) else None
    if not isinstance(block, dict):
        return {}
    return {
        k: str(v)
        for k, v in block.items()
        if k in BORROWED_KEYS and isinstance(v, str | int) and str(v).strip()
    }


def _set(environ: Mapping[str, str], key: str) -> bool:
    return bool(environ.get(key, "").strip())


def _switched_on(value: str) -> bool:
    return value.strip().lower() not in ("", "0", "false", "no", "off")


def _sealed(environ: Mapping[str, str]) -> bool:
    """``FLOWER_DOTENV`` switched off: the process environment is the only source."""
    value = environ.get(DOTENV_SWITCH, "").strip()
    return bool(value) and not _switched_on(value)


def resolve(
    workspace: str | Path | None, environ: Mapping[str, str] | None = None
) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """What :func:`load_environment` would set, without setting it.

    Returns ``({key: (value, source label)}, notes)``; ``notes`` are lines about files
    that could not be read.
    """
    environ = dict(os.environ if environ is None else environ)
    chosen: dict[str, tuple[str, str]] = {}
    notes: list[str] = []
    if _sealed(environ):
        return chosen, notes

    def missing(key: str) -> bool:
        return key not in chosen and not _set(environ, key)

    for label, path in env_files(workspace, environ):
        where = show_path(path, environ)
        if not path.is_file():
            if label == "$FLOWER_ENV":
                notes.append(f"$FLOWER_ENV names {where}, which is not a file; ignored")
            continue
        try:
            values = parse_env_file(path)
        except (OSError, UnicodeDecodeError) as exc:
            notes.append(f"cannot read {where}: {getattr(exc, 'strerror', None) or exc}")
            continue
        for key, value in values.items():
            if missing(key):
                chosen[key] = (value, where)
    has_credential = not all(missing(k) for k in CREDENTIAL_KEYS) or any(
        _switched_on(environ.get(k, "")) or _switched_on(chosen.get(k, ("", ""))[0])
        for k in PROVIDER_SWITCHES
    )
    if not has_credential:
        settings = claude_settings_path(environ)
        where = f"{show_path(settings, environ)} (env block)"
        for key, value in _claude_settings_env(settings).items():
            if missing(key):
                chosen[key] = (value, where)
    return chosen, notes


def load_environment(
    workspace: str | Path | None = None, environ: MutableMapping[str, str] | None = None
) -> list[str]:
    """Fill the gaps in the process environment from the sources above, once per key.

    Idempotent: a key already set (by the shell or an earlier call) is left alone.
    Returns one line per key set, naming its source but never its value, plus a line
    for each file that could not be read: what ``-v`` prints.
    """
    target = os.environ if environ is None else environ
    chosen, notes = resolve(workspace, target)
    lines = list(notes)
    for key, (value, where) in chosen.items():
        target[key] = value
        _origins[key] = where
        lines.append(f"{key} from {where}")
    return lines


def origin(key: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Where ``key``'s current value came from, or ``None`` when it is not set."""
    environ = os.environ if environ is None else environ
    if not _set(environ, key):
        return None
    return _origins.get(key, PROCESS)


def remember(key: str, where: str) -> None:
    """Record that ``key`` was set from ``where`` (``flower setup`` applying a saved key)."""
    _origins[key] = where


def forget(key: str) -> None:
    _origins.pop(key, None)


_PREFIX = re.compile(r"^(?:[A-Za-z]{2,5}-){1,2}")


def mask(secret: str) -> str:
    """Enough of a secret to tell two apart, never enough to use: ``sk-ant-...abcd``.

    The well-known prefix (``sk-ant-``) says what kind of key it is; the last four
    characters are shown only for secrets of 16 characters or more (a gateway's short
    token would otherwise show a third of itself).
    """
    secret = secret.strip()
    prefix_match = _PREFIX.match(secret)
    prefix = prefix_match.group(0) if prefix_match else ""
    rest = secret[len(prefix) :]
    if len(secret) < 16 or len(rest) < 12:
        return f"{prefix}***"
    return f"{prefix}...{rest[-4:]}"
