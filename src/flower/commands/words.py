"""Everyday words alone on the command line: ``flower help`` asks about flower, not for work.

Any first argument that is not a subcommand is the main job's ask, so ``flower help`` in
an empty folder once clarified "help" with a paid model, and ``flower continue`` in a
finished run appended "continue" to the frozen brief and ran the goal step again. When
one of these words is the whole ask (one argument after the global flags), flower does
what the word means instead, and never makes a model request:

==============  ===============================================================
``list`` ``ls`` every run in the store (``flower status --all``)
``show`` ``info`` ``log`` ``logs``  where the run here stands (``flower status``)
``config`` ``doctor``  ``flower setup`` (the key, the endpoint, a probe of both)
``start``       continue the run here (or ask what to do), as a bare ``flower``
``quit`` ``exit`` ``stop``  one line: nothing runs between two flowers; Ctrl-C stops one
``help``        the help text (``flower --help``)
``version``     the version (``flower --version``)
``status``      ``flower status`` (a subcommand already)
``setup``       ``flower setup`` (a subcommand already)
``login``       ``flower setup``: flower's login is the key it asks for
``continue``    continue the run here, as a bare ``flower`` does
``resume``      the same
``new``         start something new, as ``flower --new``: it asks what to do
``init``        nothing to do: one line saying what to type instead
``rewind``      ``flower rewind`` (a subcommand already: ``flower Rewind`` too)
``undo``        nothing undone: one line naming ``flower rewind --undo`` and
                ``flower rewind N`` (which of the two is meant, only the human knows)
==============  ===============================================================

A word one or two typos away (``hlep``, ``contineu``; the distance of
:mod:`flower.commands.typo`) stops with "did you mean", as a misspelt subcommand does; only
for the words of :data:`TYPO_WORDS` (``lint`` is one edit from ``list``, and a request).

The shell removes quotes before flower sees its arguments, so ``flower "help"`` is the
same single word as ``flower help`` and is not sent either; ``flower go help`` sends the
word as a request (``go`` is the main job by name, and takes every word literally).
Case does not matter (``flower Help``). A word with go's flags before it (``flower
--timeout 0 continue``) reaches the main job as its ask; there ``continue``/``resume``
and ``new`` still act, and the other words say what to type.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click

from flower.commands.typo import misspelt_command
from flower.commands.usage import IMPLICIT, OneLineUsage

__all__ = ["NEW", "TYPO_WORDS", "WORDS", "meant", "route", "whole_ask"]

#: What each word does, for the help of this module and the tests that walk the list.
WORDS: dict[str, str] = {
    "help": "flower --help",
    "version": "flower --version",
    "status": "flower status",
    "setup": "flower setup",
    "login": "flower setup",
    "config": "flower setup",
    "continue": "flower",
    "resume": "flower",
    "start": "flower",
    "new": "flower --new",
    "init": 'flower "make X"',
    "list": "flower status --all",
    "ls": "flower status --all",
    "show": "flower status",
    "info": "flower status",
    "log": "flower status",
    "logs": "flower status",
    "doctor": "flower setup",
    "quit": "Ctrl-C",
    "exit": "Ctrl-C",
    "stop": "Ctrl-C",
    "rewind": "flower rewind",
    "undo": "flower rewind --undo",
}
#: Words that mean "stop": nothing runs between two flowers, so they only say so.
_STOP = frozenset({"quit", "exit", "stop"})
#: The words a near miss is checked against. The others count only as typed: a short
#: word one edit from ``list`` is ``lint``, a request people make.
TYPO_WORDS = frozenset(
    {"help", "version", "status", "setup", "login", "continue", "resume", "new", "init", "undo"}
)
#: ``ctx.meta`` key: the ask was the word ``new`` (go then starts over, as ``--new``).
NEW = "flower.word_new"

_INIT = (
    'flower has no init: a folder needs none. Give it the work: flower "make X"'
    " (flower setup saves the API key)"
)
_UNDO = (
    "flower has no undo: `flower rewind` lists the checkpoints, `flower rewind N` goes back"
    " to the start of round N, `flower rewind --undo` returns to where the last rewind started"
)
_STOPPED = (
    "nothing to {word}: no flower runs between two commands. A running flower stops with"
    " Ctrl-C in its terminal (its step is saved); flower status says where a run stands"
)


def _word(token: str) -> str | None:
    word = token.casefold()
    return word if word in WORDS else None


def route(before: list[str], args: list[str]) -> list[str] | None:
    """The command line that ``flower <before> <args>`` means when ``args`` (what follows
    the global flags ``before``) is one of the words alone; ``None`` otherwise. ``init``
    raises the one line that says what to type."""
    if len(args) != 1:
        return None
    word = _word(args[0])
    if word is None:
        return None
    if word == "init":
        raise OneLineUsage(_INIT)
    if word == "undo":  # it changes files: never done on a guess of which undo was meant
        raise OneLineUsage(_UNDO)
    if word in _STOP:
        raise OneLineUsage(_STOPPED.format(word=word))
    if word in ("help", "version"):
        return [*before, f"--{word}"]
    if word in ("continue", "resume", "start"):
        return [*before, "go"]
    if word == "new":
        return [*before, "go", "--new"]
    return [*before, *WORDS[word].split()[1:]]


def meant(args: list[str], commands: Iterable[str]) -> str | None:
    """The subcommand, or (for a lone word) the word, ``args[0]`` is probably a typo of."""
    names = set(commands) | (set(TYPO_WORDS) if len(args) == 1 else set())
    return misspelt_command(args, names)


def whole_ask(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> Any:
    """``go``'s ask, when a word is all of it and the root group chose ``go`` (go's own
    flags came first: ``flower --timeout 0 continue``): ``continue``/``resume`` become no
    ask (a bare flower), ``new`` becomes ``--new``; the other words, and near-misses of
    any, stop with one line saying what to type. ``flower go help`` is left alone."""
    if ctx.meta.get(IMPLICIT) and len(value) > 1 and value[0] == "go":
        return value[1:]  # `flower --timeout 0 go help`: `go` named after go's own flags
    if not ctx.meta.get(IMPLICIT) or len(value) != 1:
        return value
    word = _word(value[0])
    if word in ("continue", "resume", "start"):
        return ()
    if word == "new":
        ctx.meta[NEW] = True
        return ()
    if word is not None:
        raise OneLineUsage(
            f"{value[0]!r} alone is not sent as a request: type `{WORDS[word]}`",
            f"To send it as a request, write `flower go {value[0]}`",
        )
    near = misspelt_command(list(value), TYPO_WORDS)
    if near is not None:
        raise OneLineUsage(
            f"{value[0]!r} looks like a misspelt word: did you mean `flower {near}`?",
            f"To send it as a request, write `flower go {value[0]}`",
        )
    return value
