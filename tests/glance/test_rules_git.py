"""git: read-only subcommands with per-subcommand option allow-lists."""

from __future__ import annotations

import pytest

from flower.roles.ephemeral import decide, explain

ALLOWED = [
    "git status -sb",
    "git status --porcelain=v2 --branch",
    "git diff --stat HEAD~3",
    "git diff --cached -- src",
    "git diff -U5 --word-diff=color",
    "git log --oneline --graph --decorate -20",
    "git log --format='%h %an %s' --since=2.weeks",
    "git log -p --follow -- src/x.py",
    "git log -L 10,20:src/x.py",
    "git log -L :main:src/x.py",
    "git show --stat HEAD",
    "git show HEAD:README.md",
    "git blame -L 1,20 src/x.py",
    "git rev-parse --abbrev-ref HEAD",
    "git rev-list --count HEAD",
    "git ls-files -m",
    "git ls-tree -r --name-only HEAD",
    "git cat-file -p HEAD",
    "git describe --tags --always",
    "git merge-base --is-ancestor a b",
    "git for-each-ref --sort=-committerdate --format='%(refname:short)' refs/heads",
    "git show-ref --heads",
    "git grep -n TODO -- '*.py'",
    "git shortlog -sn",
    "git branch -vv",
    "git branch --list 'feat*'",
    "git tag -l 'v*'",
    "git tag -n5",
    "git stash list",
    "git stash show -p stash@{0}",
    "git remote -v",
    "git remote get-url origin",
    "git config --get user.email",
    "git config get user.name",
    "git config user.name",
    "git reflog -5",
    "git worktree list --porcelain",
    "git version",
    "git --version",
    "git --no-pager log -1",
    "git -P diff",
    "git --no-optional-locks status",
    "git diff --no-index a.txt b.txt",
]

REFUSED = [
    ("git", "without a subcommand"),
    ("git push", "changes the remote"),
    ("git fetch", "network"),
    ("git pull", "network"),
    ("git ls-remote origin", "network"),
    ("git clone x", "network"),
    ("git remote show origin", "network"),
    ("git help log", "man"),
    ("git log --help", "--help"),
    ("git checkout main", "not read-only"),
    ("git -c core.pager=sh log", "-c is refused"),
    ("git -C /tmp status", "-C is refused"),
    ("git --git-dir=x status", "--git-dir is refused"),
    ("git --work-tree=/ status", "--work-tree"),
    ("git --exec-path=/tmp log", "--exec-path"),
    ("git --config-env=x=y log", "--config-env"),
    ("git --paginate log", "--paginate"),
    ("git log --output=x", "--output"),
    ("git diff --out=x", "an abbreviation?"),
    ("git diff --ext-diff", "--ext-diff"),
    ("git diff --textconv", "--textconv"),
    ("git diff -O order", "-O"),
    ("git grep -O foo", "-O"),
    ("git grep --open-files-in-pager=vim x", "--open-files-in-pager"),
    ("git grep --no-exclude-standard --no-index KEY", "--no-exclude-standard"),
    ("git log --show-signature", "--show-signature"),
    ("git log --format=%G?", "gpg"),
    ("git log --pretty=format:%GS", "gpg"),
    ("git for-each-ref --format='%(signature)'", "gpg"),
    ("git cat-file --filters HEAD:x", "--filters"),
    ("git describe --dirty", "--dirty"),
    ("git branch new", "creates a branch"),
    ("git branch -a new", "creates a branch"),
    ("git branch -D x", "-D"),
    ("git tag v1", "creates a tag"),
    ("git tag -v v1", "-v"),
    ("git stash", "only stash list"),
    ("git stash pop", "only stash list"),
    ("git remote add x y", "changes remotes"),
    ("git config user.name x", "changes the configuration"),
    ("git config --list", "credentials"),
    ("git config -l", "credentials"),
    ("git config --get-regexp .", "--get-regexp"),
    ("git config --get http.https://github.com/.extraheader", "credential"),
    ("git config --get credential.helper", "credential"),
    ("git config --file .env --get x", "--file"),
    ("git reflog expire --all", "rewrites"),
    ("git worktree add x", "only worktree list"),
    ("git var -l", "-l"),
    ("git show HEAD:.env", ".env"),
    ("git diff .env", ".env"),
    ("git log -L 1,5:.env", ".env"),
    ("git diff --no-index ~/.config /tmp/x", "home"),
    ("git diff *", "wildcard"),
    ("git log -S -- --output=x", "--output"),  # -S takes `--`: --output=x is an option
    ("git diff -S -- --output=x", "--output"),
]


@pytest.mark.parametrize("cmd", ALLOWED)
def test_allowed(cmd: str) -> None:
    assert decide(cmd) is True, explain(cmd)


@pytest.mark.parametrize(("cmd", "reason"), REFUSED)
def test_refused_with_reason(cmd: str, reason: str) -> None:
    assert decide(cmd) is False
    assert reason in (explain(cmd) or "")
