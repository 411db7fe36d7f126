"""jq: a JSON filter whose language can read the environment and other files.

``jq -n env`` and ``jq -n '$ENV'`` print the environment, API key included. ``import``,
``include`` and ``modulemeta`` load files from jq's search path (``-L``, ``~/.jq``, relative to
the program) and ``import "f" as $data`` reads any JSON file as data; ``--rawfile``/
``--slurpfile`` read a file into a variable and ``-f`` hides the program in a file.

So the program is scanned token by token (strings are skipped, but their ``\\(...)``
interpolations are code) and refused when it calls ``env``, ``$ENV``, ``import``, ``include``,
``modulemeta`` or ``get_search_list``. A field named ``env`` (``.env``, ``."env"``) and a
variable ``$env`` are fine. ``--rawfile``/``--slurpfile`` pass the sensitive-path check; ``-f``,
``--from-file`` and ``-L`` are refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .lexer import Refuse, Word
from .paths import content_reason

__all__ = ["check_jq", "jq_program_reason"]

REFUSED_CALLS: dict[str, str] = {
    "env": "prints the environment",
    "$ENV": "prints the environment",
    "import": "loads files from the search path",
    "include": "loads files from the search path",
    "modulemeta": "loads modules",
    "get_search_list": "reveals the module search path",
    "input_filename": "",  # harmless: listed so the table says it was considered
    # a glance must come back: these generate or recurse without end
    "repeat": "may never end",
    "until": "may never end",
    "while": "may never end",
    "infinite": "may never end",
    "combinations": "may take exponential time",
    "def": "is refused (a definition may recurse forever)",
}
_RANGE_ARGS = re.compile(r"\(\s*(-?\d{1,6}(\.\d+)?\s*(;\s*-?\d{1,6}(\.\d+)?\s*){0,2})\)")
_IDENT = re.compile(r"\$?(__loc__|[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*)")


def _string_end(program: str, i: int, nesting: int = 0) -> int:
    """Index after the string starting at ``program[i] == '"'``; interpolations are scanned."""
    j = i + 1
    while j < len(program):
        c = program[j]
        if c == "\\" and program.startswith("\\(", j):
            j = _scan(program, j + 2, closing=")", nesting=nesting + 1)
            continue
        if c == "\\":
            j += 2
            continue
        if c == '"':
            return j + 1
        j += 1
    raise Refuse("jq: unterminated string")


_MAX_NESTING = 32


def _scan(program: str, i: int, closing: str = "", nesting: int = 0) -> int:
    """Scan code from ``i`` (up to the ``closing`` paren of an interpolation, if given)."""
    if nesting > _MAX_NESTING:
        raise Refuse("jq: interpolations nested too deeply")
    depth = 0
    while i < len(program):
        c = program[i]
        if c == '"':
            i = _string_end(program, i, nesting)
            continue
        if c == "#":
            return len(program)  # a comment to the end of the (only) line
        if c == "(":
            depth += 1
        elif c == ")":
            if closing and depth == 0:
                return i + 1
            depth -= 1
        match = _IDENT.match(program, i) if (c.isalpha() or c in "_$") else None
        if match is None:
            i += 1
            continue
        name = match.group()
        before = program[:i].rstrip()
        if not before.endswith("."):
            _call(name, program, match.end())
        i = match.end()
    if closing:
        raise Refuse("jq: unterminated interpolation")
    return i


def _call(name: str, program: str, end: int) -> None:
    """Refuse a call of ``name`` (its arguments start at ``program[end:]``) if it is unsafe."""
    if REFUSED_CALLS.get(name):
        raise Refuse(f"jq {name} {REFUSED_CALLS[name]}")
    after = program[end:].lstrip()
    if name == "recurse" and after.startswith("("):
        raise Refuse("jq recurse(f) may never end (bare recurse or .. walks the input)")
    if name == "range" and not _range_small(after):
        raise Refuse("jq range takes only small number literals here (it may never end)")


def _range_small(arguments: str) -> bool:
    """``range(N)``, ``range(A; B)``, ``range(A; B; S)`` with literals of at most 6 digits."""
    match = _RANGE_ARGS.match(arguments)
    if match is None:
        return False
    values = [float(v) for v in match.group(1).split(";")]
    return len(values) < 3 or values[2] != 0


def jq_program_reason(program: str) -> str | None:
    """Why this jq program could read the environment or other files (``None``: fine)."""
    try:
        _scan(program, 0)
    except Refuse as refusal:
        return refusal.reason
    return None


_FLAGS = set("nrjasSeCMcRhV")
_LONG_FLAGS = frozenset(
    "null-input raw-input slurp compact-output tab join-output raw-output raw-output0 "
    "ascii-output sort-keys color-output monochrome-output exit-status seq stream "
    "stream-errors unbuffered help version".split()
)
#: long options and how many words they take; values of the *file ones are files
_LONG_ARGS = {"arg": 2, "argjson": 2, "rawfile": 2, "slurpfile": 2, "indent": 1}


def check_jq(verb: str, args: Sequence[Word]) -> None:
    """jq [options] FILTER [FILE...]; ``--args``/``--jsonargs`` make the other operands plain
    values instead of files. Options are read anywhere, as jq does (``-f`` after ``--args``
    would still turn the filter into a file name)."""
    operands: list[Word] = []
    rest_are_values = False
    i = 0
    while i < len(args):
        word, i = args[i], i + 1
        text = word.text
        if not text.startswith("-") or text == "-":  # jq reads options anywhere
            operands.append(word)
            continue
        if word.glob_in_name():
            raise Refuse("jq: a glob could expand to any option")
        name = text[2:]
        if text in ("--args", "--jsonargs"):
            rest_are_values = True
        elif name in _LONG_FLAGS and text.startswith("--"):
            pass
        elif name in _LONG_ARGS and text.startswith("--"):
            values = args[i : i + _LONG_ARGS[name]]
            if len(values) < _LONG_ARGS[name] or any(v.glob for v in values):
                raise Refuse(f"jq {text} needs {_LONG_ARGS[name]} plain values")
            if name in ("rawfile", "slurpfile"):
                reason = content_reason(values[1])
                if reason is not None:
                    raise Refuse(f"jq {text}: {reason}")
            i += _LONG_ARGS[name]
        elif not text.startswith("--") and set(text[1:]) <= _FLAGS:
            pass
        else:
            why = "hides the program in a file" if text in ("-f", "--from-file") else (
                "is not an allowed option"
            )  # fmt: skip
            raise Refuse(f"jq {text.split('=', 1)[0][:30]} {why}")
    _check_operands(operands, rest_are_values)


def _check_operands(operands: list[Word], rest_are_values: bool) -> None:
    if not operands:
        return  # `jq` alone prints usage
    program, files = operands[0], operands[1:]
    if program.glob:
        raise Refuse("jq: quote the filter (bash would expand its wildcards)")
    reason = jq_program_reason(program.text)
    if reason is not None:
        raise Refuse(reason)
    if rest_are_values:
        return
    for word in files:
        if word.lead_glob:
            raise Refuse("jq: a glob starting with a wildcard could expand to an option")
        reason = content_reason(word)
        if reason is not None:
            raise Refuse(f"jq: {reason}")
