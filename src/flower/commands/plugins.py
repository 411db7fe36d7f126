"""``flower plugins``: what is installed, one row per distribution (like ``llm plugins``)."""

from __future__ import annotations

import json
from typing import Any

import click


@click.group()
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


__all__ = ["plugin_rows", "plugins"]
