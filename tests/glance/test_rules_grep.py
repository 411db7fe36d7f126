"""grep (GNU grep in flower's sessions; ugrep 7.8.4 with the CLI's GNU grep fallback in one
without the Grep tool), egrep/fgrep and ripgrep 14."""

from __future__ import annotations

import pytest

from flower.roles.ephemeral import decide, explain
from flower.roles.glance.grep import runs_gnu_grep
from flower.roles.glance.lexer import Word, lex

ALLOWED = [
    "grep -c '>' index.html",
    "grep -E '^(a|b)$' f",
    "grep -e -v -- f",  # -e takes `-v` as the pattern
    "grep -i -A 2 -B1 error log.txt",
    "grep -lZ foo a b",  # GNU grep (fallback), not recursive
    "grep -f patterns.txt f",
    "grep -d skip foo ./*.txt",
    "grep --color=never -w foo f",
    "egrep 'a|b' f",
    "fgrep -x foo f",
    "rg -n TODO src",
    "rg --files",
    "rg -t py -g '!tests' foo",
    "rg -l --hidden TODO",  # gitignored files stay skipped
    "rg -u TODO",  # ignored files, but not hidden ones
    "rg -e --pre=sh x",  # the pattern is the literal `--pre=sh`
    "rg --json foo",
    "rg -r X foo f",  # -r is --replace in rg
]

REFUSED = [
    ("grep -Q foo", "-Q is not an allowed option"),
    ("grep --query foo", "--query"),
    ("grep --filter='*:sh' foo .", "--filter"),
    ("grep --pager=less foo f", "--pager"),
    ("grep --view=vim foo f", "--view"),
    ("grep --save-config foo", "--save-config"),
    ("grep ---x foo", "---x"),
    ("grep --from=list foo", "--from"),
    ("grep -D read foo f", "-D"),
    ("grep -d bogus foo f", "-d takes"),
    ("grep --incl=x foo", "an abbreviation?"),
    ("grep foo *", "wildcard"),
    ("grep * f", "wildcard"),
    ("grep -f .env x", ".env"),
    ("grep KEY .env", ".env"),
    ("grep -rZ KEY .", "GNU grep"),
    ("grep --null -rn KEY .", "GNU grep"),
    ("egrep -r KEY .", "GNU grep"),
    ("grep -rn TODO src", "GNU grep here, which reads gitignored .env"),
    ("grep -rn --include='*.py' --exclude-dir=node_modules foo .", "git grep or rg"),
    ("grep -t py -rn foo", "GNU grep"),
    ("grep -r KEY ~", "GNU grep"),
    ("rg --pre=sh foo", "--pre"),
    ("rg --pre sh foo", "--pre"),
    ("rg --pre-glob '*' foo", "--pre-glob"),
    ("rg -z foo", "-z"),
    ("rg --search-zip foo", "--search-zip"),
    ("rg --hostname-bin=id foo", "--hostname-bin"),
    ("rg --hidden --no-ignore KEY", ".env"),
    ("rg -uu KEY", ".env"),
    ("rg -e -- --pre=sh x", "--pre"),  # -e consumes the `--`
    ("rg foo *", "wildcard"),
    ("rg KEY ~/.config", "home"),
    ("rg --ignore-file=.env x", ".env"),
]


@pytest.mark.parametrize("cmd", ALLOWED)
def test_allowed(cmd: str) -> None:
    assert decide(cmd) is True, explain(cmd)


@pytest.mark.parametrize(("cmd", "reason"), REFUSED)
def test_refused_with_reason(cmd: str, reason: str) -> None:
    assert decide(cmd) is False
    assert reason in (explain(cmd) or "")


def _args(cmd: str) -> list[Word]:
    return [t for t in lex(cmd) if isinstance(t, Word)][1:]


@pytest.mark.parametrize(
    ("cmd", "gnu"),
    [
        ("grep -rn foo", False),
        ("grep -rnZ foo", True),
        ("grep -z foo", True),
        ("grep --null foo", True),
        ("grep --filter=x foo", True),
        ("grep -e --pager foo", True),  # the CLI checks every argument, patterns too
        ("grep -@ foo", True),
        ("grep ---x foo", True),
        ("grep --hidden foo", False),
    ],
)
def test_fallback_routing(cmd: str, gnu: bool) -> None:
    """The CLI's case patterns, as bash matches them, decide which grep runs."""
    assert runs_gnu_grep("grep", _args(cmd)) is gnu
    assert runs_gnu_grep("egrep", _args(cmd)) is True
