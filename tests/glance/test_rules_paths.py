"""Sensitive paths: secrets, process environments and endless devices, glob-aware."""

from __future__ import annotations

import fnmatch
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flower.roles.glance.lexer import Word, lex
from flower.roles.glance.paths import (
    content_reason,
    device_reason,
    glob_intersects,
    recursive_reason,
)

from ..fuzz import examples


def word(text: str) -> Word:
    token = lex(text)[0]
    assert isinstance(token, Word)
    return token


SECRET = [
    ".env",
    ".env.production",
    "src/.ENV",
    ".en?",
    "'.env'",
    ".[e]nv",
    "?env",  # dotglob
    "*",  # dotglob: may be .env
    "*.local",
    "/proc/self/environ",
    "/proc/1/cmdline",
    "/proc/*/environ",
    "/proc/*/env*",
    "/pro?/self/mem",
    "//proc/self/environ",
    "/etc/../proc/self/environ",
    "../../proc/self/environ",
    "~/../../proc/1/environ",
    "/dev/zero",
    "/dev/tty",
    "/etc/shadow",
    "/run/secrets/token",
    "/var/run/secrets/kubernetes.io/serviceaccount/token",
    "~/.config/flower/.env",
    "~/.config/flower/anything",
    '"$HOME/.config/flower/x"',
    "~/.config/*/x",
    "~/.claude/.credentials.json",
    "~/.claude.json",
    ".claude/settings.local.json",
    "~/.netrc",
    "~/.ssh/id_rsa",
    "~/.ssh/*",
    "~/.ssh/id_*",
    "~/.aws/credentials",
    "~/.gnupg/private-keys-v1.d/x.key",
    "~/.docker/config.json",
    "~/.kube/config",
    "server.pem",
    "tls.KEY",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "~/.bash_history",
    "terraform.tfstate",
    "src/*/id_rsa",  # dotglob: */ may be .ssh/
]
HARMLESS = [
    "README.md",
    "src/flower/kernel/credentials.py",
    "*.py",
    "*.log",
    "src/**/*.py",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/dev/null",
    "~/.ssh/id_rsa.pub",
    "~/.ssh/*.pub",
    "~/.ssh/known_hosts",
    "~/projects/x",
    '"$PWD/README.md"',
    ".claude/commands/x.md",
    "/etc/hosts",
    ".envelope",  # not .env, not .env.*
]


@pytest.mark.parametrize("text", SECRET)
def test_secret_paths_are_refused(text: str) -> None:
    assert content_reason(word(text)) is not None


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_paths_pass(text: str) -> None:
    assert content_reason(word(text)) is None


@pytest.mark.parametrize("text", ["/dev/zero", "/dev/urandom", "/de?/zero", "../../dev/tty"])
def test_devices_never_end(text: str) -> None:
    assert device_reason(word(text)) is not None


@pytest.mark.parametrize("text", ["/dev/null", "/proc/self/environ", "x", ".env"])
def test_device_check_is_only_about_devices(text: str) -> None:
    assert device_reason(word(text)) is None


@pytest.mark.parametrize(
    "text", ["/", "/proc", "~", '"$HOME"', "~/.config", "/home", "/home/u", "..", "../x", "~/*"]
)
def test_recursive_roots_above_secrets_are_refused(text: str) -> None:
    assert recursive_reason(word(text)) is not None


@pytest.mark.parametrize("text", [".", "src", "~/projects/app", "/work/main/src", "/tmp/x"])
def test_recursive_roots_inside_a_project_pass(text: str) -> None:
    assert recursive_reason(word(text)) is None


def test_xdg_config_home_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", "/srv/cfg")
    assert content_reason(word("/srv/cfg/flower/config.toml")) is not None
    assert content_reason(word("/srv/cfg/other/config.toml")) is None


# --------------------------------------------------------------------------------------------
# glob against glob, checked against brute force
# --------------------------------------------------------------------------------------------

PIECES = ["a", "b", ".", "*", "?", "[ab]", "[!a]"]
NAMES = ["".join(p) for n in range(0, 5) for p in itertools.product("ab.", repeat=n)]


def _brute(a: str, b: str) -> bool:
    return any(fnmatch.fnmatchcase(n, a) and fnmatch.fnmatchcase(n, b) for n in NAMES)


@given(
    st.lists(st.sampled_from(PIECES), max_size=3).map("".join),
    st.lists(st.sampled_from(PIECES), max_size=3).map("".join),
)
@settings(max_examples=examples(300))
def test_glob_intersection_matches_brute_force(a: str, b: str) -> None:
    """Over names up to 4 characters of {a, b, .}: a witness exists iff we say so.

    Patterns of at most 3 pieces meet on a name of at most 4 such characters whenever they meet
    at all (a star needs at most one character to stand for, and other letters add nothing).
    """
    assert glob_intersects(a, b) == _brute(a, b)


def test_long_patterns_are_judged_without_recursion() -> None:
    """The table is filled iteratively: a 3000-piece glob neither overflows nor crawls."""
    assert glob_intersects("?" * 3000 + ".env", "*.env") is True
    assert glob_intersects("*a" * 1500, ".env") is False
