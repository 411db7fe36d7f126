"""Shell builtins (echo, printf, test, true/false, command) and toolchain versions (incl. pip).

These were refused before, and each refusal cost a worker dispatch for a one-line answer
(``python3 --version``, ``test -d .git && echo repo``, ``cat X 2>/dev/null || echo missing``).
Each is accepted in the narrowest form that answers the question:

* ``echo``/``printf`` print their words, and the lexer already guarantees those words are
  static (no ``$``, no substitution). ``printf -v VAR`` assigns a shell variable (``printf -v
  PATH ...`` would redirect later commands; ``-v 'a[$(cmd)]'`` runs code), so printf takes no
  option at all.
* ``test``/``[`` only stat files and compare strings, except ``-v NAME``/``-R NAME``: bash
  evaluates an array subscript there, so ``test -v 'a[$(id)]'`` runs ``id``. Those two are
  refused, and so is ``[[`` (its arithmetic operators evaluate ``a[$(cmd)]`` operands).
* ``command -v``/``-V`` only look a name up; every other form runs the name.
* a version flag of a toolchain prints a constant and exits before reading the project: see
  :data:`VERSIONS` for the forms and :data:`NOT_VERSIONED` for the toolchains refused anyway.
* ``pip list/show/freeze/check`` read installed metadata. Anything that reaches an index
  (``--outdated``, ``--uptodate``, ``--index-url``, ``--find-links``, ``--proxy``...), writes
  (``--log``, ``--cache-dir``) or runs another interpreter (``--python``) is not listed, and
  the glance hook exports ``PIP_DISABLE_PIP_VERSION_CHECK=1`` (see ``GLANCE_ENV``) so pip's
  self-check neither reaches the network nor writes its cache.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .lexer import Refuse, Word
from .options import parse, spec

__all__ = [
    "NOT_VERSIONED",
    "VERSIONS",
    "check_command",
    "check_echo",
    "check_pip",
    "check_printf",
    "check_test",
    "check_true",
    "check_version",
    "toolchain",
]


def check_echo(verb: str, args: Sequence[Word]) -> None:
    """echo prints its (static) words; -n -e -E only change the formatting."""


def check_true(verb: str, args: Sequence[Word]) -> None:
    """true/false ignore their arguments."""


def check_printf(verb: str, args: Sequence[Word]) -> None:
    """printf FORMAT [ARG...] with no option: ``-v`` assigns a variable."""
    if not args:
        raise Refuse("printf needs a format")
    first = args[0]
    if first.lead_glob or (first.text.startswith("-") and first.text != "--"):
        raise Refuse("printf options are refused (-v assigns a shell variable)")
    if first.text == "--" and (len(args) < 2 or args[1].lead_glob):
        raise Refuse("printf needs a format")


_TEST_UNARY = frozenset(
    "-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S -z -n -o".split()
)
_TEST_BINARY = frozenset(
    "= == != < > -eq -ne -lt -le -gt -ge -nt -ot -ef -a -o".split()
)  # fmt: skip


def check_test(verb: str, args: Sequence[Word]) -> None:
    """test/[ with file tests and comparisons, never -v/-R (they evaluate a[subscript])."""
    words = list(args)
    if verb == "[":
        if not words or words[-1].text != "]":
            raise Refuse("[ needs a closing ]")
        words = words[:-1]
    for word in words:
        text = word.text
        if word.lead_glob:
            raise Refuse(f"{verb}: a glob starting with a wildcard could expand to -v")
        if text in ("-v", "-R"):
            raise Refuse(f"{verb} {text} evaluates an array subscript, which can run code")
        if text.startswith("-") and len(text) > 1 and text not in _TEST_UNARY | _TEST_BINARY:
            raise Refuse(f"{verb} {text[:20]} is not an allowed operator")


def check_command(verb: str, args: Sequence[Word]) -> None:
    """``command -v/-V NAME`` only looks a name up; every other form runs it."""
    lookup = False
    for word in args:
        text = word.text
        if not text.startswith("-") or text == "--":
            break
        if word.glob or not set(text[1:]) <= set("vVp"):
            raise Refuse("command runs its operand unless given -v or -V")
        lookup = lookup or bool(set(text[1:]) & set("vV"))
    if not lookup:
        raise Refuse("command runs its operand unless given -v or -V")


#: toolchain -> the exact argument lists that only print a version
VERSIONS: dict[str, frozenset[tuple[str, ...]]] = {
    "python": frozenset({("--version",), ("-V",), ("-VV",)}),  # before site import
    "node": frozenset({("--version",), ("-v",)}),
    "go": frozenset({("version",)}),  # GOTOOLCHAIN=local in GLANCE_ENV: no toolchain download
    "gcc": frozenset({("--version",)}),
    "make": frozenset({("--version",), ("-v",)}),  # exits before reading the Makefile
    "cmake": frozenset({("--version",)}),
    "ruby": frozenset({("--version",)}),  # `ruby -v` also turns on verbose mode
    "perl": frozenset({("--version",), ("-v",)}),
    "uv": frozenset({("--version",), ("-V",)}),
    "poetry": frozenset({("--version",)}),
}
_ALIASES = {"g++": "gcc", "cc": "gcc", "c++": "gcc", "clang": "gcc", "clang++": "gcc"}

#: toolchains refused even for their version, with the reason
NOT_VERSIONED: dict[str, str] = {
    "npm": "npm's update notifier may query the registry and writes its state file",
    "npx": "npx may download and run a package",
    "yarn": "yarn (through corepack) may download itself",
    "pnpm": "pnpm (through corepack) may download itself",
    "cargo": "rustup obeys rust-toolchain.toml: it may download a toolchain or run one from a"
    " path the workspace names",
    "rustc": "rustup obeys rust-toolchain.toml: it may download a toolchain or run one from a"
    " path the workspace names",
    "java": "the JVM writes a perf-data file under /tmp even for -version",
    "javac": "the JVM writes a perf-data file under /tmp even for -version",
}
_PYTHON = re.compile(r"^python(3(\.\d{1,2})?)?$")
_PIP_VERB = re.compile(r"^pip(3(\.\d{1,2})?)?$")


def toolchain(verb: str) -> str | None:
    """The :data:`VERSIONS` key for ``verb`` (``python3.11`` -> ``python``), if any."""
    if _PYTHON.match(verb):
        return "python"
    if _PIP_VERB.match(verb):
        return "pip"
    return _ALIASES.get(verb, verb if verb in VERSIONS or verb in NOT_VERSIONED else None)


def check_version(verb: str, args: Sequence[Word]) -> None:
    """Only the exact version forms of :data:`VERSIONS`."""
    name = toolchain(verb) or verb
    if name in NOT_VERSIONED:
        raise Refuse(f"{verb}: {NOT_VERSIONED[name]}")
    if tuple(w.text for w in args) not in VERSIONS[name]:
        forms = " or ".join(" ".join(f) for f in sorted(VERSIONS[name]))
        raise Refuse(f"{verb} may only be asked for its version here ({verb} {forms})")


_PIP_GENERAL = " -v -q --verbose --quiet --isolated --no-color --disable-pip-version-check"
_PIP_GENERAL += " --no-input --require-virtualenv --no-python-version-warning"
_PIP_SUBCOMMANDS: dict[str, str] = {
    "list": "l e --local --user --path= --format= --not-required --exclude-editable"
    " --include-editable --editable --exclude=",
    "freeze": "l --local --user --path= --all --exclude-editable --exclude=",
    "show": "f --files",
    "check": "",
}


def check_pip(verb: str, args: Sequence[Word]) -> None:
    """pip --version, or pip list/freeze/show/check without network or file options."""
    texts = [w.text for w in args]
    if texts in (["--version"], ["-V"]):
        return
    subcommands = [w for w in args if not w.text.startswith("-")]
    if not subcommands or subcommands[0].text not in _PIP_SUBCOMMANDS:
        raise Refuse("pip: only list, freeze, show, check and --version are glances")
    sub = subcommands[0].text
    rules = spec(_PIP_SUBCOMMANDS[sub] + _PIP_GENERAL.replace(" -v -q", " vq"))
    rest = [w for w in args if w is not subcommands[0]]
    parsed = parse(f"pip {sub}", rest, rules)
    if sub != "show" and parsed.operands:
        raise Refuse(f"pip {sub} takes no operands")
    if any(w.glob for w in parsed.operands):
        raise Refuse("pip show: globs are refused")
