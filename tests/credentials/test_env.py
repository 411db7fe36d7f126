"""Where credentials come from (the lookup order, the .env grammar), and how -v shows them."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from flower.kernel import env as envmod
from flower.kernel.credentials import (
    ACCEPTED,
    DEMO_HINT,
    check_credentials,
    effective_endpoint,
    missing_message,
)
from flower.kernel.env import load_environment, mask, resolve

KEY = "ANTHROPIC_AUTH_TOKEN"
SOURCES = ("process", "$FLOWER_ENV", "./.env", "workspace", "user config", "settings.json")


def _place(root: Path, source: str, value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put ``KEY=value`` in one source."""
    line = f"{KEY}={value}\n"
    if source == "process":
        monkeypatch.setenv(KEY, value)
    elif source == "$FLOWER_ENV":
        named = root / "named.env"
        named.write_text(line)
        monkeypatch.setenv("FLOWER_ENV", str(named))
    elif source == "./.env":
        (Path.cwd() / ".env").write_text(line)
    elif source == "workspace":
        (root / "ws" / ".env").write_text(line)
    elif source == "user config":
        path = root / "xdg" / "flower" / ".env"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(line)
    else:
        (root / "home" / ".claude" / "settings.json").write_text(
            json.dumps({"env": {KEY: value}, "model": "not borrowed"})
        )


@pytest.mark.parametrize("first", range(len(SOURCES)), ids=SOURCES)
def test_the_first_source_with_a_value_wins(
    bare: Path, monkeypatch: pytest.MonkeyPatch, first: int
) -> None:
    (bare / "ws").mkdir()
    for source in SOURCES[first:]:
        _place(bare, source, f"from-{source}", monkeypatch)
    lines = load_environment(bare / "ws")
    assert os.environ[KEY] == f"from-{SOURCES[first]}"
    if SOURCES[first] == "process":
        assert not any(KEY in line for line in lines)
    else:
        (line,) = [line for line in lines if line.startswith(KEY)]
        assert "from-" not in line, "the value itself is never listed"


@pytest.mark.parametrize("empty", range(len(SOURCES) - 1), ids=SOURCES[:-1])
def test_an_empty_value_does_not_block_the_next_source(
    bare: Path, monkeypatch: pytest.MonkeyPatch, empty: int
) -> None:
    """REFERENCE §C.13: ``KEY=`` is a placeholder, not a decision."""
    (bare / "ws").mkdir()
    _place(bare, SOURCES[empty], "", monkeypatch)
    for source in SOURCES[empty + 1 :]:
        _place(bare, source, f"from-{source}", monkeypatch)
    load_environment(bare / "ws")
    assert os.environ[KEY] == f"from-{SOURCES[empty + 1]}"


def test_dotenv_grammar_export_quotes_and_comments(bare: Path) -> None:
    """REFERENCE §C.13: ``export K=V`` and trailing comments behave as in a shell."""
    (Path.cwd() / ".env").write_text(
        "# a comment line\n"
        "export ANTHROPIC_API_KEY=sk-ant-exported  # my key\n"
        'ANTHROPIC_BASE_URL="http://127.0.0.1:9" # the gateway\n'
        "ANTHROPIC_MODEL='model # with hash'\n"
        "FLOWER_TEST_DOLLAR=a${HOME}b\n"
        "FLOWER_TEST_NOVALUE\n"
    )
    try:
        load_environment(None)
        assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-exported"
        assert os.environ["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
        assert os.environ["ANTHROPIC_MODEL"] == "model # with hash"
        assert os.environ["FLOWER_TEST_DOLLAR"] == "a${HOME}b", "values are literal"
        assert "FLOWER_TEST_NOVALUE" not in os.environ
    finally:
        os.environ.pop("FLOWER_TEST_DOLLAR", None)


def test_loading_is_idempotent_and_the_process_wins(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_MODEL", "from-shell")
    (Path.cwd() / ".env").write_text("ANTHROPIC_MODEL=from-file\nANTHROPIC_API_KEY=sk-ant-f\n")
    assert load_environment(None) == ["ANTHROPIC_API_KEY from " + str(Path.cwd() / ".env")]
    assert load_environment(None) == []
    assert os.environ["ANTHROPIC_MODEL"] == "from-shell"


def test_settings_are_borrowed_only_without_a_credential(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gateway URL belongs with its token: never pair the user's key with it."""
    settings = bare / "home" / ".claude" / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "env": {
                    "ANTHROPIC_AUTH_TOKEN": "gw-borrowed",
                    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/gw",
                    "SOMETHING_ELSE": "x",
                }
            }
        )
    )
    chosen, _ = resolve(None)
    assert chosen["ANTHROPIC_AUTH_TOKEN"][0] == "gw-borrowed"
    assert chosen["ANTHROPIC_BASE_URL"][1] == "~/.claude/settings.json (env block)"
    assert "SOMETHING_ELSE" not in chosen
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-mine")
    assert resolve(None)[0] == {}


