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
    tokens: list[str] = []
    scan = _Scan()
    i, n = 0, len(program)
    while i < n:
        c = program[i]
        if c in " \t\\":
            i += 1
            continue
        if c == "#":
            break  # a comment runs to the end of the line, and there is only one line
        start = i
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
        tokens.append(program[start:i])
    check_loops(tokens)


# --------------------------------------------------------------------------------------------
# loops: a glance must come back
# --------------------------------------------------------------------------------------------

_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "^=", "++", "--"})
_MUTATORS = frozenset({"sub", "gsub", "split", "patsplit", "match", "asort", "asorti"})
_UP, _DOWN = ("<", "<="), (">", ">=")


def _is_name(token: str) -> bool:
    return bool(_IDENT.fullmatch(token)) and token not in KEYWORDS


def _is_number(token: str) -> bool:
    return bool(_NUMBER.fullmatch(token))


def _small(token: str) -> bool:
    """A loop start or bound that keeps the count small: ``NF``, ``NR`` or ``|n| <= 10**7``.

    A variable could hold ``1e300`` (``-v n=1e300``): counting to it never comes back.
    """
    if token in ("NF", "NR"):
        return True
    return _is_number(token) and not token.lower().startswith("0x") and float(token) <= 1e7


def _step(token: str) -> bool:
    return not token.lower().startswith("0x") and float(token) >= 1


def _for_header(tokens: list[str], k: int) -> tuple[int, str, str] | None:
    """A bounded ``for`` header at ``tokens[k] == "for"``: (end index, variable, bound).

    ``for (k in a)`` walks a snapshot of the keys; ``for (V = X; V < B; V++)`` (or ``<=``,
    ``+= N``, and the ``>``/``--`` mirror) counts towards its bound. Anything else: ``None``.
    """
    t = tokens[k + 1 : k + 14]
    if len(t) >= 5 and t[0] == "(" and _is_name(t[1]) and t[2] == "in" and _is_name(t[3]):
        return (k + 5, "", "") if t[4] == ")" else None
    if len(t) < 10 or t[0] != "(" or not _is_name(t[1]) or t[2] != "=":
        return None
    var = t[1]
    j = 3 + (t[3] == "-")
    if not _small(t[j]) or t[j + 1 : j + 3] != [";", var]:
        return None
    compare, bound, rest = t[j + 3], t[j + 4], t[j + 5 :]
    if not _small(bound) or rest[:1] != [";"]:
        return None
    step = rest[1:4]
    up = step[:2] in ([var, "++"], ["++", var]) or (
        len(step) == 3 and step[:2] == [var, "+="] and _is_number(step[2]) and _step(step[2])
    )
    down = step[:2] in ([var, "--"], ["--", var]) or (
        len(step) == 3 and step[:2] == [var, "-="] and _is_number(step[2]) and _step(step[2])
    )
    width = 2 if step[:2] in ([var, "++"], ["++", var], [var, "--"], ["--", var]) else 3
    if not ((compare in _UP and up) or (compare in _DOWN and down)):
        return None
    end = k + 1 + j + 5 + 1 + width
    return (end + 1, var, bound) if tokens[end : end + 1] == [")"] else None


def _assigned(tokens: list[str], name: str, skip: range) -> bool:
    """Is ``name`` assigned (``=``, ``op=``, ``++``/``--``, a mutating builtin) outside ``skip``?"""
    call_depth = 0
    for k, token in enumerate(tokens):
        if token in _MUTATORS and tokens[k + 1 : k + 2] == ["("]:
            call_depth = 1
            continue
        if call_depth:
            call_depth += {"(": 1, ")": -1}.get(token, 0)
        if token != name or k in skip:
            continue
        after = tokens[k + 1] if k + 1 < len(tokens) else ""
        before = tokens[k - 1] if k else ""
        if call_depth or after in _ASSIGN_OPS or before in ("++", "--"):
            return True
    return False


def _fields_assigned(tokens: list[str]) -> bool:
    """A ``$x = ...`` (or ``$x++``) anywhere: it can grow ``NF``."""
    dollar = False
    for token in tokens:
        if token in (";", "{", "}"):
            dollar = False
        dollar = dollar or token == "$"
        if dollar and token in _ASSIGN_OPS:
            return True
    return False


def check_loops(tokens: list[str]) -> None:
    """Refuse loops that need not end: while, do, functions (recursion), unbounded for."""
    for k, token in enumerate(tokens):
        if token in ("while", "do"):
            raise Refuse(f"awk {token} loops may never end")
        if token in ("function", "func"):
            raise Refuse("awk functions are refused (recursion may never end)")
        if token != "for":
            continue
        header = _for_header(tokens, k)
        if header is None:
            raise Refuse("awk: only for (k in a) and counting for loops are allowed")
        end, var, bound = header
        if not var:
            continue
        inside = range(k, end)
        if _assigned(tokens, var, inside) or (
            bound in ("NF", "NR") and _assigned(tokens, bound, inside)
        ):
            raise Refuse(f"awk: the loop changes {var} or its bound, so it may never end")
        if bound == "NF" and _fields_assigned(tokens):
            raise Refuse("awk: assigning a field can grow NF, so the loop may never end")


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
