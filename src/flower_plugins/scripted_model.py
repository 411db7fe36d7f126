"""Adds ``flower scripted-model serve``: the offline model server as a subcommand."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from flower import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl(trylast=True)
def flower_cli_commands() -> Iterable[click.Command]:
    from flower.testing.cli import scripted_model

    return [scripted_model]
