"""find as bfs 4.1.1 (the CLI's function) or GNU find: primaries allowed in both, or neither."""

from __future__ import annotations

import pytest

from flower.roles.ephemeral import decide, explain

ALLOWED = [
    "find . -name '*.py' -type f",
    "find src -maxdepth 2 -type d",
    "find . -path ./node_modules -prune -o -name '*.js' -print",
    "find . \\( -name a -o -name b \\) -print0",
    "find . -newer setup.py -ls",
    "find . -newermt 2024-01-01",
    "find . -size +1M -printf '%s %p\\n'",
    "find . -empty -not -path '*/.git/*'",
    "find -L . -xtype l",
    "find . -regextype posix-extended -regex '.*\\.(c|h)$'",
    "find . -D exec -name x",
    "find . -O3 -name x -quit",
    "find . -name -delete",  # -delete is -name's pattern here, in both parsers
    "find *.py -maxdepth 0",  # a literal `.` in the suffix: no primary can come out of it
    "find ~/.ssh -name '*.pub'",  # names only: find prints no content
    "find / -maxdepth 1",
]

REFUSED = [
    ("find . -name X -rm", "-rm deletes files"),
    ("find . -delete", "-delete deletes files"),
    ("find . -exec rm '{}' ';'", "-exec runs a command"),
    ("find . -execdir id \\;", "-execdir runs a command"),
    ("find . -ok rm '{}' \\;", "-ok runs a command"),
    ("find . -okdir rm '{}' \\;", "-okdir runs a command"),
    ("find . -exec rm {} +", "brace"),  # the lexer refuses the braces first
    ("find . -fprint out", "-fprint writes a file"),
    ("find . -fprint0 out", "-fprint0 writes a file"),
    ("find . -fprintf out %p", "-fprintf writes a file"),
    ("find . -fls out", "-fls writes a file"),
    ("find . -files0-from list", "-files0-from reads paths from a file"),
    ("find . -status", "-status"),
    ("find . -exit", "-exit"),
    ("find . -exclude -name x", "not an allowed primary"),
    ("find . -name *.py", "quote the pattern"),
    ("find . -D exec,rm -name x", "-D takes only debug flag names"),
    ("find *", "glob"),
    ("find . -name", "missing its argument"),
    ("find . '-delete'", "-delete deletes files"),
    ("find . -del*", "glob"),
]


@pytest.mark.parametrize("cmd", ALLOWED)
def test_allowed(cmd: str) -> None:
    assert decide(cmd) is True, explain(cmd)


@pytest.mark.parametrize(("cmd", "reason"), REFUSED)
def test_refused_with_reason(cmd: str, reason: str) -> None:
    assert decide(cmd) is False
    assert reason in (explain(cmd) or "")
