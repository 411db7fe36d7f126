"""Refuse to start without credentials, before any process is spawned or money spent.

Without this check a missing key surfaces minutes later, as a "Not logged in" from
deep inside the CLI, after a workflow has already asked the human its questions. The
Runtime calls :func:`check_credentials` first in its constructor, right after reading
the ``.env`` files and before anything is written to disk (no run folder, store or
workbench is created for a run that cannot start).

What ``flower -v`` prints (:func:`effective_endpoint`: endpoint, model, which credential
and from where) needs that check, so it lives here too: :mod:`flower.kernel.env` finds
the values and names the keys, this module imports it, never the reverse.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from flower.kernel.env import (
    CREDENTIAL_KEYS,
    DEFAULT_BASE_URL,
    MODEL_KEYS,
    PROCESS,
    PROVIDER_SWITCHES,
    load_environment,
    mask,
    origin,
)

#: Every source :func:`check_credentials` accepts, after ``flower.kernel.env`` has filled
#: the environment from the ``.env`` files and Claude Code's settings. One line, built
#: from the same tuples the code reads, so the message cannot drift from the code.
ACCEPTED = (
    f"run `flower setup`, or set {CREDENTIAL_KEYS[0]} (or {CREDENTIAL_KEYS[1]} with"
    f" ANTHROPIC_BASE_URL for a gateway, or {CREDENTIAL_KEYS[2]}) in the environment or a"
    " .env file ($FLOWER_ENV, ./.env, the workspace's .env,"
    ' ${XDG_CONFIG_HOME:-~/.config}/flower/.env; the "env" block of Claude Code\'s'
    " settings.json is borrowed too), or "
    + " / ".join(f"{s}=1" for s in PROVIDER_SWITCHES)
    + " with that cloud's credentials; a Claude Code login or apiKeyHelper works as well"
)
#: Added when a ``claude`` command is on PATH: only then can the user run it.
LOGIN_HINT = " (`claude auth login` signs in)"
#: Said last: a newcomer without a key can still see a whole run, offline and free.
DEMO_HINT = "; `flower demo` shows a whole run offline, no key needed"


class MissingCredentials(RuntimeError):
    """No credential the CLI could use; the message says what works (a ``RuntimeError``,
    so callers written for the seed's contract still catch it)."""


def missing_message(env: Mapping[str, str] | None = None) -> str:
    """The one-line error for no credentials, suggesting only commands that exist here."""
    env = os.environ if env is None else env
    hint = LOGIN_HINT if shutil.which("claude", path=env.get("PATH")) else ""
    return f"no credentials for the Claude API: {ACCEPTED}{hint}{DEMO_HINT}"


def check_credentials(env: Mapping[str, str] | None = None) -> str:
    """Name the credential the CLI will use, or raise :class:`MissingCredentials` saying
    what works.

    Looked for, in order: ``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``,
    ``CLAUDE_CODE_OAUTH_TOKEN``, a Bedrock/Vertex/Foundry switch, a Claude Code login
    (``.credentials.json`` under ``CLAUDE_CONFIG_DIR`` or ``~/.claude``, the macOS
    Keychain), and an ``apiKeyHelper`` in the user's Claude Code settings.
    """
    env = os.environ if env is None else env
    for key in CREDENTIAL_KEYS:
        if env.get(key, "").strip():
            return key
    for switch in PROVIDER_SWITCHES:
        if env.get(switch, "").strip().lower() not in ("", "0", "false", "no", "off"):
            return switch
    config = Path(env.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    if _has_login(config / ".credentials.json"):
        return "claude login"
    if not env.get("CLAUDE_CONFIG_DIR") and _keychain_login():
        return "claude login (Keychain)"
    if _has_key_helper(config / "settings.json"):
        return "apiKeyHelper"
    raise MissingCredentials(missing_message(env))


def _has_login(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    oauth = data.get("claudeAiOauth") if isinstance(data, dict) else None
    return isinstance(oauth, dict) and bool(oauth.get("accessToken") or oauth.get("refreshToken"))


def _has_key_helper(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(str(data.get("apiKeyHelper") or "").strip())


def _keychain_login() -> bool:
    """The macOS default: Claude Code keeps its login in the Keychain, not in a file."""
    if platform.system() != "Darwin":
        return False
    try:
        found = subprocess.run(
            ["security", "find-generic-password", "-s", "Claude Code-credentials"],
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return found.returncode == 0


_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?|[\x00-\x1f\x7f-\x9f]"
)


def _plain(text: str) -> str:
    """No escape sequence or control character from a value reaches the terminal."""
    return _CONTROL.sub("", text)


def effective_endpoint(environ: Mapping[str, str] | None = None) -> list[str]:
    """The lines ``-v`` prints: endpoint, model, which credential and from where.

    Secrets are masked; values are stripped of control characters (a ``.env`` value is
    text from a file, not flower's own output).
    """
    environ = os.environ if environ is None else environ

    def source(key: str) -> str:
        return origin(key, environ) or PROCESS

    lines: list[str] = []
    if origin("ANTHROPIC_BASE_URL", environ) is not None:
        url = _plain(environ["ANTHROPIC_BASE_URL"].strip())
        lines.append(f"endpoint: {url} (ANTHROPIC_BASE_URL from {source('ANTHROPIC_BASE_URL')})")
    else:
        lines.append(f"endpoint: {DEFAULT_BASE_URL} (the default)")
    models = [k for k in MODEL_KEYS if origin(k, environ) is not None]
    if not models:
        lines.append("model: the CLI's default (no ANTHROPIC_MODEL)")
    for key in models:
        lines.append(f"model: {_plain(environ[key].strip())} ({key} from {source(key)})")
    try:
        used = check_credentials(environ)
    except RuntimeError:
        lines.append("credential: none (run `flower setup`)")
        return lines
    if used in CREDENTIAL_KEYS:
        lines.append(f"credential: {used}={_plain(mask(environ[used]))} (from {source(used)})")
    else:
        lines.append(f"credential: {used}")
    return lines


def endpoint_lines(workspace: str | Path | None = None) -> list[str]:
    """What ``flower -v`` prints before a run: endpoint, model, credential and where each
    came from, the secret masked. Loads the environment first (the same lookup the
    Runtime makes, so the lines say what the run will use; loading twice is harmless).
    """
    load_environment(workspace)
    return effective_endpoint()
