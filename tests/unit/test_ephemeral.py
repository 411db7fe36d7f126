"""is_ephemeral: the gate deciding what a coordinator may run without a worker.

A wrong True is a security bug (state change or code execution behind a whitelisted verb), so
the table below is mostly attacks, and the hypothesis properties insert refused constructs into
otherwise-whitelisted commands and demand False every time.

The tests ask ``decide``, not ``is_ephemeral``: ``is_ephemeral`` turns any crash inside the
checker into a ``False`` (fail closed), which would let a crashing checker pass every "refused"
case. ``decide`` lets such a crash propagate, so a refusal here is always a decision.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flower
from flower.core import ephemeral
from flower.core.ephemeral import _VERBS, NEVER, Word, _lex, _Refuse, decide, is_ephemeral

from ..fuzz import examples

ALLOWED = [
    # -- the seed's own examples (compound commands are checked per segment) --
    "git status && git diff --stat",
    "ls -la | head -20",
    "grep -rn foo src 2>/dev/null | wc -l",
    # -- git, read-only --
    "git status",
    "git status --porcelain -b",
    "git diff",
    "git diff --cached --stat",
    "git diff --text HEAD~1",
    "git diff HEAD^ -- src/*.py",
    "git log --oneline -20",
    "git log --format='%H %an %s' --since=2.weeks",
    "git log @{u}..HEAD",
    "git log HEAD@{1.day.ago} -1",
    "git show HEAD:src/flower/__init__.py",
    "git show --stat HEAD",
    "git --no-pager log -5",
    "git -P diff",
    "git rev-parse --abbrev-ref HEAD",
    "git rev-parse --show-toplevel",
    "git ls-files -m",
    "git blame -L 10,20 src/x.py",
    "git branch",
    "git branch -a",
    "git branch -vv",
    "git branch --show-current",
    "git branch --list 'feat*'",
    "git branch --contains HEAD",
    "git branch --sort=-committerdate",
    "git tag",
    "git tag -l 'v*'",
    "git tag -n5",
    "git tag --contains HEAD",
    "git stash list",
    "git stash show -p stash@{0}",
    "git remote -v",
    "git remote get-url origin",
    "git config --get user.name",
    "git config --list --show-origin",
    "git config -l",
    "git config get user.email",
    "git reflog -10",
    "git reflog show main",
    "git worktree list",
    "git grep -n TODO -- '*.py'",
    "git cat-file -p HEAD",
    "git describe --tags --always",
    "git merge-base HEAD origin/main",
    "git for-each-ref --format='%(refname)' refs/heads",
    "git shortlog -sn",
    "git count-objects -vH",
    "git --version",
    # -- directory and system info --
    "ls",
    "ls -la src/",
    "ls *.py",
    "pwd",
    "df -h",
    "du -sh .",
    "date",
    "date +%Y-%m-%d",
    "date -u -d @0 +%s",
    "date -Iseconds",
    "whoami",
    "id",
    "uname -a",
    "env",
    "env -0",
    "printenv PATH",
    "hostname -f",
    "uptime",
    "nproc",
    "free -h",
    "realpath ../x",
    "file README.md",
    # -- processes and containers --
    "ps aux",
    "ps -ef | grep python",
    "top -b -n 1",
    "top -bn1 | head -20",
    "lsof -i :8080",
    "lsof -nP -iTCP -sTCP:LISTEN",
    "ss -tlnp",
    "pgrep -fl uvicorn",
    "docker ps",
    "docker ps -a --format '{{.Names}}'",
    "docker images",
    "docker inspect web",
    "docker logs --tail 50 web",
    "docker stats --no-stream",
    "docker compose ps",
    "kubectl get pods -n prod -o wide",
    "kubectl describe pod web-1",
    "kubectl logs web-1 --tail=100",
    # -- file viewing --
    "cat /etc/hosts",
    "cat README.md | head -50",
    "head -n 30 src/flower/cli.py",
    "tail -n 100 log/app.log",
    "tail -n +5 f",
    "tail -20 logs/*.log",
    "wc -l src/**/*.py",
    "stat pyproject.toml",
    "find . -name '*.py' -type f",
    "find src -type f | wc -l",
    "find . -newer setup.py -print0",
    "find . \\( -name a -o -name b \\)",
    "tree -L 2 src",
    "tree -I node_modules --dirsfirst",
    # -- path lookup --
    "which python",
    "whereis git",
    "type ls",
    "command -v docker",
    "command -V git",
    "command -pv ls",
    # -- text processing --
    "grep -rn 'a|b' src",
    'grep "x;y" file',
    "grep -c '>' index.html",
    "grep -E '^(a|b)$' f",
    "rg -n TODO src",
    "rg --pretty foo",
    "sort -u names.txt",
    "sort -k2,2n -t, data.csv | uniq -c",
    "uniq -c counts.txt",
    "uniq --group=append f",
    "awk '{print $1}' access.log",
    "awk -F: '$3 > 1000 {n++} END {print n}' /etc/passwd",
    "awk -v n=3 'NR<=n' f",
    "awk '$1 || $2' f",
    "sed -n '1,20p' f",
    "sed -n '/start/,/end/p' f",
    "sed 's/foo/bar/g' f",
    "sed -E 's|a/b|c|g; s/x/y/2' f",
    "sed -n -e '$p' -e '1p' f",
    "sed '/^#/d;/^$/d' f",
    "sed -n '/x/{p;q}' f",
    "sed 'y/abc/xyz/' f",
    "jq '.items[] | .name' data.json",
    "jq -r .version package.json",
    "diff -u a.txt b.txt",
    "cut -d, -f1 f | sort | uniq -c | sort -rn | head",
    "tr a-z A-Z < /dev/null",
    # -- redirections, separators, quoting, whitespace --
    "ls >/dev/null 2>&1",
    "ls &>/dev/null",
    "ls 2> /dev/null",
    "git status 2>&1 | head",
    "ls >&2",
    "ls; pwd",
    "ls||pwd",
    "ls&&pwd",
    "ls |& grep x",
    "   ls   -la   ",
    "\tgit\tstatus\t",
    "\ngit status\n",
    "'ls' -la",
    'grep "\\$HOME" f',
    "grep foo\\;bar f",
    "cat 'a file with spaces.txt'",
    "ls ~/projects",
    # -- hardening: look-alikes of refused forms that are really read-only --
    "git log --no-ext-diff --no-textconv",
    "git branch --no-merged main",
    "git config get --all user.name",
    "git rev-parse HEAD~1 @{-1}",
    "git reflog exists HEAD",
    "git worktree list --porcelain",
    "awk '$1>0{print}' f",
    "sed -n '$!N;P;D' f",
    "sed '0~3d' f",
    "sed 's/a/b/I' f",
    "sed --sandbox 's/a/b/' f",
    "sed -n 1p -- -i",
    "sed '\\,x,d' f",
    "sed '1!G;h;$!d' f",
    "docker logs --since 10m web",
    "kubectl get pods -A",
    "date --rfc-3339 seconds",
    "uniq -f 1 -c f",
    "sort -rnk2 f",
    "rg -uuu foo",
    "find . -prune -o -print",
    "find . -D exec -name x",
    "du -sh * | sort -h",
    "ps -eo pid,cmd --sort=-%mem | head",
    "ls >/dev/null </dev/null",
    "ls 2>'/dev/null'",
    '"git" "status"',
    "g\\it status",
    "ls -- 'a;b'",
    "grep -- -v f",
]

REFUSED = [
    # -- empty --
    "",
    "   ",
    "\t\n",
    # -- command substitution, expansions --
    "ls $(rm -rf x)",
    "ls `rm -rf x`",
    "cat <(rm x)",
    "diff >(rm x) a",
    'echo "$(id)"',
    'ls "`id`"',
    "ls ${HOME}",
    "ls $HOME",
    "ls $((1+1))",
    "ls $'\\x41'",
    "git log $(echo --output=x)",
    # -- redirections to files, heredocs --
    "ls > out.txt",
    "ls >> out.txt",
    "ls >| out.txt",
    "ls &> out.txt",
    "ls 2> err.txt",
    "cat < secret",
    "cat <<EOF",
    "cat <<< hi",
    "cat <> f",
    "ls >&out",
    "ls 2>&-",
    "ls > /dev/null/../../tmp/x",
    "ls >/dev/nul?",
    "git diff --stat >diff.txt && git status",
    # -- background jobs, odd separators --
    "ls &",
    "ls & pwd",
    "sleep 1 & ls",
    "ls;",
    "; ls",
    "ls && && pwd",
    "ls ;; pwd",
    "ls |",
    "ls\nrm -rf x",
    "ls\rrm -rf x",
    "ls\x00rm",
    # -- subshells, groups, brace expansion, comments --
    "(ls)",
    "( rm -rf x )",
    "{ ls; }",
    "ls; { rm x; }",
    "sort {-o,out} f",
    "ls #; rm x",
    # -- quoting trouble --
    "ls 'unbalanced",
    'ls "unbalanced',
    "ls \\",
    # -- not whitelisted / never --
    "rm -rf build",
    "touch x",
    "mkdir x",
    "cd src && ls",
    "echo hi",
    "python -c 'print(1)'",
    "bash -c ls",
    "ls | xargs rm",
    "exec ls",
    "eval ls",
    "source .env",
    ". .env",
    "ls | tee out",
    "sudo ls",
    "nice ls",
    "timeout 5 ls",
    "nohup ls",
    "time ls",
    "watch ls",
    "env rm -rf x",
    "env -i ls",
    "env -S 'rm x'",
    "env FOO=1",
    "command rm x",
    "command -p rm x",
    "command",
    # -- assignments and verbs given as paths --
    "PAGER=cat git log",
    "GIT_PAGER='rm -rf x' git log",
    "LD_PRELOAD=x.so ls",
    "/bin/rm x",
    "/bin/ls",
    "./ls",
    "l* -la",
    # -- find --
    "find . -delete",
    "find . -name x -exec rm {} \\;",
    "find . -execdir rm x \\;",
    "find . -ok rm \\;",
    "find . -okdir rm \\;",
    "find . -fprint out",
    "find . -fprint0 out",
    "find . -fprintf out %p",
    "find . -fls out",
    "find . '-delete'",
    "find . -name *.py",
    # -- sed --
    "sed -i s/a/b/ f",
    "sed -i.bak s/a/b/ f",
    "sed -ni p f",
    "sed --in-place s/a/b/ f",
    "sed --in-pl s/a/b/ f",
    "sed -f script.sed f",
    "sed 's/a/b/w out' f",
    "sed 's/a/b/e' f",
    "sed 's/a/b/gw out' f",
    "sed 'w out' f",
    "sed '1W out' f",
    "sed 'e rm x' f",
    "sed '1e rm x' f",
    "sed 'r /etc/shadow' f",
    "sed 's/a/b/;w out' f",
    "sed -e p -e 'w out' f",
    "sed --expression='w out' f",
    "sed '1a text' f",
    "sed 's/a/b' f",
    "sed -n p *",
    # -- awk --
    "awk 'BEGIN{system(\"rm x\")}'",
    "awk 'BEGIN { system (\"id\") }'",
    "awk '{print > \"out\"}' f",
    'awk \'{printf "%s", $0 > "out"}\' f',
    "awk '{print >> \"out\"}' f",
    "awk '{print | \"sh\"}' f",
    "awk 'BEGIN{\"id\" | getline x}'",
    "awk 'BEGIN{getline x < \"/etc/shadow\"}'",
    "awk -f prog.awk f",
    "awk -i inplace '{print}' f",
    "awk -l ext '{print}' f",
    "awk -E prog.awk",
    "awk -o '{print}' f",
    "awk -W exec prog f",
    "awk '@load \"x\"; {print}' f",
    # -- sort, uniq, tree, rg, tail, top --
    "sort -o out f",
    "sort -uo out f",
    "sort --output=out f",
    "sort --out=out f",
    "sort --compress-program=sh f",
    "sort *.txt",
    "uniq in.txt out.txt",
    "uniq -c in.txt out.txt",
    "uniq data/*.txt",
    "tree -o out.txt",
    "tree -R -H . src",
    "rg --pre=sh foo",
    "rg --pre sh foo",
    "rg --hostname-bin=id foo",
    "rg foo *",
    "tail -f log",
    "tail -F log",
    "tail --follow=name log",
    "tail -10f log",
    "tail +5f log",
    "tail *",
    "top",
    "top -b",
    "top -n 1",
    # -- date, hostname, free, lsof, ss, file --
    "date -s '2020-01-01'",
    "date --set=now",
    "date --se=now",
    "date 010112002024",
    "date -I 010112002024",
    "date --iso-8601 010112002024",
    "hostname evil",
    "hostname -F f",
    "hostname -b x",
    "free -s 1",
    "lsof -r 1",
    "lsof +r",
    "ss -K dst 1.2.3.4",
    "file -C -m x",
    # -- git writes and git code execution --
    "git",
    "git push",
    "git pull",
    "git fetch",
    "git checkout main",
    "git reset --hard",
    "git clean -fdx",
    "git commit -m x",
    "git add .",
    "git branch new-feature",
    "git branch -D old",
    "git branch -d old",
    "git branch -m a b",
    "git branch -M a b",
    "git branch -c a b",
    "git branch -f x HEAD",
    "git branch --delete x",
    "git branch -u origin/x",
    "git branch -a newbranch",
    "git branch --color always",
    "git tag v1.0",
    "git tag -a v1 -m msg",
    "git tag -d v1",
    "git tag -v v1",
    "git stash",
    "git stash pop",
    "git stash drop",
    "git stash push -m x",
    "git remote add evil https://x",
    "git remote remove origin",
    "git config user.name x",
    "git config --unset user.name",
    "git config --add x.y z",
    "git config --global --edit",
    "git reflog expire --all",
    "git reflog delete HEAD@{1}",
    "git worktree add ../x",
    "git worktree remove x",
    "git -c core.pager=sh log",
    "git -c alias.x='!rm' x",
    "git -C /tmp/evil status",
    "git --git-dir=evil/.git status",
    "git --exec-path=/tmp log",
    "git --paginate log",
    "git log --output=x",
    "git diff --output x",
    "git diff --out=x",
    "git diff --ext-diff",
    "git diff --textconv",
    "git log -p --ext",
    "git grep -O foo",
    "git grep -Ovim foo",
    "git grep --open-files-in-pager foo",
    "git cat-file --filters HEAD:x",
    "git log --force",
    "git log --prune",
    "git diff *",
    "git diff --out*",
    "git help log",
    "git symbolic-ref HEAD refs/heads/x",
    "git status && git push",
    "git log | git am",
    # -- docker and kubectl --
    "docker run alpine",
    "docker exec web sh",
    "docker rm web",
    "docker logs -f web",
    "docker logs --follow web",
    "docker stats",
    "docker events",
    "docker --host tcp://x ps",
    "docker compose up",
    "kubectl apply -f x.yaml",
    "kubectl delete pod x",
    "kubectl exec -it x -- sh",
    "kubectl get pods -w",
    "kubectl get pods --watch",
    "kubectl logs -f x",
    "kubectl --kubeconfig=evil get pods",
    "kubectl get pods --kubeconfig=evil",
    "kubectl cluster-info dump",
    "kubectl config current-context",  # only get/describe/logs, as the seed says
    "kubectl config use-context prod",
    # -- a refused segment anywhere in a compound command --
    "ls && rm -rf x",
    "git status; git push --force",
    "cat f | sh",
    "ls | sed -i s/a/b/ f",
    "ls || touch x",
    "grep foo f 2>/dev/null | tee out | wc -l",
    # -- hardening: `--` taken as an option's argument, consumed values, look-alikes --
    "rg -e -- --pre=sh x",
    "sort -t x -- -o out f",
    "git log -S -- --output=x",
    "git diff -- *",
    "git config --file --get x.y z",
    "git log --output-directory=x",
    "git remote set-url origin x",
    "git worktree prune",
    "git fsck --lost-found",
    "git gc",
    "git symbolic-ref HEAD refs/heads/evil",
    "git log @{a,b}",
    "git log @{1..3}",
    "ls {a,b}",
    "ls @(x)",
    "date -d *",
    "date -us 1",
    "date -d -- 010112002024",
    "env -- rm x",
    "env --chdir=/ ls",
    "uniq -c -- in out",
    "uniq -c - out",
    "awk -e 'BEGIN{}'",
    "awk --source 'BEGIN{}'",
    "awk '{print}$1>0'",
    "awk 'BEGIN { cmd = \"id\"; cmd | getline }'",
    "sed -n '1p;w x' f",
    "sed 's/x/y/;e' f",
    "sed 's,a\\,b,c,w x' f",
    "sed f -i",
    "docker stats --no-stream --no-stream=false",
    "docker logs -tf web",
    "docker container logs -f web",
    "top -b -n 0",
    "kubectl get po -s http://evil",
    "kubectl get pods --server=http://evil",
    "kubectl get pods --cache-dir=/etc",
    "kubectl logs --follow=false pod",
    "ss -D dump.bin",
    "ls >/dev/stdout",
    "ls 2>/dev/./null",
]


@pytest.mark.parametrize("cmd", ALLOWED)
def test_allowed(cmd: str) -> None:
    assert decide(cmd) is True
    assert is_ephemeral(cmd) is True


@pytest.mark.parametrize("cmd", REFUSED)
def test_refused(cmd: str) -> None:
    assert decide(cmd) is False  # a decision: a crash in the checker would raise here
    assert is_ephemeral(cmd) is False


def test_table_is_large_and_balanced() -> None:
    assert len(ALLOWED) + len(REFUSED) >= 150
    assert len(set(ALLOWED)) == len(ALLOWED) and len(set(REFUSED)) == len(REFUSED)
    assert 0.5 < len(ALLOWED) / len(REFUSED) < 2


def test_never_list_is_not_whitelisted() -> None:
    assert not NEVER & set(_VERBS)


def test_public_export() -> None:
    assert flower.is_ephemeral is is_ephemeral


def test_non_string_is_false() -> None:
    assert decide(None) is False  # type: ignore[arg-type]
    assert decide(b"ls") is False  # type: ignore[arg-type]
    assert is_ephemeral(None) is False  # type: ignore[arg-type]


def test_only_the_gate_turns_a_checker_crash_into_false(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(words: object) -> bool:
        raise IndexError("a bug in a rule")

    monkeypatch.setattr(ephemeral, "_segment_ok", broken)
    with pytest.raises(IndexError):
        decide("ls")
    assert is_ephemeral("ls") is False  # fail closed


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------

SAFE_SEGMENTS = [
    "ls -la",
    "git status",
    "git diff --stat",
    "git log --oneline -5",
    "grep -rn foo src",
    "cat README.md",
    "head -20 f",
    "wc -l",
    "sort -u",
    "uniq -c",
    "awk '{print $1}'",
    "sed -n 1,5p",
    "jq .name",
    "ps aux",
    "find . -name '*.py'",
    "tail -n 5 f",
    "git branch -a",
    "date +%s",
    "command -v git",
    "docker ps",
    "kubectl get pods",
    "rg TODO",
]
SEPARATORS = ["&&", "||", ";", "|", "|&"]
SAFE_REDIRECTIONS = ["", "2>/dev/null", ">/dev/null", "2>&1", "&>/dev/null", "> /dev/null 2>&1"]

#: whole segments that must be refused wherever they appear
BAD_SEGMENTS = [
    "rm -rf x",
    "git push",
    "git push --force",
    "git reset --hard",
    "git branch -D x",
    "git branch newname",
    "git tag v9",
    "git stash",
    "git -c core.pager=sh log",
    "xargs rm",
    "tee out",
    "eval ls",
    "exec ls",
    "source x",
    "env rm x",
    "command rm x",
    "find . -delete",
    "find . -exec rm {} +",
    "sed -i s/a/b/ f",
    "sed 's/a/b/w out' f",
    "sort -o out f",
    "uniq a b",
    "awk 'BEGIN{system(\"id\")}'",
    "awk '{print > \"o\"}'",
    "tail -f log",
    "top",
    "date -s now",
    "tree -o out",
    "rg --pre=sh x",
    "git log --output=x",
    "git diff --ext-diff",
    "kubectl get pods -w",
    "docker logs -f x",
    "PAGER=sh git log",
    "/bin/rm x",
]
#: words that make any segment they are inserted into refused (expansions, file redirections)
BAD_WORDS = [
    "$(rm x)",
    "`rm x`",
    "<(rm x)",
    ">(rm x)",
    "${X}",
    "$((1))",
    "$X",
    "> out",
    ">> out",
    "< in",
    "2> err",
    "&> out",
    ">| out",
    "<<EOF",
    "<<< x",
    "(ls)",
    "{ls,x}",
]
#: separators that make the command refused
BAD_SEPARATORS = ["&", "\n", "\r", ";;"]


@st.composite
def _safe_command(draw: st.DrawFn) -> list[str]:
    """Whitelisted segments joined by random separators, each with an optional safe redirection."""
    segments = draw(st.lists(st.sampled_from(SAFE_SEGMENTS), min_size=1, max_size=4))
    parts: list[str] = []
    for k, segment in enumerate(segments):
        if k:
            parts.append(draw(st.sampled_from(SEPARATORS)))
        redirection = draw(st.sampled_from(SAFE_REDIRECTIONS))
        parts.append(f"{segment} {redirection}".rstrip())
    return parts


def _join(parts: list[str], spaces: list[str]) -> str:
    return "".join(part + spaces[k % len(spaces)] for k, part in enumerate(parts)).strip(" ")


spacing = st.lists(st.sampled_from([" ", "  ", "\t", " \t "]), min_size=1, max_size=4)


@given(parts=_safe_command(), spaces=spacing)
def test_safe_compositions_are_accepted(parts: list[str], spaces: list[str]) -> None:
    assert decide(_join(parts, spaces)) is True


@given(parts=_safe_command(), spaces=spacing, data=st.data())
@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
def test_bad_segment_anywhere_is_refused(
    parts: list[str], spaces: list[str], data: st.DataObject
) -> None:
    bad = data.draw(st.sampled_from(BAD_SEGMENTS))
    separator = data.draw(st.sampled_from(SEPARATORS))
    slot = data.draw(st.integers(0, len(parts) // 2 + 1)) * 2  # before a segment, never a separator
    parts = [*parts[:slot], bad, separator, *parts[slot:]] if slot < len(parts) else [
        *parts, separator, bad,
    ]  # fmt: skip
    assert decide(_join(parts, spaces)) is False


@given(parts=_safe_command(), spaces=spacing, data=st.data())
@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
def test_bad_word_anywhere_is_refused(
    parts: list[str], spaces: list[str], data: st.DataObject
) -> None:
    bad = data.draw(st.sampled_from(BAD_WORDS))
    segment_index = data.draw(st.integers(0, (len(parts) - 1) // 2)) * 2
    words = re.findall(r"'[^']*'|\S+", parts[segment_index])  # never inside single quotes
    position = data.draw(st.integers(0, len(words)))
    words.insert(position, bad)
    parts = [*parts[:segment_index], " ".join(words), *parts[segment_index + 1 :]]
    assert decide(_join(parts, spaces)) is False


@given(parts=_safe_command(), spaces=spacing, data=st.data())
def test_bad_separator_anywhere_is_refused(
    parts: list[str], spaces: list[str], data: st.DataObject
) -> None:
    bad = data.draw(st.sampled_from(BAD_SEPARATORS))
    tail = data.draw(st.sampled_from(SAFE_SEGMENTS))
    segment_index = data.draw(st.integers(0, (len(parts) - 1) // 2)) * 2
    parts = [*parts]
    parts[segment_index] = f"{parts[segment_index]} {bad} {tail}"
    assert decide(_join(parts, spaces)) is False


@given(st.text())
@settings(max_examples=examples(300))
def test_never_raises_on_arbitrary_text(cmd: str) -> None:
    assert type(decide(cmd)) is bool  # and never raises


@given(
    st.text(alphabet=st.sampled_from(list(" \t|&;<>$`'\"\\(){}#*?[]-=/\n\r lsgitf")), max_size=40)
)
@settings(max_examples=examples(600))
def test_never_raises_on_shell_soup(cmd: str) -> None:
    assert type(decide(cmd)) is bool  # and never raises


@given(
    cmd=st.one_of(st.sampled_from(ALLOWED), _safe_command().map(" ".join)),
    before=st.text(alphabet=" \t\n", max_size=5),
    after=st.text(alphabet=" \t\n", max_size=5),
)
def test_surrounding_whitespace_keeps_accepted_commands(cmd: str, before: str, after: str) -> None:
    if decide(cmd):
        assert decide(before + cmd + after) is True


# --------------------------------------------------------------------------------------------
# the tokeniser agrees with real bash
# --------------------------------------------------------------------------------------------

#: No character here can make bash run anything (no ; | & $ ` ( ) < > newline), so handing
#: these strings to a real bash as printf's arguments is harmless even if the lexer is wrong.
WORD_ALPHABET = [*"ab-'\"\\ \t#{}@*?[]=,.:/", "@{u}", "@{1}", "{a,b}", "'x y'", '"x y"']


@given(st.lists(st.sampled_from(WORD_ALPHABET), min_size=1, max_size=12).map("".join))
@settings(max_examples=examples(150), deadline=None)
def test_words_match_bash(text: str) -> None:
    """Whatever the lexer accepts as plain words, bash splits into the same words."""
    try:
        tokens = _lex(text)
    except _Refuse:
        return
    if not tokens:
        return
    assert all(isinstance(t, Word) for t in tokens)
    # -f: no pathname expansion (it depends on the directory); brace expansion stays on
    result = subprocess.run(
        ["bash", "--norc", "--noprofile", "-f", "-c", f"printf '%s\\0' {text}"],
        capture_output=True,
        check=True,
        timeout=10,
    )
    bash_words = result.stdout.decode().split("\0")[:-1]
    assert bash_words == [t.text for t in tokens if isinstance(t, Word)]