def test_a_missing_flower_env_file_is_reported(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLOWER_ENV", str(bare / "nope.env"))
    (line,) = load_environment(None)
    assert "$FLOWER_ENV" in line and "nope.env" in line


@pytest.mark.parametrize(
    ("secret", "shown"),
    [
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz-abcd", "sk-ant-...abcd"),
        ("abcdefghijklmnopqrstuvwxyz0123", "...0123"),
        ("sk-ant-short", "sk-ant-***"),
        ("gw-12345678", "gw-***"),
        ("tiny", "***"),
    ],
)
def test_mask(secret: str, shown: str) -> None:
    assert mask(secret) == shown
    tail = secret[-8:]
    assert tail not in mask(secret)


def test_effective_endpoint_names_sources_and_masks(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-ant-api03-" + "s3cr3t" * 6 + "wxyz"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/\x1b[2Jgw\x07")
    user = bare / "xdg" / "flower" / ".env"
    user.parent.mkdir(parents=True)
    user.write_text(f"ANTHROPIC_API_KEY={secret}\nANTHROPIC_MODEL=claude-test-1\n")
    load_environment(None)
    lines = effective_endpoint()
    text = "\n".join(lines)
    assert secret not in text and "s3cr3t" not in text
    assert "ANTHROPIC_API_KEY=sk-ant-...wxyz (from " in text and "xdg/flower/.env" in text
    assert "endpoint: http://127.0.0.1:9/gw (ANTHROPIC_BASE_URL from the environment)" in text
    assert "model: claude-test-1 (ANTHROPIC_MODEL from " in text
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in text.replace("\n", ""))


def test_effective_endpoint_without_anything(bare: Path) -> None:
    assert effective_endpoint() == [
        "endpoint: https://api.anthropic.com (the default)",
        "model: the CLI's default (no ANTHROPIC_MODEL)",
        "credential: none (run `flower setup`)",
    ]


def test_the_runtime_reads_the_user_config(bare: Path) -> None:
    """The Runtime's own loading goes through the same lookup."""
    from flower.runtime.assembly import read_dotenv

    user = bare / "xdg" / "flower" / ".env"
    user.parent.mkdir(parents=True)
    user.write_text("ANTHROPIC_API_KEY=sk-ant-user-config\n")
    read_dotenv(bare)
    assert check_credentials() == "ANTHROPIC_API_KEY"
    assert (envmod.origin("ANTHROPIC_API_KEY") or "").endswith("xdg/flower/.env")


# --- the missing-credentials message (REFERENCE §C.3) ------------------------------------


def _claude_on_path(folder: Path) -> str:
    folder.mkdir(exist_ok=True)
    tool = folder / "claude"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return str(folder)


def test_the_message_names_exactly_what_the_code_reads(tmp_path: Path) -> None:
    import re

    message = missing_message({"PATH": str(tmp_path)})
    named = set(re.findall(r"\b[A-Z][A-Z0-9_]{5,}\b", message))
    read = {*envmod.CREDENTIAL_KEYS, *envmod.PROVIDER_SWITCHES}
    read |= {"ANTHROPIC_BASE_URL", "FLOWER_ENV", "XDG_CONFIG_HOME"}
    assert read - {"ANTHROPIC_BASE_URL", "FLOWER_ENV", "XDG_CONFIG_HOME"} <= named
    assert named <= read, f"named but never read: {named - read}"
    sources = ("./.env", "the workspace's .env", "flower/.env", "settings.json", "apiKeyHelper")
    assert all(source in message for source in sources)
    assert "\n" not in message and message.endswith(ACCEPTED + DEMO_HINT)
    assert "`flower demo`" in message  # a newcomer without a key can still try it


def test_claude_login_is_suggested_only_when_claude_is_on_path(tmp_path: Path) -> None:
    without = missing_message({"PATH": str(tmp_path / "empty")})
    assert "`claude" not in without and "`flower setup`" in without
    with_claude = missing_message({"PATH": _claude_on_path(tmp_path / "bin")})
    assert "`claude auth login`" in with_claude and "`flower setup`" in with_claude


def test_check_credentials_raises_the_path_aware_message(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path), "PATH": str(tmp_path)}
    with pytest.raises(RuntimeError) as info:
        check_credentials(env)
    assert "claude auth login" not in str(info.value) and "flower setup" in str(info.value)


def test_endpoint_lines_load_the_workspace_first(bare: Path) -> None:
    """What `flower -v` prints before the Runtime exists already reflects the .env files."""
    from flower.kernel.credentials import endpoint_lines

    (bare / "ws").mkdir()
    (bare / "ws" / ".env").write_text("ANTHROPIC_AUTH_TOKEN=gw-0123456789abcdefghij\n")
    lines = endpoint_lines(bare / "ws")
    assert lines[-1] == f"credential: ANTHROPIC_AUTH_TOKEN=gw-...ghij (from {bare}/ws/.env)"
