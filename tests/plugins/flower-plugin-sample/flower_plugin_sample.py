"""A third-party flower plugin: one rule for the error classifier, an observer, a command."""

from __future__ import annotations

import click

from flower import hookimpl


@hookimpl
def flower_classify_error(text: str) -> str | None:
    return "fatal" if "sample-quota-exhausted" in text else None


@hookimpl
def flower_event(event: object) -> None:
    return None


@hookimpl
def flower_cli_commands() -> list[click.Command]:
    @click.command()
    def hello() -> None:
        """Say hello from the sample plugin."""
        click.echo("hello from flower-plugin-sample")

    return [hello]
