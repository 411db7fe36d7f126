"""The generic option allow-list: which options of a binary a glance may use, and how they parse.

A deny-list has to know every dangerous option of every version of every binary; an allow-list
only has to know the options it lets through. So each binary gets a :class:`Spec` listing the
options known to be read-only, with how each takes its argument, and :func:`parse` walks the
words the way that binary's parser does, refusing any option it does not know.

One portability rule: a BSD ``getopt`` (macOS ``head``, ``sed``...) stops at the first operand
where GNU permutes, and some BSD tools take as a flag what GNU gives a value (BSD ``sed -l``,
``grep -C``). A value given as a separate word may then be a *file* to the tool, so
:attr:`Parsed.separate` keeps them for the readers' path checks.

Parsing the way the binary does matters as much as the list: ``rg -e -- --pre=sh`` hides an
option behind a ``--`` that is really the argument of ``-e``. :func:`parse` therefore consumes
option arguments exactly (attached ``-fFILE``/``--file=FILE`` or as the next word), honours
``--`` only where it is an option terminator, and stops at the first operand for binaries that
do not permute.

Long options are only ever accepted spelled out. Many parsers (glibc ``getopt_long``, Python's
``optparse``/``argparse``, git's parse-options) also accept any unique prefix, which is how
``sort --out=f`` reaches ``--output``; refusing abbreviations means the question "which option
does this prefix expand to in this version" never has to be answered. ``Spec.abbrev`` records
whether the binary would have accepted one, so the refusal can say "write it in full" instead of
"unknown option".

The compact notation of :func:`spec` (getopt-like): ``"ab c: d::"`` are short options ``-a``
``-b`` (flags), ``-c`` (argument, attached or next word) and ``-d`` (optional argument, attached
only); ``"--all --file= --color=?"`` are a long flag, a long option with an argument (``=V`` or
next word) and one whose argument is optional (``=V`` only).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from .lexer import Refuse, Word
from .paths import content_reason, recursive_reason

__all__ = ["Parsed", "Spec", "check_file_values", "merge", "parse", "spec"]


@dataclass(frozen=True)
class Spec:
    """The read-only options of one binary (see the module docstring for the notation)."""

    flags: frozenset[str] = frozenset()
    required: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    long_flags: frozenset[str] = frozenset()
    long_required: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    #: ``-NUM`` is an option (``head -20``, ``grep -3``)
    numeric: bool = False
    #: the binary's parser would expand an abbreviated long option (we still refuse it)
    abbrev: bool = True
    #: options may follow operands (GNU getopt); ``False``: the first operand ends the options
    permute: bool = True
    #: option keys (``-f``, ``--file``) whose value is a file read as content
    files: frozenset[str] = frozenset()

    def long_names(self) -> frozenset[str]:
        return self.long_flags | self.long_required | self.long_optional


def spec(
    text: str,
    *,
    numeric: bool = False,
    abbrev: bool = True,
    permute: bool = True,
    files: str = "",
) -> Spec:
    """Build a :class:`Spec` from the compact notation (see the module docstring)."""
    short: dict[str, set[str]] = {"": set(), ":": set(), "::": set()}
    long: dict[str, set[str]] = {"": set(), "=": set(), "=?": set()}
    for token in text.split():
        if token.startswith("--"):
            name = token[2:]
            kind = "=?" if name.endswith("=?") else "=" if name.endswith("=") else ""
            long[kind].add(name[: len(name) - len(kind)])
            continue
        i = 0
        while i < len(token):
            letter, i = token[i], i + 1
            kind = ""
            while i < len(token) and token[i] == ":":
                kind, i = kind + ":", i + 1
            short[kind].add(letter)
    return Spec(
        flags=frozenset(short[""]),
        required=frozenset(short[":"]),
        optional=frozenset(short["::"]),
        long_flags=frozenset(long[""]),
        long_required=frozenset(long["="]),
        long_optional=frozenset(long["=?"]),
        numeric=numeric,
        abbrev=abbrev,
        permute=permute,
        files=frozenset(files.split()),
    )


def merge(*specs: Spec, **changes: object) -> Spec:
    """The union of several specs (git's diff options + log options...), then ``changes``."""
    first = specs[0]
    union = Spec(
        flags=frozenset().union(*(s.flags for s in specs)),
        required=frozenset().union(*(s.required for s in specs)),
        optional=frozenset().union(*(s.optional for s in specs)),
        long_flags=frozenset().union(*(s.long_flags for s in specs)),
        long_required=frozenset().union(*(s.long_required for s in specs)),
        long_optional=frozenset().union(*(s.long_optional for s in specs)),
        numeric=any(s.numeric for s in specs),
        abbrev=first.abbrev,
        permute=first.permute,
        files=frozenset().union(*(s.files for s in specs)),
    )
    return replace(union, **changes)  # type: ignore[arg-type]


@dataclass
class Parsed:
    """The outcome of :func:`parse`: options in order (key, value) and the operands."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[Word] = field(default_factory=list)
    #: the value word of each option that has one (index into ``options``), for path checks
    value_words: dict[int, Word] = field(default_factory=dict)
    #: how many operands came before a ``--`` that ended the options (None: no such ``--``)
    dashdash: int | None = None
    #: option values given as a separate word, with their option: where a BSD variant of the
    #: tool takes that option as a flag, or stops at the first operand (macOS ``head README
    #: -n .env``), the word is a *file* to it, so readers judge these words like operands
    separate: list[tuple[str, Word]] = field(default_factory=list)

    def separate_values(self, *, except_keys: tuple[str, ...] = ()) -> list[Word]:
        return [word for key, word in self.separate if key not in except_keys]

    def has(self, *keys: str) -> bool:
        return any(key in keys for key, _ in self.options)

    def values(self, *keys: str) -> list[str]:
        return [value for key, value in self.options if key in keys and value is not None]


def parse(verb: str, args: Sequence[Word], rules: Spec) -> Parsed:
    """Walk ``args`` like the binary's option parser; refuse any option ``rules`` lacks."""
    parsed = Parsed()
    i, n = 0, len(args)
    only_operands = False
    while i < n:
        word, i = args[i], i + 1
        text = word.text
        if only_operands or text == "-" or not text.startswith("-"):
            parsed.operands.append(word)
            only_operands = only_operands or not rules.permute
            continue
        if word.glob_in_name():
            raise Refuse(f"{verb}: a glob like {_show(text)} could expand to any option")
        if text == "--":
            only_operands = True
            parsed.dashdash = len(parsed.operands)
        elif text.startswith("--"):
            i = _parse_long(verb, args, i, rules, parsed)
        elif rules.numeric and text[1:].isdigit():
            parsed.options.append(("-NUM", text[1:]))
        else:
            i = _parse_short(verb, args, i, rules, parsed)
    return parsed


def _next_value(verb: str, args: Sequence[Word], i: int, key: str, parsed: Parsed) -> str:
    """The value of ``key`` given as the next word (``args[i]``)."""
    if i >= len(args):
        raise Refuse(f"{verb} {key} is missing its value")
    value = args[i]
    if value.glob:
        raise Refuse(f"{verb} {key}: a glob as a separate value may expand to several words")
    parsed.value_words[len(parsed.options)] = value
    parsed.separate.append((key, value))
    return value.text


def _attached(parsed: Parsed, source: Word, value: str) -> str:
    """Record the value written inside the option's own word (``-fFILE``, ``--file=F``)."""
    pattern = value if source.glob else "".join(f"[{c}]" if c in "*?[" else c for c in value)
    wild = next((k for k, c in enumerate(value) if c in "*?["), None) if source.glob else None
    parsed.value_words[len(parsed.options)] = Word(value, pattern, wild is not None, wild)
    return value


def _parse_long(verb: str, args: Sequence[Word], i: int, rules: Spec, parsed: Parsed) -> int:
    text = args[i - 1].text
    name, eq, value = text[2:].partition("=")
    key = "--" + name
    if name in rules.long_flags and not eq:
        parsed.options.append((key, None))
    elif name in rules.long_required:
        if eq:
            value = _attached(parsed, args[i - 1], value)
        else:
            value = _next_value(verb, args, i, key, parsed)
            i += 1
        parsed.options.append((key, value))
    elif name in rules.long_optional:
        parsed.options.append((key, _attached(parsed, args[i - 1], value) if eq else None))
    elif name in rules.long_flags:
        raise Refuse(f"{verb} {key} takes no value")
    else:
        raise Refuse(_unknown_long(verb, name, rules))
    return i


def _unknown_long(verb: str, name: str, rules: Spec) -> str:
    if name and rules.abbrev and any(full.startswith(name) for full in rules.long_names()):
        return f"{verb} --{_show(name)} is not allowed (an abbreviation? write options in full)"
    return f"{verb} --{_show(name)} is not an allowed option"


def _parse_short(verb: str, args: Sequence[Word], i: int, rules: Spec, parsed: Parsed) -> int:
    text = args[i - 1].text
    for k in range(1, len(text)):
        letter = text[k]
        key = "-" + letter
        rest = text[k + 1 :]
        if letter in rules.flags:
            parsed.options.append((key, None))
        elif letter in rules.required:
            if rest:
                rest = _attached(parsed, args[i - 1], rest)
            else:
                rest = _next_value(verb, args, i, key, parsed)
                i += 1
            parsed.options.append((key, rest))
            return i
        elif letter in rules.optional:
            parsed.options.append((key, _attached(parsed, args[i - 1], rest) if rest else None))
            return i
        else:
            raise Refuse(f"{verb} -{_show(letter)} is not an allowed option")
    return i


def check_file_values(
    verb: str, parsed: Parsed, keys: Iterable[str], *, recursive: bool = False
) -> None:
    """Refuse option values that name a secret file (``grep -f .env``, ``jq --rawfile``)."""
    wanted = set(keys)
    judge = recursive_reason if recursive else content_reason
    for index, (key, value) in enumerate(parsed.options):
        if key not in wanted or value is None or value == "-":
            continue
        reason = judge(parsed.value_words[index])
        if reason is not None:
            raise Refuse(f"{verb} {key}: {reason}")


def _show(text: str) -> str:
    """An option name fit for a one-line reason (no value, bounded length)."""
    name = text.split("=", 1)[0]
    return name if len(name) <= 40 else name[:37] + "..."
