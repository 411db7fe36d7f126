"""GNU sed, judged by parsing its script: only commands that print or edit the stream pass.

sed can write (``-i``, the ``w``/``W`` commands, the ``w`` flag of ``s``), run commands (``e``
and the ``e`` flag of ``s``), and read other files into its output (``r``/``R``, which would
print ``.env`` past the path checks). ``-f FILE`` hides the script. So the options are an
allow-list, the script is parsed command by command, and anything not understood is refused:
``a``/``i``/``c`` too, because their text swallows the rest of the line and a parser that gets
that wrong would read a ``w`` in the text as a command (or miss one).
"""

from __future__ import annotations

from collections.abc import Sequence

from .lexer import Refuse, Word
from .options import parse, spec
from .paths import content_reason

__all__ = ["check_sed", "sed_script_reason"]

_SED = spec(
    "nErsuzbe:l: --quiet --silent --expression= --regexp-extended --separate --unbuffered"
    " --null-data --posix --debug --sandbox --line-length= --binary --help --version"
)
#: commands without an argument that only print or edit the pattern/hold space
_PLAIN = frozenset("pdnNPDgGhHxz=F")
_WHY = {
    "w": "writes a file",
    "W": "writes a file",
    "r": "reads another file into the output",
    "R": "reads another file into the output",
    "e": "runs a command",
    "a": "is refused (its text hides what follows)",
    "i": "is refused (its text hides what follows)",
    "c": "is refused (its text hides what follows)",
}


def _skip_regex(script: str, i: int, delim: str) -> int:
    """Index just after the unescaped ``delim`` closing a regex/replacement starting at ``i``."""
    while i < len(script):
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c == delim:
            return i + 1
        i += 1
    raise Refuse("sed: unterminated regex or replacement")


def _address(script: str, i: int) -> int:
    """Skip one address (``12``, ``$``, ``/re/I``, ``\\cREc``, ``first~step``) if present."""
    n = len(script)
    if i < n and script[i].isdigit():
        while i < n and (script[i].isdigit() or script[i] == "~"):
            i += 1
    elif i < n and script[i] == "$":
        i += 1
    elif i < n and script[i] in "/\\":
        if script[i] == "\\":
            if i + 1 >= n or script[i + 1] in "\\\n":
                raise Refuse("sed: bad address delimiter")
            delim, i = script[i + 1], i + 2
        else:
            delim, i = "/", i + 1
        i = _skip_regex(script, i, delim)
        while i < n and script[i] in "IM":
            i += 1
    return i


def _addresses(script: str, i: int) -> int:
    start = i
    i = _address(script, i)
    if i > start and i < len(script) and script[i] == ",":
        i += 1
        if i < len(script) and script[i] in "+~":
            i += 1
        i = _address(script, i)
    while i < len(script) and script[i] in " \t!":
        i += 1
    return i


def _command(script: str, i: int, command: str) -> int:
    """Skip the arguments of ``command`` (just read at ``script[i-1]``); refuse the bad ones."""
    n = len(script)
    if command in _PLAIN or command == "{":
        return i
    if command in "qQlL":
        while i < n and script[i].isdigit():
            i += 1
        return i
    if command in "btT:":
        while i < n and script[i] in " \t":
            i += 1
        while i < n and (script[i].isalnum() or script[i] == "_"):
            i += 1
        return i
    if command in "sy":
        if i >= n or script[i] in "\\\n":
            raise Refuse(f"sed {command}: bad delimiter")
        delim = script[i]
        i = _skip_regex(script, i + 1, delim)
        i = _skip_regex(script, i, delim)
        while command == "s" and i < n and (script[i] in "gpiImMew" or script[i].isdigit()):
            if script[i] in "ew":
                flag = script[i]
                raise Refuse(
                    f"sed s///{flag} {'runs a command' if flag == 'e' else 'writes a file'}"
                )
            i += 1
        return i
    raise Refuse(f"sed {command!r} {_WHY.get(command, 'is not an allowed command')}")


def sed_script_reason(script: str) -> str | None:
    """Why this sed script could write, run or read another file (``None``: it only prints)."""
    try:
        _walk(script)
    except Refuse as refusal:
        return refusal.reason
    return None


def _walk(script: str) -> None:
    i, n = 0, len(script)
    while i < n:
        if script[i] in " \t;}":
            i += 1
            continue
        i = _addresses(script, i)
        if i >= n:
            raise Refuse("sed: an address without a command")
        command = script[i]
        i = _command(script, i + 1, command)
        if command != "{" and i < n and script[i] not in " \t;}":
            raise Refuse("sed: unexpected text after a command")


def check_sed(verb: str, args: Sequence[Word]) -> None:
    """sed [-n -E -s -z -u -l N --sandbox --debug] [-e SCRIPT...] [SCRIPT] [FILE...]"""
    parsed = parse(verb, args, _SED)
    scripts = [parsed.value_words.get(k) for k, (key, _v) in enumerate(parsed.options)
               if key in ("-e", "--expression")]  # fmt: skip
    files = parsed.operands
    if not scripts:
        if not files:
            raise Refuse("sed without a script (-f is refused)")
        scripts, files = [files[0]], files[1:]
    for k, (key, value) in enumerate(parsed.options):
        if key in ("-e", "--expression") and k not in parsed.value_words and value is not None:
            scripts.append(Word(value, value))
    for word in scripts:
        if word is None:
            continue
        if word.glob:
            raise Refuse("sed: quote the script (bash would expand its wildcards)")
        reason = sed_script_reason(word.text)
        if reason is not None:
            raise Refuse(reason)
    for word in files:
        if word.lead_glob:
            raise Refuse("sed: a glob starting with a wildcard could expand to -i; write ./*")
        reason = content_reason(word)
        if reason is not None:
            raise Refuse(f"sed: {reason}")
