"""The hooks: how the page hears the run and reaches the human channel.

- ``flower_human_channel``: while ``flower web`` runs, build the same ``HumanChannel``
  flower would and keep a reference, so the page answers questions and sends inbox lines
  through the very object the terminal uses (first answer wins, the other side sees it
  settled through the ``ask`` event). Otherwise ``None``: flower builds its own.
- ``flower_event``: every event to the hub, numbered, for the live stream.
- ``flower_cli_commands``: ``flower web``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from flower import hookimpl

# ``flower_plugin_web.hub`` (asyncio, the server's machinery) is imported inside the hooks:
# this module is loaded for every ``flower`` command, ``flower --help`` included, and the
# hub is needed only while ``flower web`` runs (``HUB.enabled``).


@hookimpl
def flower_human_channel(
    log_path: Path | None, amend_path: Path | None, max_asks: int | None, timeout_s: float | None
) -> Any:
    from flower_plugin_web.hub import HUB

    if not HUB.enabled:
        return None
    from flower import HumanChannel

    channel = HumanChannel(
        log_path=log_path, amend_path=amend_path, max_asks=max_asks, timeout_s=timeout_s
    )
    HUB.channel = channel
    return channel


@hookimpl
def flower_event(event: Any) -> None:
    from flower_plugin_web.hub import HUB

    if HUB.enabled:
        HUB.publish(event.kind, event.payload, event.step, event.at)


@hookimpl
def flower_cli_commands() -> list[click.Command]:
    from flower_plugin_web.command import web

    return [web]
