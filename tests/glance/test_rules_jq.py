"""jq: the environment, other files and endless generators refused; JSON filters pass."""

from __future__ import annotations

import pytest

from flower.roles.ephemeral import decide, explain
from flower.roles.glance.jq import jq_program_reason

PROGRAMS = [
    ".",
    ".env",  # a field called env
    '."env"',
    '.["env"]',
    "$env",  # a variable called env
    ".items[] | .name",
    '"\\(.name) \\(.version)"',
    "[.[] | select(.x > 1)] | length",
    "to_entries | map(.key)",
    "[range(0; 3)]",
    "range(5)",
    ".. | numbers",
    "recurse",
    "input_filename",
    'paths(type == "number")',
    "# just a comment",
]

REFUSED = [
    ("env", "env prints the environment"),
    ("$ENV", "$ENV prints the environment"),
    ("$ENV.ANTHROPIC_API_KEY", "$ENV"),
    ("env | keys", "env"),
    ('"\\(env)"', "env"),
    ('"a \\("b \\(env)")"', "env"),
    ("{a: env}", "env"),
    ('import "x" as $x; $x', "import loads files"),
    ('include "x"; .', "include"),
    ("modulemeta", "modulemeta"),
    ("get_search_list", "search path"),
    ("repeat(1)", "repeat may never end"),
    ("range(infinite)", "range"),
    ("range(.n)", "range"),
    ("range(1e12)", "range"),
    ("range(0; 10; 0)", "range"),
    ("def f: f; f", "def"),
    ("until(false; .)", "until"),
    (".a | while(. < 3; . + 1)", "while"),
    ("[limit(infinite; repeat(1))]", "infinite"),
    ("recurse(. + 1)", "recurse(f)"),
    ("[[range(50)]] | combinations", "combinations"),
    ('"unterminated', "unterminated string"),
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_accepted_programs(program: str) -> None:
    assert jq_program_reason(program) is None


@pytest.mark.parametrize(("program", "reason"), REFUSED)
def test_refused_programs(program: str, reason: str) -> None:
    found = jq_program_reason(program)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    "cmd",
    [
        "jq . data.json",
        "jq -r .version package.json",
        "jq -rc '.[]' f.json",
        "jq --arg name x '.[$name]' f.json",
        "jq --argjson n 3 '.[:$n]' f.json",
        "jq --indent 4 . f.json",
        "jq -n --args '$ARGS.positional' a b .env",  # after --args the operands are values
        "jq --rawfile t notes.txt -n '$t'",
        "jq --slurpfile d data.json -n '$d'",
    ],
)
def test_accepted_commands(cmd: str) -> None:
    assert decide(cmd) is True, explain(cmd)


@pytest.mark.parametrize(
    ("cmd", "reason"),
    [
        ("jq -n env", "environment"),
        ("jq -f prog.jq f", "hides the program"),
        ("jq --from-file prog.jq f", "hides the program"),
        ("jq -L . -n 1", "-L"),
        ("jq --rawfile k .env -n '$k'", ".env"),
        ("jq --slurpfile k ~/.docker/config.json -n '$k'", ".docker"),
        ("jq . .npmrc", ".npmrc"),
        ("jq . /proc/self/environ", "/proc"),
        ("jq -n --args . -f x", "hides the program"),  # options still count after --args
        ("jq --arg x", "needs 2"),
        ("jq .a* f", "quote the filter"),
        ("jq . *", "wildcard"),
    ],
)
def test_refused_commands(cmd: str, reason: str) -> None:
    assert decide(cmd) is False
    assert reason in (explain(cmd) or "")
