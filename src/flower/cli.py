"""The ``flower`` command.

``flower "make X"`` is the main job; ``flower <subcommand>`` runs a tool. The root
group routes any first argument that is not a subcommand to the main job, so
``flower "…"``, ``flower --new "…"`` and a bare ``flower`` all reach it.

Start-up is kept light on purpose (``flower --help`` must not import the SDK or
SQLAlchemy): heavy modules are imported inside the commands that need them, and
plugin subcommands are looked up only when the command line is listed or dispatched.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from flower import __version__
from flower.commands import EXIT_NOT_READY
from flower.commands.once import once


class FlowerGroup(click.Group):
    """A group whose unknown first argument goes to the main job, with plugin commands."""

    default_command = "run"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (
            args[0] not in self._all_commands(ctx) and args[0] not in ("--help", "-h", "--version")
        ):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def _all_commands(self, ctx: click.Context) -> set[str]:
        return set(self.list_commands(ctx)) | set(self.commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(self.commands) | set(_plugin_commands())
        names.discard(self.default_command)
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.commands.get(cmd_name) or _plugin_commands().get(cmd_name)


_plugin_command_cache: dict[str, click.Command] | None = None


def _plugin_commands() -> dict[str, click.Command]:
    """Subcommands contributed through the ``flower_cli_commands`` hook, built once."""
    global _plugin_command_cache
    if _plugin_command_cache is None:
        from flower.plugins import get_plugin_manager

        found: dict[str, click.Command] = {}
        for batch in get_plugin_manager().hook.flower_cli_commands():
            for command in batch or ():
                name = command.name or ""
                if name in main.commands or name in found:
                    click.echo(
                        f"flower: ignoring plugin command {name!r}: the name is taken", err=True
                    )
                    continue
                found[name] = command
        _plugin_command_cache = found
    return _plugin_command_cache


@click.group(cls=FlowerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="flower", message="%(prog)s %(version)s")
def main() -> None:
    """Run a long-horizon coding agent in this folder.

    \b
      flower once "fix the failing test"   one agent, one step, survives outages
      flower plugins list                  what is installed
      flower db current                    the session store's schema revision
      flower "make X"                      clarify, set a goal, work until the judge
                                           agrees (not in this version yet)

    Tests and demos run offline against the scripted model: see
    `flower scripted-model --help`.
    """


@main.command(name="run", hidden=True, context_settings={"ignore_unknown_options": True})
@click.argument("ask", nargs=-1, type=click.UNPROCESSED)
def run_job(ask: tuple[str, ...]) -> None:
    """The main job (clarify → goal → work)."""
    click.echo(
        'flower: the main job (`flower "..."`: clarify, set a goal, work) is not in this '
        f"version ({__version__}) yet; see `flower --help` for the commands that are.",
        err=True,
    )
    sys.exit(EXIT_NOT_READY)


main.add_command(once)


@main.group()
def plugins() -> None:
    """Inspect installed plugins."""


@plugins.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Include plugins disabled by FLOWER_DISABLED_PLUGINS or FLOWER_LOAD_PLUGINS.",
)
def plugins_list(as_json: bool, show_all: bool) -> None:
    """List plugins, one row per distribution: name, version, hooks, status.

    A plugin that failed to load is shown with its error; the command still succeeds.
    """
    rows = [row for row in plugin_rows() if show_all or row["status"] != "disabled"]
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=None, show_lines=False)
    for column in ("name", "version", "hooks", "status"):
        table.add_column(column, overflow="fold")
    for row in rows:
        status = row["status"] if row["status"] != "error" else f"[red]error[/red]: {row['error']}"
        table.add_row(row["name"], row["version"], "\n".join(row["hooks"]) or "-", status)
    Console().print(table)


def plugin_rows() -> list[dict[str, Any]]:
    """``flower plugins list`` rows: one per distribution, its plugins and hooks merged."""
    from flower.plugins import plugin_records

    rows: dict[str, dict[str, Any]] = {}
    for record in plugin_records():
        row = rows.setdefault(
            record.distribution,
            {
                "name": record.distribution,
                "version": record.version,
                "hooks": [],
                "status": "ok",
                "error": None,
                "default": record.default,
                "plugins": [],
            },
        )
        row["plugins"].append(
            {
                "name": record.name,
                "status": record.status,
                "hooks": record.hooks,
                "error": record.error,
            }
        )
        row["hooks"] = sorted(set(row["hooks"]) | set(record.hooks))
    for row in rows.values():
        statuses = {p["status"] for p in row["plugins"]}
        errors = [p["error"] for p in row["plugins"] if p["error"]]
        row["status"] = (
            "error" if "error" in statuses else "disabled" if statuses == {"disabled"} else "ok"
        )
        row["error"] = "; ".join(errors) or None
    return list(rows.values())


if __name__ == "__main__":  # pragma: no cover
    main()
