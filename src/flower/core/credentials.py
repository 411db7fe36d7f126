"""Refuse to start without credentials, before any process is spawned or money spent.

Without this check a missing key surfaces minutes later, as a "Not logged in" from
deep inside the CLI, after a workflow has already asked the human its questions. The
Runtime calls :func:`check_credentials` last in its constructor.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path

ACCEPTED = (
    "no credentials for the Claude API: export ANTHROPIC_API_KEY=sk-ant-... (or"
    " ANTHROPIC_AUTH_TOKEN for a gateway), run `claude login` (or `claude setup-token` and"
    " export CLAUDE_CODE_OAUTH_TOKEN), or use Amazon Bedrock / Google Vertex AI with"
    " CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1 and your cloud credentials;"
    " a .env file in the current folder or the workspace is read too"
)

_ENV_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
_PROVIDER_SWITCHES = (
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)


def check_credentials(env: Mapping[str, str] | None = None) -> str:
    """Name the credential the CLI will use, or raise ``RuntimeError`` saying what works.

    Looked for, in order: ``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``,
    ``CLAUDE_CODE_OAUTH_TOKEN``, a Bedrock/Vertex/Foundry switch, a Claude Code login
    (``.credentials.json`` under ``CLAUDE_CONFIG_DIR`` or ``~/.claude``, the macOS
    Keychain), and an ``apiKeyHelper`` in the user's Claude Code settings.
    """
    env = os.environ if env is None else env
    for key in _ENV_KEYS:
        if env.get(key, "").strip():
            return key
    for switch in _PROVIDER_SWITCHES:
        if env.get(switch, "").strip().lower() not in ("", "0", "false", "no", "off"):
            return switch
    config = Path(env.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    if _has_login(config / ".credentials.json"):
        return "claude login"
    if not env.get("CLAUDE_CONFIG_DIR") and _keychain_login():
        return "claude login (Keychain)"
    if _has_key_helper(config / "settings.json"):
        return "apiKeyHelper"
    raise RuntimeError(ACCEPTED)


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
