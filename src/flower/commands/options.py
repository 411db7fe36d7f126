"""The global flags every run command shares, and the checks that refuse nonsense values.

``flower [global flags] [go] ["ask"] [go flags]``: the global flags may stand before the
subcommand (they belong to the root group) or after it (each run command repeats them),
so ``flower -w proj "make X"`` and ``flower "make X" -w proj`` mean the same. A value
given after the subcommand wins over one given before it.

``--run-dir`` defaults to ``<workspace>/runs``: a run's state lives with its workspace, so
``-w elsewhere`` from another folder never splits it in two (the original's default was
the current folder).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

#: ``flower.runtime.budget.BUDGET_ENV``, spelled here so that building the command line (and
#: ``flower --help``) does not import the budget's machinery (sockets, threads).
BUDGET_ENV = "FLOWER_BUDGET"

F = TypeVar("F", bound=Callable[..., Any])

#: Below this a context window cannot hold Claude Code's own prompt plus a handoff: every
#: turn would overflow and the step would loop through handoffs until the generation limit.
MIN_WINDOW = 60_000
#: ``--force`` on the commands that continue a run (``go``, ``run``).
FORCE_HELP = (
    "Run even if another flower holds this run (run_dir/run.lock names it): only when you"
    " know it is gone, or mean to run both."
)
#: ``--budget`` on the commands that run a workflow (``go``, ``run``, and ``web`` through go).
BUDGET_HELP = (
    "The most the whole run may spend, in USD: every session of every wake counts. Kept"
    " with the run (a later flower without it keeps the cap); raise it to go on after a"
    " stop; 'none' clears it."
)


@dataclass
class Globals:
    """The global flags, resolved: the subcommand's value, else the root's, else the default."""

    workspace: Path
    run_dir: Path
    verbose: bool
    workbench: bool | None
    trim: bool | None
    #: The topmost folder this process made for the workspace (``-w`` named one that did
    #: not exist), else None: a refusal takes what it made away again if it is left empty
    #: (``commands/leftovers.py``).
    made_workspace: Path | None = None


def global_options(command: F, *, only: tuple[str, ...] | None = None) -> F:
    """Add -w, -r, -v, -W, -T to a command (all default to None: "not given here"), and
    ``--lang``, which is settled as it is parsed and never reaches the command
    (``commands/language.py``). ``only``: the names a command has use for (a reading
    command takes -w and -r; its help lists nothing that would mean nothing there)."""
    from flower.commands.language import lang_option

    reading = only is not None
    options = {
        "workspace": click.option(
            "-w", "--workspace", type=click.Path(file_okay=False, path_type=Path), default=None,
            help="The project folder (default: the current folder"
            + (")." if reading else "; created if missing)."),
        ),
        "run_dir": click.option(
            "-r", "--run-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
            help="Where sessions.db, manifest.json, lineage.json live (default: <workspace>/runs).",
        ),
        "verbose": click.option(
            "-v", "--verbose", is_flag=True, default=None,
            help="Say more: the endpoint, thinking, tool results.",
        ),
        "workbench": click.option(
            "-W", "--workbench", is_flag=True, default=None,
            help="Give the agent a workbench (once, run; the main job always has one).",
        ),
        "trim": click.option(
            "-T", "--trim", is_flag=True, default=None,
            help="Trim large old tool results on resume (always on for the main job).",
        ),
    }  # fmt: skip
    chosen = [
        lang_option(),
        *(option for name, option in options.items() if name in (only or options)),
    ]
    for option in reversed(chosen):
        command = option(command)
    return command


_GLOBAL_NAMES = ("workspace", "run_dir", "verbose", "workbench", "trim")


def with_globals(command: F) -> F:
    """:func:`global_options` for a subcommand, resolved: the command gets one ``g:
    Globals`` argument (merged with the root's flags) instead of the five values."""
    return _with_globals(command, create=True)


def reading_globals(command: F) -> F:
    """:func:`with_globals` for a command that only reads (``flower status``): a
    workspace that does not exist is a one-line error, not a folder made for a typo;
    only -w and -r (and ``--lang``) are offered, the rest would do nothing there."""
    return _with_globals(command, create=False, only=("workspace", "run_dir"))


def _with_globals(command: F, *, create: bool, only: tuple[str, ...] | None = None) -> F:
    @functools.wraps(command)
    def resolved(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name, None) for name in _GLOBAL_NAMES}
        g = kwargs["g"] = resolve_globals(click.get_current_context(), create=create, **given)
        if not create:
            return command(*args, **kwargs)
        from flower.commands.leftovers import nothing_left_on_refusal

        with nothing_left_on_refusal(g.workspace, g.run_dir, made_workspace=g.made_workspace):
            return command(*args, **kwargs)

    return global_options(resolved, only=only)  # type: ignore[return-value]


def resolve_globals(ctx: click.Context, *, create: bool = True, **given: Any) -> Globals:
    """Merge this command's global flags with the root group's; make the workspace exist
    (``create=False``: refuse one that does not). ``FLOWER_STORE_URL`` is checked first,
    before anything is created (``commands/startup.py``)."""
    from flower.commands.startup import store_url_refusal

    root: dict[str, Any] = (ctx.find_root().obj or {}) if ctx.parent is not None else {}

    def pick(name: str) -> Any:
        value = given.get(name)
        return value if value is not None else root.get(name)

    refusal = store_url_refusal()
    if refusal is not None:
        raise click.UsageError(refusal)
    workspace = Path(pick("workspace") or ".").expanduser()
    if workspace.exists() and not workspace.is_dir():
        raise click.BadParameter(f"{workspace} is a file, not a folder", param_hint="--workspace")
    if not create and not workspace.exists():
        raise click.BadParameter(
            f"no folder {workspace.absolute()}: check the path", param_hint="-w/--workspace"
        )
    whole = workspace.absolute()
    made = next((p for p in reversed((whole, *whole.parents)) if not p.exists()), None)
    try:
        workspace.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.BadParameter(
            f"cannot create {workspace}: {exc.strerror}", param_hint="--workspace"
        ) from None
    workspace = workspace.absolute()
    run_dir = pick("run_dir")
    return Globals(
        workspace=workspace,
        run_dir=(Path(run_dir).expanduser().absolute() if run_dir else workspace / "runs"),
        verbose=bool(pick("verbose")),
        workbench=pick("workbench"),
        trim=pick("trim"),
        made_workspace=made,
    )


