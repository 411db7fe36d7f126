"""The glance lexer: words as bash sees them, and refusal of whatever it does not model."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flower.roles.glance.lexer import HOME_MARK, PWD_MARK, Op, Redir, Refuse, Word, lex, segments

from ..fuzz import examples


def words(cmd: str) -> list[str]:
    return [t.text for t in lex(cmd) if isinstance(t, Word)]


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        ("ls -la", ["ls", "-la"]),
        ("grep 'a b' \"c d\"", ["grep", "a b", "c d"]),
        ("g\\it status", ["git", "status"]),
        ('basename "$PWD"', ["basename", PWD_MARK]),
        ('ls "${HOME}/x"', ["ls", HOME_MARK + "/x"]),
        ('echo "a$HOME"', ["echo", "a" + HOME_MARK]),
        ("git log @{u}..HEAD", ["git", "log", "@{u}..HEAD"]),
        ("[ -d x ]", ["[", "-d", "x", "]"]),
    ],
)
def test_words(cmd: str, expected: list[str]) -> None:
    assert words(cmd) == expected


@pytest.mark.parametrize(
    "cmd",
    [
        "ls $PWD",  # unquoted: word splitting
        "ls ${PWD}",
        'ls "$PWDX"',
        'ls "$OLDPWD"',
        'ls "${HOME:-/}"',
        'ls "${HOME}${PATH}"',
        'ls "$1"',
        "ls '$HOME'x$HOME",
        'ls "`id`"',
        "ls $(id)",
        "ls {a,b}",
        "git log @{a,b}",
        "ls #x",
        "ls 'x",
        'ls "x',
        "ls \\",
        "ls &",
        "cat <<EOF",
        "cat <<<x",
        "cat <(id)",
        "(ls)",
        "ls }",
    ],
)
def test_refused(cmd: str) -> None:
    with pytest.raises(Refuse):
        segments(lex(cmd))


@pytest.mark.parametrize(
    ("text", "glob", "lead", "suffix"),
    [
        ("*.log", True, True, ".log"),
        ("src/*.py", True, False, ".py"),
        ("'*.log'", False, False, "*.log"),
        ("x[ab].c", True, False, ""),  # a bracket: no literal suffix is trusted
        ("[", False, False, "["),  # an unmatched bracket is a literal
        ("a]", False, False, "a]"),
        ("--include=*.py", True, False, ".py"),
        ("-*", True, False, ""),
        ("\\*x", False, False, "*x"),
    ],
)
def test_glob_facts(text: str, glob: bool, lead: bool, suffix: str) -> None:
    word = lex(text)[0]
    assert isinstance(word, Word)
    assert (word.glob, word.lead_glob, word.literal_suffix()) == (glob, lead, suffix)


@pytest.mark.parametrize(
    ("text", "in_name"),
    [("--out*", True), ("--include=*.py", False), ("-*", True), ("-g*.py", False), ("*", True)],
)
def test_glob_in_option_name(text: str, in_name: bool) -> None:
    word = lex(text)[0]
    assert isinstance(word, Word) and word.glob_in_name() is in_name


def test_operators_and_safe_redirections() -> None:
    tokens = lex("ls 2>/dev/null | wc -l && echo ok")
    assert Op("|") in tokens and Op("&&") in tokens and Redir("2>") in tokens
    assert [[w.text for w in s] for s in segments(tokens)] == [["ls"], ["wc", "-l"], ["echo", "ok"]]


@pytest.mark.parametrize("cmd", ["ls > f", "ls 2>&-", "ls >/dev/nul?", "ls ;", "ls | | wc"])
def test_unsafe_redirections_and_empty_segments(cmd: str) -> None:
    with pytest.raises(Refuse):
        segments(lex(cmd))


#: No character here can make bash run anything, so handing these strings to a real bash as
#: printf's arguments is harmless even if the lexer is wrong.
ALPHABET = [*"ab-'\"\\ \t{}@*?[]=,.:/", "@{u}", '"$PWD"', '"${HOME}"', "'x y'", '"x y"']


@given(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=10).map("".join))
@settings(max_examples=examples(150), deadline=None)
def test_marks_and_words_match_bash(text: str) -> None:
    """Accepted words equal bash's (with $PWD/$HOME standing for their marks)."""
    try:
        tokens = lex(text)
    except Refuse:
        return
    if not tokens:
        return
    env = {"PATH": "/usr/bin:/bin", "HOME": "HOME"}
    result = subprocess.run(
        ["bash", "--norc", "--noprofile", "-f", "-c", f"printf '%s\\0' {text}"],
        capture_output=True,
        check=True,
        timeout=10,
        env=env,
        cwd="/",
    )
    bash_words = result.stdout.decode().split("\0")[:-1]
    ours = [t.text.replace(HOME_MARK, "HOME").replace(PWD_MARK, "/") for t in tokens]
    assert ours == bash_words
