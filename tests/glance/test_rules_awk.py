"""awk judged by its language: gawk's reach (commands, files, network, environment) refused,
gawk and mawk agreeing on what the accepted programs mean, and every accepted program ends."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flower.roles.ephemeral import decide, explain
from flower.roles.glance.awk import awk_program_reason

from ..fuzz import examples

PROGRAMS = [
    "{print $1}",
    "$3 > 100 {print $1}",
    "{print}$1>0",
    "NR<=3",
    "$1 || $2",
    "/a|b/ {n++} END {print n+0}",
    '{s += $2} END {printf "%d\\n", s}',
    "length($0) > 80",
    "{ a[$1]++ } END { for (k in a) print k, a[k] }",
    "{ for (i = 1; i <= NF; i++) s += $i } END { print s }",
    '{ for (i = NF; i > 0; i--) printf "%s ", $i; print "" }',
    "BEGIN { for (i = 0; i < 10; i += 2) print i }",
    '{ print $1 " -> " $2 }',
    "$1 ~ /^[0-9]+$/",
    "{ x = $1 / 2; print x }",
    "{ print ($1 > $2) }",  # parenthesised: refused conservatively? no: print then `>`
    "!seen[$0]++",
    'BEGIN { FS = ":" } { print $1 }',
    '{ gsub(/a/, "b"); print }',
    "NR == FNR { a[$1]; next } $1 in a",
    "{ print substr($0, 1, 10) } # a comment",
]
#: of PROGRAMS, the ones refused anyway (a `>` inside a print statement, even parenthesised)
CONSERVATIVE = {"{ print ($1 > $2) }"}

REFUSED = [
    ('BEGIN { system("id") }', "system runs a command"),
    ('BEGIN { "id" | getline x }', "pipe"),
    ('BEGIN { getline x < "/etc/passwd" }', "getline"),
    ('{ print | "sh" }', "| and |& pipe"),
    ('BEGIN { "date" |& getline }', "|&"),
    ('{ print > "out" }', "print > and >> write files"),
    ('{ printf "%s", $0 >> "out" }', "write files"),
    ('BEGIN { print ENVIRON["HOME"] }', "ENVIRON prints the environment"),
    ('BEGIN { print PROCINFO["pid"] }', "PROCINFO"),
    ('BEGIN { ARGV[1] = "/inet/tcp/0/x/80"; ARGC = 2 } { print }', "ARGV"),
    ('BEGIN { print SYMTAB["ENVIRON"]["HOME"] }', "SYMTAB"),
    ('BEGIN { print FUNCTAB["x"] }', "FUNCTAB"),
    ('@load "filefuncs"; BEGIN { }', "@ directives"),
    ('BEGIN { f = "system"; @f("id") }', "@ directives"),
    ('BEGIN { close("x") }', "close"),
    ("BEGIN { while (1) { } }", "while loops may never end"),
    ("BEGIN { do { } while (1) }", "do loops"),
    ("BEGIN { for (;;); }", "counting for loops"),
    ("BEGIN { for (i = 0; i < 1e300; i++); }", "counting for loops"),
    ("BEGIN { for (i = 0; i < n; i++); }", "counting for loops"),
    ("{ for (i = 1; i <= NF; i++) i = 0 }", "changes i"),
    ("{ for (i = 1; i <= NF; i++) $(i+1) = 1 }", "grow NF"),
    ("function f() { f() } BEGIN { f() }", "functions are refused"),
    ("{ if ($1) /x/ }", "regex by some awks"),
    ("{ x++ /2/ 1 }", "regex by some awks"),
    ("/[/]/", "bracket"),
    ('{ print "x }', "unterminated string"),
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_programs(program: str) -> None:
    expected = None if program not in CONSERVATIVE else awk_program_reason(program)
    assert awk_program_reason(program) == expected
    assert (expected is None) == decide(f"awk '{program}' f")


@pytest.mark.parametrize(("program", "reason"), REFUSED)
def test_refused_programs(program: str, reason: str) -> None:
    found = awk_program_reason(program)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    ("cmd", "reason"),
    [
        ("awk '{print}' /inet/tcp/0/evil.example/80", "network"),
        ("awk '{print}' /ine?/tcp/0/x/80", "network"),
        ("awk '{print}' /inet6/udp/0/x/53", "network"),
        ("awk -f prog.awk f", "-f is not an allowed option"),
        ("awk -E prog.awk f", "-E"),
        ("awk -i inplace '{print}' f", "-i"),
        ("awk -l ordchr '{print}' f", "-l"),
        ("awk -e 'BEGIN{}' f", "-e"),
        ("awk --exec prog f", "--exec"),
        ("awk --source 'BEGIN{}'", "--source"),
        ("awk --assign x=1 '{print}' f", "--assign"),  # mawk: the program would be `x=1`
        ("awk -W exec prog f", "-W"),
        ("awk -v ENVIRON=1 '{print}' f", "assignable"),
        ("awk '{print}' .env", ".env"),
        ("awk '{print}' /proc/self/environ", "/proc"),
        ("awk NR==* f", "quote the program"),
        ("awk 'NR==1' *", "may be an option"),
        ("awk", "program"),
    ],
)
def test_refused_commands(cmd: str, reason: str) -> None:
    assert decide(cmd) is False
    assert reason in (explain(cmd) or "")


def test_assignments_and_separators_pass() -> None:
    assert decide("awk -F: -v OFS=, '{print $1, $3}' /etc/passwd") is True
    assert decide("awk '{print x}' x=1 f") is True


BAD = ['system("id")', 'ENVIRON["K"]', '"id" | getline', 'print > "o"', "while(1){}"]


@given(st.sampled_from([p for p in PROGRAMS if p not in CONSERVATIVE]), st.data())
@settings(max_examples=examples(100))
def test_a_bad_statement_anywhere_is_refused(program: str, data: st.DataObject) -> None:
    """Insert a refused statement at any ``;``/``{``/``}`` boundary of an accepted program."""
    bad = data.draw(st.sampled_from(BAD))
    cuts = [k + 1 for k, c in enumerate(program) if c in "{;"] or [0]
    cut = data.draw(st.sampled_from(cuts))
    if cut == 0:
        mutated = f"BEGIN {{ {bad} }} {program}"
    else:
        mutated = f"{program[:cut]} {bad}; {program[cut:]}"
    assert awk_program_reason(mutated) is not None, mutated


@pytest.mark.parametrize("awk", ["gawk", "mawk"])
def test_accepted_programs_end_in_real_awks(awk: str, tmp_path: Path) -> None:
    """Every accepted program runs to its end in gawk and in mawk, writing nothing."""
    binary = shutil.which(awk)
    if binary is None:
        pytest.skip(f"{awk} is not installed here")
    data = tmp_path / "f"
    data.write_text("1 2 3\nfoo bar 300\n4 5 6\n")
    for program in PROGRAMS:
        if awk_program_reason(program) is not None:
            continue
        result = subprocess.run(
            [binary, program, str(data), str(data)],
            capture_output=True,
            timeout=10,
            cwd=tmp_path,
            check=False,
        )
        assert result.returncode in (0, 1), (program, result.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
