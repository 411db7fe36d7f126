"""The environment that keeps the Claude Code CLI offline and away from the user's files."""

from __future__ import annotations

from pathlib import Path

#: The discard port on loopback: nothing listens, so a connection is refused at once.
DEAD_LOOPBACK = "http://127.0.0.1:9"

#: Variables that must never leak from the developer's shell into an offline run:
#: real keys, real endpoints, cloud-provider switches, and ``FLOWER_ENV`` (a file of them).
LEAKY_VARIABLES = (
    "FLOWER_ENV",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "CLAUDE_CODE_SUBAGENT_MODEL",
)


def offline_env(
    base_url: str, *, home: str | Path, max_retries: int = 0, **extra: str
) -> dict[str, str]:
    """Variables for ``ClaudeAgentOptions.env`` (or ``os.environ``) that point the CLI at a
    loopback model server, with ``HOME`` and ``CLAUDE_CONFIG_DIR`` in ``home``.

    ``XDG_CONFIG_HOME`` moves flower's own user ``.env`` into ``home`` as well, so a real
    key saved by ``flower setup`` never reaches a test. ``CLAUDE_CONFIG_DIR`` must be in
    the options' env or the session store receives nothing;
    ``CLAUDE_CODE_MAX_RETRIES`` defaults to 0 so a scripted fault surfaces at once instead of
    after the CLI's own three-minute retry ladder. ``OTEL_SDK_DISABLED=true`` keeps test runs
    out of a collector (a test of telemetry sets it to ``false``); ``flower scripted-model
    serve`` leaves it out of the lines it prints for a shell, where the user decides.
    Leaky variables are blanked, not removed, because the SDK merges this dict over the
    parent's environment.
    """
    home = Path(home)
    config = home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    env = {name: "" for name in LEAKY_VARIABLES}
    env.update(
        {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted-offline",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(config),
            # flower's user config (``flower setup``'s .env) lives here, not in the shell's
            "XDG_CONFIG_HOME": str(home / ".config"),
            "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
            # No telemetry leaves a test either (flower-plugin-otel, the CLI's OTLP
            # exporter): a shell's OTEL_EXPORTER_OTLP_ENDPOINT may name a real collector.
            "OTEL_SDK_DISABLED": "true",
        }
    )
    env.update(extra)
    return env
