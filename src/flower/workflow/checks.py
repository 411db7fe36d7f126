"""Runnable checks: a goal's check that says what to run and what it must show.

A check is a sentence a judge reads; one written the way people write a check, a
backticked command followed by what it must do, is also something flower runs itself
(:mod:`flower.workflow.check_run`), so "achieved" can mean the checks ran and passed. The
syntax, in either language, one check a line:

- ``- `python -m pytest -q tests/test_cli.py` exits 0`` (``退出码为 0``): the exit status;
- ``- `python conv.py a.md` prints `<h1>` `` (``输出包含 `<h1>` ``): text the output holds
  (stdout and stderr together); both may follow one command: ``exits 0 and prints `ok` ``
  (``退出码为 0,输出包含 `ok` ``);
- ``- file `dist/app.whl` exists`` (``文件 `dist/app.whl` 存在``): a file the work left.

A command that stands first in the line (after its list marker) is the check's command.
Anything else, a check marked ``[此环境无法验证:…]``, or a command with nothing it must
do, stays a sentence for the judge: parsing never raises and never guesses. Held-out
checks (:mod:`flower.workflow.held_out`) name their script as ``$FLOWER_HELD_OUT/<name>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["HELD_OUT_VAR", "Runnable", "parse_check", "runnable_checks"]

#: The variable a check's command finds the held-out scripts' folder in.
HELD_OUT_VAR = "FLOWER_HELD_OUT"

_LEAD = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?P<body>.*)$", re.S)
_COMMAND = re.compile(r"^`(?P<cmd>[^`\n]+)`\s*(?P<rest>.*)$", re.S)
_FILE = re.compile(r"^(?:file|文件)\s*`(?P<path>[^`\n]+)`\s*(?:exists|存在)", re.I)
_BARE_FILE = re.compile(r"^(?:exists|存在)\s*[.。]?\s*$", re.I)
_EXITS = re.compile(
    r"(?:\bexits?(?:\s+with)?(?:\s+(?:status|code))?|\breturns|\bexit\s+(?:status|code)(?:\s+is)?"
    r"|退出码(?:为|是)?|返回码(?:为|是)?)\s*(?P<n>-?\d+)",
    re.I,
)
_PRINTS = re.compile(
    r"(?:\b(?:prints|outputs|shows|writes\s+out)|输出(?:包含|里有|含有|中有)?|打印出?)\s*`(?P<text>[^`\n]+)`",
    re.I,
)
_UNVERIFIABLE = re.compile(r"\[(?:此环境无法验证|cannot verify here)", re.I)


@dataclass(frozen=True)
class Runnable:
    """One check flower can run: ``command`` (run with ``bash -c``), and what it must
    show: ``status`` (the exit status, ``None``: any), ``prints`` (texts its output must
    hold), or, for a file check, ``path`` (a file that must exist; no command)."""

    index: int
    text: str
    command: str = ""
    status: int | None = None
    prints: tuple[str, ...] = field(default_factory=tuple)
    path: str = ""

    @property
    def held_out(self) -> bool:
        """Whether its command runs a held-out script."""
        return HELD_OUT_VAR in self.command


def parse_check(text: str, index: int = 0) -> Runnable | None:
    """The runnable form of one check line, or ``None`` when it is a sentence."""
    if not isinstance(text, str) or _UNVERIFIABLE.search(text):
        return None
    lead = _LEAD.match(text)
    body = lead.group("body").strip() if lead else text.strip()
    found = _FILE.match(body)
    if found:
        return Runnable(index=index, text=text.strip(), path=found.group("path").strip())
    command = _COMMAND.match(body)
    if command is None:
        return None
    cmd, rest = command.group("cmd").strip(), command.group("rest")
    if _BARE_FILE.match(rest):
        return Runnable(index=index, text=text.strip(), path=cmd)
    exits = _EXITS.search(rest)
    prints = tuple(m.group("text") for m in _PRINTS.finditer(rest))
    if exits is None and not prints:
        return None
    status = int(exits.group("n")) if exits else None
    return Runnable(index=index, text=text.strip(), command=cmd, status=status, prints=prints)


def runnable_checks(checks: list[str]) -> list[Runnable]:
    """The runnable ones of a goal's checks, numbered as the goal lists them (from 1)."""
    found = [parse_check(check, n) for n, check in enumerate(checks, 1)]
    return [check for check in found if check is not None]
