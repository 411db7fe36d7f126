"""echo, printf, test/[, true/false, command, toolchain versions and pip: the narrow forms."""

from __future__ import annotations

import pytest

from flower.roles.ephemeral import GLANCE_ENV, decide, explain

ALLOWED = [
    "echo",
    "echo hi there",
    "echo -n x",
    "echo -e 'a\\tb'",
    "echo *",
    "printf '%s\\n' a b",
    "printf -- '-%s' x",
    "printf x",
    "true",
    "false",
    "true x",
    "test -d .git",
    "test -f pyproject.toml -a -r README.md",
    "test x = y",
    "[ -e x ]",
    "[ '(' -n x ')' ]",
    "[ 1 -lt 2 ]",
    "command -v git",
    "command -V ls",
    "command -pv ls",
    "python3 --version",
    "python -V",
    "python3.12 -VV",
    "node --version",
    "node -v",
    "go version",
    "gcc --version",
    "g++ --version",
    "clang --version",
    "make --version",
    "cmake --version",
    "ruby --version",
    "perl -v",
    "uv --version",
    "poetry --version",
    "pip --version",
    "pip3 -V",
    "pip list",
    "pip list --format=json --not-required",
    "pip3.11 list -l",
    "pip freeze --all",
    "pip show -f requests",
    "pip show requests flask",
    "pip check",
    "pip -q list",
    "env --version",
    'basename "$PWD"',
    'echo "$HOME"',
]

REFUSED = [
    ("printf -v PATH /tmp", "-v assigns"),
    ("printf -v 'a[$(id)]' x", "-v assigns"),
    ("printf", "needs a format"),
    ("printf * x", "-v assigns"),
    ("test -v 'a[$(id)]'", "array subscript"),
    ("[ -v x ]", "array subscript"),
    ("test -R x", "array subscript"),
    ("test * = x", "-v"),
    ("[ -d x", "closing ]"),
    ("[[ -d x ]]", "arithmetic"),
    ("test --foo", "not an allowed operator"),
    ("command ls", "runs its operand"),
    ("command -p ls", "runs its operand"),
    ("python3 -c 'print(1)'", "version"),
    ("python3 x.py", "version"),
    ("python3 -m pip list", "version"),
    ("node -e 1", "version"),
    ("go env", "version"),
    ("go run .", "version"),
    ("make", "version"),
    ("ruby -v", "version"),
    ("npm --version", "update notifier"),
    ("npx --version", "npx"),
    ("yarn --version", "corepack"),
    ("cargo --version", "rust-toolchain.toml"),
    ("rustc --version", "rust-toolchain.toml"),
    ("java -version", "perf-data"),
    ("javac -version", "perf-data"),
    ("pip install x", "only list"),
    ("pip list --outdated", "--outdated"),
    ("pip list -o", "-o"),
    ("pip list --uptodate", "--uptodate"),
    ("pip list -i https://evil", "-i"),
    ("pip list --index-url https://evil", "--index-url"),
    ("pip list --extra-index-url https://evil", "--extra-index-url"),
    ("pip list --find-links /tmp", "--find-links"),
    ("pip list --proxy http://evil", "--proxy"),
    ("pip list --log /tmp/log", "--log"),
    ("pip list --cache-dir /tmp/c", "--cache-dir"),
    ("pip --python ./evil list", "only list"),
    ("pip list --python ./evil", "--python"),
    ("pip freeze -r requirements.txt", "-r"),
    ("pip list extra", "no operands"),
    ("env", "environment"),
    ("env -0", "environment"),
    ("env FOO=1 ls", "environment"),
    ("printenv", "environment"),
    ("printenv HOME", "environment"),
    ("ls $PWD", "$ expansions"),
    ('ls "$OLDPWD"', "$ expansions"),
    ("echo $PATH", "$ expansions"),
    ("cd /", "changes the shell"),
    ("export A=1", "changes the shell"),
    ("xargs rm", "runs another command"),
    ("sudo ls", "runs another command"),
    ("/bin/ls", "path"),
    ("./ls", "path"),
    ("PAGER=cat git log", "VAR=value"),
    ("nope", "not on the glance list"),
]


@pytest.mark.parametrize("cmd", ALLOWED)
def test_allowed(cmd: str) -> None:
    assert decide(cmd) is True, explain(cmd)


@pytest.mark.parametrize(("cmd", "reason"), REFUSED)
def test_refused_with_reason(cmd: str, reason: str) -> None:
    assert decide(cmd) is False
    assert reason in (explain(cmd) or "")


def test_glance_env() -> None:
    """The variables the glance hook must export: pip's self-check, git's index refresh, go's
    toolchain download and pagers are what the accepted commands above rely on."""
    assert GLANCE_ENV["PIP_DISABLE_PIP_VERSION_CHECK"] == "1"
    assert GLANCE_ENV["PIP_NO_INPUT"] == "1"
    assert GLANCE_ENV["GIT_OPTIONAL_LOCKS"] == "0"
    assert GLANCE_ENV["GOTOOLCHAIN"] == "local"
    assert GLANCE_ENV["GIT_NO_LAZY_FETCH"] == "1"  # a partial clone would fetch blobs
    assert all(k.isupper() and isinstance(v, str) for k, v in GLANCE_ENV.items())
