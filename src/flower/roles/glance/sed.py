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
from dataclasses import dataclass, field

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


@dataclass
class _Cmd:
    """One parsed command: its letter, label (b t T :), address, and enclosing blocks."""

    name: str
    label: str
    addressed: bool
    blocks: tuple[int, ...]


@dataclass
class _Program:
    """The commands of every script (``-e`` chunks share labels and blocks)."""

    commands: list[_Cmd] = field(default_factory=list)
    open_blocks: list[int] = field(default_factory=list)
    next_block: int = 0


def _label(script: str, i: int) -> tuple[int, str]:
    n = len(script)
    while i < n and script[i] in " \t":
        i += 1
    start = i
    while i < n and (script[i].isalnum() or script[i] == "_"):
        i += 1
    return i, script[start:i]


def _command(script: str, i: int, command: str) -> tuple[int, str]:
    """Skip the arguments of ``command`` (read at ``script[i-1]``): (index after, label)."""
    n = len(script)
    if command in _PLAIN or command in "{}":
        return i, ""
    if command in "qQlL":
        while i < n and script[i] in " \t" and script[i:].lstrip(" \t")[:1].isdigit():
            i += 1
        while i < n and script[i].isdigit():
            i += 1
        return i, ""
    if command in "btT:":
        return _label(script, i)
    if command in "sy":
        if i >= n or script[i] in "\\\n":
            raise Refuse(f"sed {command}: bad delimiter")
        delim = script[i]
        i = _skip_regex(script, i + 1, delim)
        i = _skip_regex(script, i, delim)
        while command == "s" and i < n and (script[i] in "gpiImMew" or script[i].isdigit()):
            if script[i] in "ew":
                flag = script[i]
                what = "runs a command" if flag == "e" else "writes a file"
                raise Refuse(f"sed s///{flag} {what}")
            i += 1
        return i, ""
    raise Refuse(f"sed {command!r} {_WHY.get(command, 'is not an allowed command')}")


def sed_script_reason(script: str) -> str | None:
    """Why this sed script could write, run, read another file or loop forever (or None)."""
    try:
        program = _Program()
        _walk(script, program)
        _check_program(program)
    except Refuse as refusal:
        return refusal.reason
    return None


def _walk(script: str, program: _Program) -> None:
    i, n = 0, len(script)
    while i < n:
        if script[i] in " \t;":
            i += 1
            continue
        start = i
        i = _addresses(script, i)
        if i >= n:
            raise Refuse("sed: an address without a command")
        command, addressed = script[i], i > start
        i, label = _command(script, i + 1, command)
        blocks = tuple(program.open_blocks)
        if command == "{":
            program.open_blocks.append(program.next_block)
            program.next_block += 1
        elif command == "}":
            if not program.open_blocks:
                raise Refuse("sed: unbalanced }")
            program.open_blocks.pop()
        program.commands.append(_Cmd(command, label, addressed, blocks))
        if command not in "{}" and i < n and script[i] not in " \t;}":
            raise Refuse("sed: unexpected text after a command")


def _loop_reads(commands: list[_Cmd], first: int, branch: int) -> bool:
    """Does every pass from ``first`` to the backward branch at ``branch`` read a line?

    Yes when an unaddressed ``n``/``N`` lies between them, not inside a block the branch is
    outside of, and no other branch in between could skip it. At the end of the input ``n`` and
    ``N`` end the script, so such a loop stops.
    """
    span = commands[first:branch]
    if any(c.name in "btT" for c in span):
        return False
    target = commands[branch].blocks
    return any(
        c.name in "nN" and not c.addressed and target[: len(c.blocks)] == c.blocks for c in span
    )


def _check_program(program: _Program) -> None:
    """Balanced blocks, and no loop that can run without reading input."""
    if program.open_blocks:
        raise Refuse("sed: unbalanced {")
    commands = program.commands
    labels = {c.label: k for k, c in enumerate(commands) if c.name == ":"}
    for k, command in enumerate(commands):
        if command.name not in "btT" or not command.label:
            continue
        target = labels.get(command.label)
        if target is None:
            raise Refuse(f"sed: branch to an unknown label {command.label[:20]!r}")
        if target < k and not _loop_reads(commands, target + 1, k):
            raise Refuse("sed: a backward branch that reads no input may loop forever")
    names = {c.name for c in commands}
    if "D" in names and names & set("Ggxsy"):
        raise Refuse("sed D with G, g, x, s or y may refill the pattern space forever")


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
    program = _Program()
    for word in scripts:
        if word is None:
            continue
        if word.glob:
            raise Refuse("sed: quote the script (bash would expand its wildcards)")
        _walk(word.text, program)
    _check_program(program)
    for word in [*files, *parsed.separate_values(except_keys=("-e", "--expression"))]:
        if word.lead_glob:
            raise Refuse("sed: a glob starting with a wildcard could expand to -i; write ./*")
        reason = content_reason(word)
        if reason is not None:
            raise Refuse(f"sed: {reason}")
