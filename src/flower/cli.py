"""The ``flower`` command: wiring only; each subcommand lives in ``flower/commands/``.

``flower "make X"`` is the main job (``go``); ``flower <subcommand>`` runs a tool. The
root group routes a first argument that is not a subcommand to ``go``, so ``flower
"…"``, ``flower --new "…"``, ``flower -w proj "…"`` and a bare ``flower`` all reach it,
except that a lone word one or two typos from a subcommand (``flower onec hi``) stops
with "did you mean" instead of starting a paid run, and an everyday word alone
(``flower help``, ``flower continue``) does what it says (``commands/words.py``). Usage
errors are one line (``commands/usage.py``).

Start-up is kept light on purpose (``flower --help`` must not import the SDK,
SQLAlchemy or rich): heavy modules are imported inside the commands that need them, and
plugin subcommands are looked up only when the command line is listed or dispatched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from flower.commands.demo import demo
from flower.commands.diff import diff
from flower.commands.go import go
from flower.commands.once import once
from flower.commands.options import global_options
from flower.commands.plugins import plugins
from flower.commands.rewind import rewind
from flower.commands.run import run
from flower.commands.status import status
from flower.commands.usage import IMPLICIT, OneLineUsage, one_line_usage
from flower.commands.words import meant as words_meant
from flower.commands.words import route
from flower.kernel.version import __version__

#: Global flags that take a value (the word after them is not the subcommand).
_VALUED = {"-w", "--workspace", "-r", "--run-dir", "--lang"}
_FLAGS = {"-v", "--verbose", "-W", "--workbench", "-T", "--trim"}


class FlowerGroup(click.Group):
    """A group whose first non-flag argument, unless a subcommand, is the main job's ask."""

    default_command = "go"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        at = _first_word(args)
        # built-in names first: `flower plugins list`, `flower status` need no plugin's command
        if at < len(args) and (args[at] in self.commands or args[at] in _META):
            return super().parse_args(ctx, args)
        if at < len(args) and args[at] in self._all_commands(ctx):
            return super().parse_args(ctx, args)
        if at == len(args) and any(a in _META for a in args):
            return super().parse_args(ctx, args)
        if args and args[-1] in _VALUED:  # `flower -w`: Click says the value is missing
            return super().parse_args(ctx, args)
        routed = route(args[:at], args[at:])  # `flower help`, `flower continue`: words.py
        if routed is not None:
            return super().parse_args(ctx, routed)
        meant = words_meant(args[at:], self._all_commands(ctx))
        if meant is not None:
            word = args[at]
            raise OneLineUsage(
                f"{word!r} looks like a misspelt command: did you mean `flower {meant}`?",
                f"To send it as a request, write `flower go {' '.join(args[at:])}`",
            )
        ctx.meta[IMPLICIT] = True
        return super().parse_args(ctx, [*args[:at], self.default_command, *args[at:]])

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """Usage errors in one line (``commands/usage.py``), the root's flags included."""
        with one_line_usage():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        """Usage errors of every subcommand in one line (``commands/usage.py``)."""
        with one_line_usage():
            return super().invoke(ctx)

    def _all_commands(self, ctx: click.Context) -> set[str]:
        return set(self.list_commands(ctx)) | set(self.commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(_plugin_commands()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.commands.get(cmd_name) or _plugin_commands().get(cmd_name)


_META = {"--help", "-h", "--version"}


def _first_word(args: list[str]) -> int:
    """Index of the first argument that is neither a global flag nor a flag's value."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _VALUED:
            i += 2
        elif arg in _FLAGS or arg.split("=", 1)[0] in _VALUED or _short_flags(arg):
            i += 1
        else:
            return i
    return len(args)


def _short_flags(arg: str) -> bool:
    """``-vT``: several one-letter global flags in one word."""
    return (
        len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and all(f"-{c}" in _FLAGS for c in arg[1:])
    )


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
@global_options
@click.pass_context
def main(
    ctx: click.Context,
    workspace: Path | None,
    run_dir: Path | None,
    verbose: bool | None,
    workbench: bool | None,
    trim: bool | None,
) -> None:
    """Run a long-horizon coding agent in this folder.

    \b
      flower "make X"                      clarify, set a goal, work until an
                                           independent judge agrees; run it again
                                           here to continue the same conversation
      flower status                        where the run in this folder stands
      flower rewind [N]                    the checkpoints; go back to round N
      flower diff N                        what round N changed
      flower demo                          a whole run, offline and free
      flower once "fix the failing test"   one agent, one step
      flower run flows.py:main             your own workflow
      flower setup                         credentials for the Claude API
      flower plugins list                  what is installed

    While it runs, type to answer a question or add a note; start a line with ? to
    ask on the side; Ctrl-C stops the round at once and asks what to tell the agent
    (Enter goes on with nothing added), Ctrl-C again quits (the step is saved).
    Tests and demos run offline against the scripted model: see
    `flower scripted-model --help`.
    """
    ctx.obj = {
        "workspace": workspace,
        "run_dir": run_dir,
        "verbose": verbose,
        "workbench": workbench,
        "trim": trim,
    }


for _command in (go, once, run, status, plugins, demo, rewind, diff):
    main.add_command(_command)

try:  # `flower setup` (its module arrives with the credentials work)
    from flower.commands.setup import setup

    main.add_command(setup)
except ImportError:  # pragma: no cover - during development only
    pass


if __name__ == "__main__":  # pragma: no cover
    main()
