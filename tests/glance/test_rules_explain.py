"""explain(): one line for the model, naming the refused part, never echoing values."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flower.roles import ephemeral
from flower.roles.ephemeral import decide, explain

from ..fuzz import examples

EXAMPLES = [
    ("find . -name X -rm", "find -rm deletes files"),
    ("lsof -i :8080", "lsof without -n resolves host names: add -n"),
    ("env", "env prints the environment (API key included)"),
    ("kubectl get pods", "kubectl talks to an API server over the network"),
    ("cat .env", "cat: .env may hold secrets"),
    ("tail -f log", "tail -f is not an allowed option"),
    ("sort -o out f", "sort -o is not an allowed option"),
    ("cd src", "cd changes the shell's state for later commands"),
]


@pytest.mark.parametrize(("cmd", "start"), EXAMPLES)
def test_reasons_name_the_refused_part(cmd: str, start: str) -> None:
    reason = explain(cmd)
    assert reason is not None and reason.startswith(start)


SECRET = "sk-ant-api03-SECRETVALUE"


@pytest.mark.parametrize(
    "cmd",
    [
        f"git log --output={SECRET}",
        f"git -c user.name={SECRET} log",
        f"sort --output={SECRET} f",
        f"docker -H tcp://{SECRET} ps",
        f"grep --filter={SECRET} x",
        f"rg --pre={SECRET} x",
        f"awk -v x={SECRET} 'BEGIN{{print ENVIRON[\"K\"]}}'",
        f"printenv {SECRET}",
        f"ls --hide={SECRET} > out",
        f"sed 's/{SECRET}/x/w out' f",
        f"jq -n --arg k {SECRET} env",
    ],
)
def test_reasons_never_echo_option_values(cmd: str) -> None:
    reason = explain(cmd)
    assert reason is not None and "SECRETVALUE" not in reason


@given(st.text(max_size=60))
@settings(max_examples=examples(300))
def test_explain_agrees_with_decide(cmd: str) -> None:
    reason = explain(cmd)
    assert (reason is None) == decide(cmd)
    if reason is not None:
        assert reason and "\n" not in reason and len(reason) <= 200


@pytest.mark.parametrize(
    "cmd",
    [
        "cat " + "?" * 3000 + ".env",
        "git log " + "x:" * 1500,
        "cat " + "*a" * 1900,
        "ls " + "a " * 3000,
        "jq '" + '"\\(' * 300 + "." + ')"' * 300 + "'",
    ],
)
def test_long_commands_are_decided_quickly(cmd: str) -> None:
    """Whatever a model sends, the gate answers fast (no recursion, bounded work)."""
    start = time.monotonic()
    assert decide(cmd) is False
    assert time.monotonic() - start < 2


def test_a_crash_is_a_reason_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(words: object) -> None:
        raise KeyError("bug")

    monkeypatch.setattr(ephemeral, "_check_segment", broken)
    assert explain("ls") == "the glance checker could not judge this command"
    assert ephemeral.is_ephemeral("ls") is False
