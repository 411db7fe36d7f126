"""awk (gawk 5, mawk or busybox, whichever ``/usr/bin/awk`` is) judged by what its language can do.

An awk program is code. gawk alone can run commands (``system``, ``print | "cmd"``,
``"cmd" | getline``, ``|&`` coprocesses), open network connections through its special files
(``/inet/tcp/0/host/port``, also as an *input operand*, or as a file name the program builds by
assigning ``ARGV``/``ARGC``), write files (``print > "f"``), read the environment
(``ENVIRON``, ``PROCINFO``), reach them indirectly (``SYMTAB``, ``FUNCTAB``, ``@f()``), load
code (``@load``, ``@include``, ``-f``, ``-E``, ``-i``, ``-l``, ``-e``/``--source``, mawk's
``-W exec``) and leak data through DNS by connecting to a name built from it.

So the program is tokenized the way awk's lexer does it (strings, regex constants, the
regex/division ambiguity) and refused when it contains any of: ``system``, ``getline``,
``close``, a ``|`` or ``|&`` (``||`` is fine), a ``>`` anywhere in a ``print``/``printf``
statement (output redirection; ``$3 > 100 {print}`` compares), ``ENVIRON``, ``PROCINFO``,
``ARGV``, ``ARGC``, ``SYMTAB``, ``FUNCTAB``, or ``@``. Where the regex/division reading could
differ between awks (a ``/`` right after ``)`` of ``if``/``while``/``for``, after ``++``/``--``
or ``length``; a ``/`` inside a bracket of a regex) the program is refused rather than guessed.

Only ``-F`` and ``-v`` (POSIX, same in every awk) are allowed: gawk's long options are not
understood by mawk, which would then take the *next* word as the program and the program as a
file. Operands are files (secret and device paths refused, and gawk's ``/inet*`` special files)
or ``var=value`` assignments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .lexer import Refuse, Word
from .options import parse, spec
from .paths import content_reason, glob_intersects

__all__ = ["awk_program_reason", "check_awk"]

REFUSED_NAMES: dict[str, str] = {
    "system": "runs a command",
    "getline": "reads files and command output",
    "close": "closes pipes and files",
    "ENVIRON": "prints the environment",
    "PROCINFO": "exposes process information",
    "ARGV": "can open any file or gawk network special file",
    "ARGC": "can open any file or gawk network special file",
    "SYMTAB": "reaches every variable indirectly",
    "FUNCTAB": "reaches every function indirectly",
}
KEYWORDS = frozenset(
    "BEGIN END BEGINFILE ENDFILE function func if else while for do break continue next "
    "nextfile exit return delete in print printf case default switch".split()
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)")
_OPERATORS = (
    "&&", "||", "==", "!=", "<=", ">=", "!~", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=",
    "**", ">>", "|&",
)  # fmt: skip


def _string_end(program: str, i: int) -> int:
    """Index after the string constant starting at ``program[i] == '"'``."""
    j = i + 1
    while j < len(program):
        if program[j] == "\\":
            j += 2
            continue
        if program[j] == '"':
            return j + 1
        j += 1
    raise Refuse("awk: unterminated string")


def _regex_end(program: str, i: int) -> int:
    """Index after the regex constant starting at ``program[i] == '/'``."""
    j = i + 1
    bracket = False
    while j < len(program):
        c = program[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            bracket = True
        elif c == "]":
            bracket = False
        elif c == "/":
            if bracket:
                raise Refuse("awk: a / inside a regex bracket is read differently by awks")
            return j + 1
        j += 1
    raise Refuse("awk: unterminated regex")


class _Scan:
    """State while walking the tokens of one program."""

    def __init__(self) -> None:
        self.prev = ""  # the previous token
        self.prev_kind = ""  # "operand", "keyword", "op", ""
        self.parens: list[bool] = []  # for each open paren: opened by if/while/for?
        self.condition_closed = False  # the token before was `)` of if/while/for
        self.in_print = False


def _regex_allowed(scan: _Scan) -> bool:
    if scan.condition_closed or scan.prev in ("++", "--", "length"):
        raise Refuse("awk: a / here is read as regex by some awks and division by others")
    return scan.prev_kind != "operand"


def _identifier(scan: _Scan, name: str) -> None:
    if name in REFUSED_NAMES:
        raise Refuse(f"awk {name} {REFUSED_NAMES[name]}")
    if name in ("print", "printf"):
        scan.in_print = True
    scan.prev_kind = "keyword" if name in KEYWORDS else "operand"


def _punct(scan: _Scan, program: str, i: int) -> int:
    """One operator or punctuation token at ``program[i]``; return the index after it."""
    op = next((o for o in _OPERATORS if program.startswith(o, i)), program[i])
    if op == "|&" or op == "|":
        raise Refuse("awk | and |& pipe to or from a command")
    if op == "@":
        raise Refuse("awk @ directives and indirect calls load or reach any code")
    if op.startswith(">") and scan.in_print:
        raise Refuse("awk print > and >> write files")
    if op in (";", "{", "}"):
        scan.in_print = False
    closes_condition = False
    if op == "(":
        scan.parens.append(scan.prev in ("if", "while", "for"))
    elif op == ")":
        closes_condition = scan.parens.pop() if scan.parens else False
    scan.condition_closed = closes_condition
    scan.prev_kind = "operand" if op in (")", "]") else "op"
    scan.prev = op
    return i + len(op)


def awk_program_reason(program: str) -> str | None:
    """Why this awk program could run, write, connect or read the environment (or None)."""
    try:
        _scan_program(program)
    except Refuse as refusal:
        return refusal.reason
    return None


def _scan_program(program: str) -> None:
    scan = _Scan()
    i, n = 0, len(program)
    while i < n:
        c = program[i]
        if c in " \t\\":
            i += 1
            continue
        if c == "#":
            return  # a comment runs to the end of the line, and there is only one line
        was_condition = scan.condition_closed
        scan.condition_closed = False
        if c == '"':
            i = _string_end(program, i)
            scan.prev, scan.prev_kind = '""', "operand"
        elif c == "/":
            scan.condition_closed = was_condition
            if _regex_allowed(scan):
                i = _regex_end(program, i)
                scan.prev, scan.prev_kind = "//", "operand"
            else:
                i = _punct(scan, program, i)
        elif match := _IDENT.match(program, i):
            _identifier(scan, match.group())
            scan.prev = match.group()
            i = match.end()
        elif match := _NUMBER.match(program, i):
            scan.prev, scan.prev_kind = match.group(), "operand"
            i = match.end()
        else:
            scan.condition_closed = False
            i = _punct(scan, program, i)


_AWK = spec("F:v:", abbrev=False, permute=False)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _special_file(word: Word) -> bool:
    """gawk's network special files ``/inet/...``, ``/inet4/...``, ``/inet6/...`` (even as a
    glob: ``/ine?/tcp/...`` matches nothing on disk, so bash leaves it for gawk to open)."""
    parts = word.pattern.split("/")
    return (
        len(parts) > 1
        and parts[0] == ""
        and any(glob_intersects(parts[1], name) for name in ("inet", "inet4", "inet6"))
    )


def _assignment_ok(text: str, where: str) -> None:
    name = text.split("=", 1)[0]
    if name in REFUSED_NAMES or not _ASSIGNMENT.match(text):
        raise Refuse(f"awk {where}: {name[:30]!r} is not an assignable variable")


def check_awk(verb: str, args: Sequence[Word]) -> None:
    """awk [-F fs] [-v var=value] 'program' [file | var=value]..."""
    parsed = parse(verb, args, _AWK)
    for key, value in parsed.options:
        if key == "-v" and value is not None:
            _assignment_ok(value, "-v")
    if not parsed.operands:
        raise Refuse("awk without a program operand (-f and friends are refused)")
    program, files = parsed.operands[0], parsed.operands[1:]
    if program.glob:
        raise Refuse("awk: quote the program (bash would expand its wildcards)")
    reason = awk_program_reason(program.text)
    if reason is not None:
        raise Refuse(reason)
    for word in files:
        if _ASSIGNMENT.match(word.text) and not word.glob:
            _assignment_ok(word.text, "operand")
            continue
        if word.lead_glob or (word.text.startswith("-") and word.text != "-"):
            raise Refuse("awk: an operand that may be an option is refused")
        if _special_file(word):
            raise Refuse("awk: /inet and /dev/tcp operands open network connections in gawk")
        reason = content_reason(word)
        if reason is not None:
            raise Refuse(f"awk: {reason}")
