"""The request a run is given: how long it may be, how it is read when the command line
did not say, and whether ``flower rewind`` has already taken it.

``go`` checks the request and hands it to ``launch``, which asks for one when there is
none; ``rewind`` asks its own question and then runs ``go``, which must not ask again.
What the three share lives here, below all of them, so that none of them imports
another for it (``go`` imports ``launch``, ``rewind`` imports ``go``, never the reverse).
Only click is imported at load time: ``flower --help`` loads this module through ``go``.
"""

from __future__ import annotations

import sys
from typing import Any

import click

#: (the explanation, the short prompt): the line editor keeps a prompt to half the width.
WAKE_PROMPT = ("Continue? Enter = carry on; a line = tell it more; /new = start over", "> ")
DONE_PROMPT = (
    "It finished. Enter = leave it as it is; /again = another round anyway;"
    " a line = more work on it; /new = start over",
    "> ",
)
#: What read_ask returns for ``/again`` after a finished run: carry on as Enter would.
AGAIN = "/again"
ASK_PROMPT = ("What should it do? One sentence is enough (Ctrl-C quits).", "> ")
NEW_PROMPT = ("What should the new piece of work be? (Ctrl-C quits)", "new > ")

#: The longest request flower takes on the command line or standard input, in characters:
#: a request is read whole into every prompt of the run (the brief, the goal, each round),
#: so a document belongs in a file the request names.
MAX_ASK = 50_000


def ask_too_big(ask: str) -> str | None:
    """One line when ``ask`` is longer than :data:`MAX_ASK`, else ``None``."""
    if len(ask) <= MAX_ASK:
        return None
    return (
        f"the request is {len(ask):,} characters long (at most {MAX_ASK:,}): put the long part"
        ' in a file in the workspace and say so, e.g. flower "do what notes/spec.md says"'
    )


def read_ask(
    terminal: Any, *, waking: bool, interactive: bool, finished: bool = False
) -> tuple[str, bool] | None:
    """What to do, when the command line did not say: ``(ask, new)``, or ``None`` to quit.

    On a terminal: on a wake-up Enter continues, a line is a new remark, ``/new`` starts
    over (after a ``finished`` run the prompt says Enter leaves it as it is: the caller
    spends nothing on an empty ask then); otherwise it asks until it gets a line. Without
    one: standard input, all of it.
    """
    if not interactive:
        if sys.stdin is None or sys.stdin.isatty():
            return "", False
        return sys.stdin.read().strip(), False
    from flower.ui.reader import ask_line as ask_raw

    def ask_line(_: Any, prompt: tuple[str, str]) -> str | None:
        terminal.line(prompt[0], "bold")
        return ask_raw(terminal, prompt[1])

    if waking:
        said = ask_line(terminal, DONE_PROMPT if finished else WAKE_PROMPT)
        if said is None:
            return None
        if finished and said.strip() == AGAIN:
            return AGAIN, False
        if said.strip() != "/new":
            return said.strip(), False
        while True:
            fresh = ask_line(terminal, NEW_PROMPT)
            if fresh is None:
                return None
            if fresh.strip():
                return fresh.strip(), True
    while True:
        said = ask_line(terminal, ASK_PROMPT)
        if said is None:
            return None
        if said.strip():
            return said.strip(), False


#: ``ctx.meta`` key: ``go`` runs right after a rewind (the words are already taken).
REWOUND = "flower.rewound"


def rewound() -> bool:
    """Whether this ``go`` runs right after a rewind (it must not ask what to do again)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(REWOUND))


__all__ = [
    "AGAIN",
    "ASK_PROMPT",
    "DONE_PROMPT",
    "MAX_ASK",
    "NEW_PROMPT",
    "REWOUND",
    "WAKE_PROMPT",
    "ask_too_big",
    "read_ask",
    "rewound",
]
