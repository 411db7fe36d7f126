"""``--lang``: the language a command speaks (prompts, documents, notes, step labels).

One option, on the root group and on every command that takes the global flags
(``flower --lang en "make X"`` and ``flower "make X" --lang en`` mean the same), read
before any command runs, so every subcommand, a plugin's included, sees it:

- on the root, the language is settled for the whole command: ``--lang``, else
  ``FLOWER_LANG``, else what ``flower setup`` saved, else Chinese (the seed's default),
  and pinned with :func:`flower.kernel.lang.use`, so nothing read later (a ``.env`` the
  Runtime loads) switches it half-way through a run;
- after a subcommand, only a flag given there counts, and it wins over the root's.

A value that names no language is a one-line usage error naming where it came from (the
flag or ``FLOWER_LANG``), never silently Chinese.

Only click and the standard library are imported at load time (``flower --help``).
"""

from __future__ import annotations

from typing import Any

import click

__all__ = ["LANG_HELP", "lang_option"]

LANG_HELP = (
    "The language of the prompts, documents and notes: en or zh (default: FLOWER_LANG,"
    " else what `flower setup` saved, else zh). File and step names stay as they are."
)


def _settle(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    from flower.kernel import lang

    source = ctx.get_parameter_source(param.name or "lang")
    given = value is not None and str(value).strip() != ""
    if ctx.parent is not None:  # a subcommand: only its own flag counts
        if given and source is click.core.ParameterSource.COMMANDLINE:
            lang.use(_parse(value, "--lang"))
        return
    if given:
        hint = lang.ENV if source is click.core.ParameterSource.ENVIRONMENT else "--lang"
        lang.use(_parse(value, hint))
    else:
        lang.settle()


def _parse(value: Any, hint: str) -> str:
    from flower.kernel.lang import parse

    try:
        return parse(value, source=hint)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a language flower speaks: use en or zh", param_hint=hint
        ) from None


def lang_option() -> Any:
    """The ``--lang`` option (``FLOWER_LANG`` when absent), settled by its callback and
    never passed to the command (``expose_value=False``)."""
    return click.option(
        "--lang",
        default=None,
        metavar="en|zh",
        envvar="FLOWER_LANG",
        show_envvar=True,
        expose_value=False,
        is_eager=True,
        callback=_settle,
        help=LANG_HELP,
    )
