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
    cells = [
        [
            row["name"],
            row["version"],
            "\n".join(row["hooks"]) or "-",
            row["status"] if row["status"] != "error" else f"error: {row['error']}",
        ]
        for row in rows
    ]
    for line in table(["name", "version", "hooks", "status"], cells):
        click.echo(line)


def table(header: list[str], rows: list[list[str]], width: int | None = None) -> list[str]:
    """A boxed table, as rich draws one, in a few lines of its own: ``flower plugins list``
    is run to see what is installed, and importing rich would double its start-up.

    A cell may hold several lines; when the table is wider than ``width`` (default: the
    terminal's), the widest column is folded until it fits (never below 10 characters).
    """
    import shutil
    import textwrap

    width = width or shutil.get_terminal_size((100, 24)).columns
    lines = [[cell.splitlines() or [""] for cell in row] for row in rows]
    widths = [
        max([len(name)] + [len(part) for row in lines for part in row[i]])
        for i, name in enumerate(header)
    ]
    while sum(widths) + 3 * len(widths) + 1 > width and max(widths) > 10:
        widest = widths.index(max(widths))
        widths[widest] = max(10, widths[widest] - (sum(widths) + 3 * len(widths) + 1 - width))
    folded = [
        [[piece for part in cell for piece in textwrap.wrap(part, w) or [""]]
         for cell, w in zip(row, widths, strict=True)]
        for row in lines
    ]  # fmt: skip

    def rule(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right

    def cells(parts: list[str], bar: str) -> str:
        return bar + bar.join(f" {p:<{w}} " for p, w in zip(parts, widths, strict=True)) + bar

    out = [rule("┏", "━", "┳", "┓"), cells(header, "┃"), rule("┡", "━", "╇", "┩")]
    for row in folded:
        for k in range(max(len(cell) for cell in row)):
            out.append(cells([cell[k] if k < len(cell) else "" for cell in row], "│"))
    out.append(rule("└", "─", "┴", "┘"))
    return out


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


__all__ = ["plugin_rows", "plugins", "table"]
