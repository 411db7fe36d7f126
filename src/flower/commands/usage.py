"""Usage errors in one line: ``flower: --rounds: 0: the total number of work rounds ...``.

Click answers a bad flag with three lines (the usage synopsis, "Try 'flower go --help'
for help.", then ``Error: ...``), and the line that matters comes last, after a synopsis
that says nothing about what was wrong. flower's errors are one line naming the option
(or argument) and what it accepts, on stderr, exit 2, so a script's log and a human's
terminal both show the cause first. Click's own "did you mean" for a misspelt option is
kept. ``flower --help`` and every ``--help`` are unchanged: only errors are reworded.

The root group converts every :class:`click.UsageError` raised while parsing or running
a subcommand (:func:`one_line_usage`), so subcommands, plugin commands included, need
nothing of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import click

from flower.commands import EXIT_USAGE

__all__ = ["IMPLICIT", "OneLineUsage", "describe_usage", "one_line_usage"]

#: ``ctx.meta`` key: the root group routed a first argument that is not a subcommand to
#: ``go`` (``flower "make X"``), as opposed to ``flower go ...`` typed out. Here, below
#: :mod:`flower.commands.words` (which reads it too), because an error names its command by it.
IMPLICIT = "flower.implicit_go"


class OneLineUsage(click.ClickException):
    """A usage error already worded for one line (and one hint line at most)."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, hint: str | None = None, *, where: str = "flower") -> None:
        super().__init__(message)
        self.hint = hint
        self.where = where

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"{self.where}: {self.message}", file=file, err=file is None)
        if self.hint:
            click.echo(f"  {self.hint}", file=file, err=file is None)


@contextmanager
def one_line_usage() -> Iterator[None]:
    """Re-raise any :class:`click.UsageError` from the block as a :class:`OneLineUsage`
    (but the "no arguments: here is the help" of ``flower db`` alone, which is help)."""
    try:
        yield
    except (OneLineUsage, click.exceptions.NoArgsIsHelpError):  # the latter shows the help
        raise
    except click.UsageError as exc:
        raise OneLineUsage(describe_usage(exc), where=_where(exc.ctx)) from None


def describe_usage(exc: click.UsageError) -> str:
    """The one line for ``exc`` (after the command's name): the option or argument it is
    about, then what is wrong.

    ``BadParameter`` (a value refused by a type or a check) is said as ``OPTION: why``,
    with the option's names unquoted (``-p/--permission-mode: 'x' is not one of ...``);
    a missing argument, an unknown option (with Click's suggestions) or a flag without
    its value keep Click's wording, first letter lowered.
    """
    if isinstance(exc, click.BadParameter) and not isinstance(exc, click.MissingParameter):
        name = _param_name(exc)
        text = f"{name}: {exc.message}" if name else exc.message
    else:
        text = exc.format_message()
        if text[:1].isupper() and text[1:2].islower():
            text = text[0].lower() + text[1:]
    return " ".join(text.split())


def _where(ctx: click.Context | None) -> str:
    """``flower once``, or ``flower`` for the root and for ``go`` chosen by the root
    (``flower --rouns 2 x``: the human typed no ``go``)."""
    if ctx is None or ctx.parent is None:
        return "flower"
    if ctx.meta.get(IMPLICIT) and ctx.parent.parent is None:
        return "flower"
    names: list[str] = []
    while ctx.parent is not None:  # the root's name as typed varies (main, a path): flower
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(["flower", *names])


def _param_name(exc: click.BadParameter) -> str:
    hint = exc.param_hint
    if isinstance(hint, str):
        return hint.strip("'\"")
    if hint:
        return "/".join(str(h).strip("'\"") for h in hint)
    param = exc.param
    if isinstance(param, click.Option):
        return "/".join(param.opts)
    if param is not None:
        return param.human_readable_name
    return ""