def check_asks(value: int) -> int | None:
    """``--asks``: -1 = no limit (None), 0 = no questions, N = at most N."""
    if value < -1:
        raise click.BadParameter(
            f"{value} is not a number of questions: use -1 (no limit), 0 (none) or a count",
            param_hint="--asks",
        )
    return None if value == -1 else value


def check_rounds(value: int) -> int:
    if value < 1:
        raise click.BadParameter(
            f"{value}: the total number of work rounds is 1 or more (default 3)",
            param_hint="--rounds",
        )
    return value


def check_stuck(value: int) -> int:
    """``--stuck-after``: rounds in a row with the same failed checks; 0 = never stuck."""
    if value < 0:
        raise click.BadParameter(
            f"{value}: give a number of rounds, 0 (never) or more (default 3)",
            param_hint="--stuck-after",
        )
    return value


def check_timeout(value: float) -> float:
    """``--timeout``: seconds a question waits; 0 means nobody will answer. A negative
    value is refused, not read as 0: it is a typo more often than a decision."""
    if not math.isfinite(value) or value < 0:
        raise click.BadParameter(
            f"{value:g}: give a number of seconds, 0 or more (0 = nobody will answer,"
            " questions settle at once)",
            param_hint="--timeout",
        )
    return value


def check_budget(value: object, *, hint: str = "--budget") -> float | None:
    """``--budget`` / ``FLOWER_BUDGET``: USD above 0, ``inf`` for ``none`` (clears the cap
    the run kept), ``None`` when not given. Anything else is a one-line usage error naming
    ``hint``, where the value came from."""
    if value is None or not str(value).strip():
        return None
    from flower.runtime.budget import parse_budget

    try:
        return parse_budget(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=hint) from None


def _budget_callback(ctx: click.Context, param: click.Parameter, value: object) -> float | None:
    source = ctx.get_parameter_source(param.name or "budget")
    from_env = source is click.core.ParameterSource.ENVIRONMENT
    return check_budget(value, hint=BUDGET_ENV if from_env else "--budget")


def budget_option(command: F) -> F:
    """``--budget USD`` (``FLOWER_BUDGET`` when absent) on a command that runs a workflow."""
    return click.option(
        "--budget",
        default=None,
        metavar="USD",
        envvar=BUDGET_ENV,
        show_envvar=True,
        callback=_budget_callback,
        help=BUDGET_HELP,
    )(command)


#: ``--no-sandbox`` / ``--allow-net`` (``roles/sandbox.py``), spelled here so that building the
#: command line does not import the sandbox's machinery.
NO_SANDBOX_HELP = (
    "Run Bash without the CLI's sandbox (also FLOWER_SANDBOX=0): commands then have all the"
    " rights of your account."
)
ALLOW_NET_HELP = (
    "A host sandboxed commands may reach (repeatable; also FLOWER_ALLOW_NET=a,b), e.g."
    " pypi.org; without it they have no network."
)


@dataclass(frozen=True)
class SandboxChoice:
    """What the sandbox flags said: ``off`` (``--no-sandbox``) and the hosts allowed."""

    off: bool = False
    allow_net: tuple[str, ...] = ()

    def policy(self) -> Any:
        """The Runtime's ``Sandbox`` for these flags and the environment; a bad host is a
        one-line usage error."""
        from flower.roles.sandbox import Sandbox

        try:
            return Sandbox.resolve(False if self.off else None, allow_net=self.allow_net)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--allow-net") from None


def sandbox_options(command: F) -> F:
    """``--no-sandbox`` and ``--allow-net HOST`` on a command that runs agents; the command
    gets one ``sandbox: SandboxChoice`` argument instead of the two values."""

    @functools.wraps(command)
    def chosen(*args: Any, **kwargs: Any) -> Any:
        kwargs["sandbox"] = SandboxChoice(
            bool(kwargs.pop("no_sandbox", False)), tuple(kwargs.pop("allow_net", ()) or ())
        )
        return command(*args, **kwargs)

    with_net = click.option(
        "--allow-net", multiple=True, metavar="HOST", default=(), help=ALLOW_NET_HELP
    )
    off = click.option("--no-sandbox", is_flag=True, default=False, help=NO_SANDBOX_HELP)
    return off(with_net(chosen))  # type: ignore[return-value]


def check_window(value: int | None) -> int | None:
    if value is not None and value < MIN_WINDOW:
        raise click.BadParameter(
            f"{value:,} tokens cannot hold the CLI's own prompt and a handoff; a context window"
            f" is at least {MIN_WINDOW:,} (Claude's are 200,000 or 1,000,000)",
            param_hint="--window",
        )
    return value


__all__ = [
    "BUDGET_ENV",
    "BUDGET_HELP",
    "MIN_WINDOW",
    "Globals",
    "SandboxChoice",
    "budget_option",
    "check_asks",
    "check_budget",
    "check_rounds",
    "check_stuck",
    "check_timeout",
    "check_window",
    "global_options",
    "reading_globals",
    "resolve_globals",
    "sandbox_options",
    "with_globals",
]
