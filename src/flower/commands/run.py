"""``flower run TARGET``: your own workflow, with the same view, input line and Ctrl-C.

TARGET is ``package.module:name`` or ``path/to/file.py:name``; ``name`` is a
``Workflow`` or a callable that returns one (called once, with no arguments). The
workflow runs in the workspace with the same terminal as the main job: questions through
its channel, the inbox, side questions, Ctrl-C, a closing line. ``--budget`` caps what the
whole run spends, as for the main job.
"""

from __future__ import annotations

import shlex
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from flower.commands import EXIT_USAGE
from flower.commands.options import (
    FORCE_HELP,
    Globals,
    SandboxChoice,
    budget_option,
    sandbox_options,
    with_globals,
)


@click.command(name="run")
@with_globals
@click.argument("target")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@budget_option
@sandbox_options
def run(
    target: str,
    g: Globals,
    force: bool,
    budget: float | None,
    sandbox: SandboxChoice,
) -> None:
    """Run your own workflow: flower run flows.py:main (or package.module:main)."""
    workflow = load_workflow(target)
    from flower.commands.go import budget_stopped
    from flower.commands.launch import drive, hold_run, make_view, open_runtime
    from flower.runtime.budget import Budget, BudgetReached

    terminal, renderer, interactive = make_view(g)
    rt = open_runtime(  # whether its agents have Bash is known only as each step starts
        g, terminal, interactive, sandbox=sandbox, bash=False,
        workbench=bool(g.workbench), trim=bool(g.trim),
    )  # fmt: skip
    if rt is None:
        sys.exit(EXIT_USAGE)
    if budget is not None:  # else the run's kept cap, if any (runtime/budget.py)
        rt.budget = Budget(budget)
    with ExitStack() as held:
        try:
            if not hold_run(g, held, rt, force=force):
                sys.exit(EXIT_USAGE)
            code = drive(workflow, rt, terminal, renderer, interactive)
        except BudgetReached as stop:
            code = budget_stopped(stop, g, f"flower run {shlex.quote(target)}")
        finally:
            rt.close()
    sys.exit(code)


def load_workflow(target: str) -> Any:
    """The Workflow ``target`` names; a ``click.BadParameter`` that says what is wrong."""
    from flower.workflow.base import Workflow

    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise click.BadParameter(
            f"{target!r}: say which object, as module:name or file.py:name", param_hint="TARGET"
        )
    module = _import(where)
    try:
        found = getattr(module, name)
    except AttributeError:
        raise click.BadParameter(f"{where} has no {name!r}", param_hint="TARGET") from None
    if callable(found) and not isinstance(found, Workflow):
        try:
            found = found()
        except Exception as exc:
            raise click.BadParameter(
                f"{target} raised {type(exc).__name__}: {exc}", param_hint="TARGET"
            ) from None
    if not isinstance(found, Workflow):
        raise click.BadParameter(
            f"{target} is a {type(found).__name__}, not a flower Workflow (or a function"
            " returning one)",
            param_hint="TARGET",
        )
    return found


def _import(where: str) -> Any:
    import importlib
    import importlib.util

    if where.endswith(".py") or "/" in where or "\\" in where:
        path = Path(where).expanduser()
        if not path.is_file():
            raise click.BadParameter(f"no file {path}", param_hint="TARGET")
        spec = importlib.util.spec_from_file_location(f"flower_target_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise click.BadParameter(f"cannot load {path}", param_hint="TARGET")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        sys.path.insert(0, str(path.parent.absolute()))
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise click.BadParameter(
                f"{path} failed to import: {type(exc).__name__}: {exc}", param_hint="TARGET"
            ) from None
        return module
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise click.BadParameter(f"cannot import {where}: {exc}", param_hint="TARGET") from None


__all__ = ["load_workflow", "run"]
