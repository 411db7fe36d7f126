"""check_credentials: every accepted source, and the message when none is there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flower.kernel.credentials import check_credentials


@pytest.fixture
def bare(tmp_path: Path) -> dict[str, str]:
    """An environment with nothing in it but an empty config dir."""
    config = tmp_path / "config"
    config.mkdir()
    return {"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path)}


@pytest.mark.parametrize(
    ("extra", "source"),
    [
        ({"ANTHROPIC_API_KEY": "sk-ant-x"}, "ANTHROPIC_API_KEY"),
        ({"ANTHROPIC_AUTH_TOKEN": "tok"}, "ANTHROPIC_AUTH_TOKEN"),
        ({"CLAUDE_CODE_OAUTH_TOKEN": "oat"}, "CLAUDE_CODE_OAUTH_TOKEN"),
        ({"CLAUDE_CODE_USE_BEDROCK": "1"}, "CLAUDE_CODE_USE_BEDROCK"),
        ({"CLAUDE_CODE_USE_VERTEX": "true"}, "CLAUDE_CODE_USE_VERTEX"),
    ],
)
def test_environment_sources(bare: dict[str, str], extra: dict[str, str], source: str) -> None:
    assert check_credentials({**bare, **extra}) == source


def test_a_claude_code_login_in_the_config_dir(bare: dict[str, str]) -> None:
    path = Path(bare["CLAUDE_CONFIG_DIR"]) / ".credentials.json"
    path.write_text(json.dumps({"claudeAiOauth": {"accessToken": "a", "refreshToken": "r"}}))
    assert check_credentials(bare) == "claude login"


def test_an_api_key_helper_in_settings(bare: dict[str, str]) -> None:
    (Path(bare["CLAUDE_CONFIG_DIR"]) / "settings.json").write_text(
        json.dumps({"apiKeyHelper": "~/bin/key"})
    )
    assert check_credentials(bare) == "apiKeyHelper"


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"ANTHROPIC_API_KEY": "  "},
        {"CLAUDE_CODE_USE_BEDROCK": "0"},
        {"CLAUDE_CODE_USE_VERTEX": "false"},
    ],
)
def test_nothing_usable_raises_saying_what_is_accepted(
    bare: dict[str, str], extra: dict[str, str]
) -> None:
    (Path(bare["CLAUDE_CONFIG_DIR"]) / ".credentials.json").write_text("not json")
    with pytest.raises(RuntimeError) as info:
        check_credentials({**bare, **extra})
    message = str(info.value)
    for named in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "Claude Code login",
        "flower setup",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        ".env",
    ):
        assert named in message
    assert "\n" not in message, "a user mistake gets one line"
