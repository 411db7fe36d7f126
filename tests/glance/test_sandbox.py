"""Every glance the gate accepts, run for real: does it only look?

test_corpus.py checks the *decision*; this checks the *commands*. Each glance of
tests/corpora/glances.txt that ``is_ephemeral`` accepts runs the way the Claude Code CLI's Bash
tool runs it: bash with the CLI's three shell functions (``find`` is the bundled bfs, ``grep`` the
bundled ugrep with its GNU grep fallback, ``rg`` the bundled ripgrep) and ``GLANCE_ENV`` exported,
in a throwaway copy of a small git project with a throwaway ``HOME`` holding decoy secrets,
inside a network namespace with only loopback, under ``strace -f``. A glance fails if it

* executes anything but the programs its own segments name (a pager, ``sh``, a decompressor...),
* opens an ``AF_INET``/``AF_INET6`` (or any non-unix, non-netlink) socket, connects, sends to or
  binds an address of that kind, listens at all, or resolves a name (reads ``/etc/resolv.conf``,
  asks systemd-resolved); the one exception is a socket only ever bound to a loopback address
  on port 0, the IPv6 probe pip's urllib3 runs at import, which moves no data,
* opens a file for writing, creates, truncates, removes, renames, links or re-times one (only
  ``/dev/null``, the terminal and ``/proc/self`` are exempt), signals a process it did not start,
  or sets the clock, the hostname or a mount,
* leaves the project, ``HOME`` or ``TMPDIR`` different (every file hashed before and after: this
  catches writes the syscall list missed),
* prints one of the decoy secrets (from the environment or from ``HOME``/``.env``), or
* does not come back within :data:`TIMEOUT` seconds.

Each copy's git index is refreshed before its run (inside the namespace): a fresh copy has new
inodes, and ``git diff`` would rewrite the index for that (git 2.39 does so even with
``GIT_OPTIONAL_LOCKS=0``), which is git reacting to the copy, not to the glance.

Every violation of every glance is reported at once. One strace per command (in a thread pool)
keeps each violation attributable; the whole run stays well under a minute on two cores.
``test_sandbox_catches_known_bad_commands`` is the positive control: it feeds the same harness
commands that write, delete, connect and leak, and demands that each is caught.

The test needs strace and a network namespace (root, or unprivileged user namespaces): without
them it is skipped with the reason, and under ``CI=true`` it fails instead
(``flower.testing.need``).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import claude_agent_sdk
import pytest

from flower.roles import ephemeral
from flower.testing import need

from .test_corpus import GLANCES, load_corpus

#: e2e too: it runs the bundled CLI binary (bfs, ugrep, ripgrep) hundreds of times, which
#: the quick ``-m "not e2e"`` lane leaves out.
pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]

#: the Claude Code CLI binary that the SDK bundles; the CLI runs bfs/ugrep/rg from it
BUNDLED_CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
#: seconds a glance may take; a glance must come back, so a timeout is a violation
TIMEOUT = 30.0
#: bytes of output kept (and the most a glance may print before it is killed as a flood)
MAX_OUTPUT = 8 << 20
WORKERS = max(2, min(8, 2 * (os.cpu_count() or 1)))

#: traced syscalls: program execution, sockets, every way to change a file, signals, and the
#: few system-wide settings (reading calls beyond open are not needed and only slow strace down).
#: Each is written ``?name`` in the strace filter: an architecture without it (aarch64 has no
#: ``open``, ``unlink``...) skips it instead of refusing the whole filter.
SYSCALLS = (
    "execve,execveat,"
    "socket,socketpair,connect,bind,listen,sendto,sendmsg,sendmmsg,"
    "open,openat,openat2,creat,truncate,ftruncate,"
    "unlink,unlinkat,rmdir,rename,renameat,renameat2,mkdir,mkdirat,mknod,mknodat,"
    "symlink,symlinkat,link,linkat,chmod,fchmod,fchmodat,chown,fchown,lchown,fchownat,"
    "utime,utimes,futimesat,utimensat,setxattr,lsetxattr,fsetxattr,removexattr,"
    "lremovexattr,fremovexattr,"
    "kill,tkill,tgkill,pidfd_send_signal,ptrace,"
    "mount,umount2,sethostname,setdomainname,settimeofday,clock_settime,adjtimex,reboot"
)
TRACE_FILTER = "trace=" + ",".join(f"?{name}" for name in SYSCALLS.split(","))
_CHANGES_FILES = frozenset(
    "truncate ftruncate unlink unlinkat rmdir rename renameat renameat2 mkdir mkdirat mknod "
    "mknodat symlink symlinkat link linkat chmod fchmod fchmodat chown fchown lchown fchownat "
    "utime utimes futimesat utimensat setxattr lsetxattr fsetxattr removexattr lremovexattr "
    "fremovexattr".split()
)
_SYSTEM = frozenset(
    "ptrace mount umount2 sethostname setdomainname settimeofday clock_settime adjtimex "
    "reboot".split()
)
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE")
#: files a read-only command may open for writing: the bit bucket, the terminal (bash probes
#: /dev/tty), its own /proc entries (bfs names its threads through /proc/self/task/N/comm)
_WRITABLE = ("/dev/null", "/dev/tty", "/dev/stdout", "/dev/stderr")
_WRITABLE_PREFIXES = ("/proc/self/", "/proc/thread-self/")
_LOCAL_FAMILIES = frozenset({"AF_UNIX", "AF_LOCAL", "AF_NETLINK"})
#: the unix socket of systemd-resolved, which only answers host lookups (nss-resolve). nscd's
#: socket is not listed: glibc asks it for users and groups too (``ls -l``, ``id``), so a
#: connection there says nothing; with no nscd running, a host lookup reads /etc/resolv.conf.
_RESOLVER_SOCKETS = ("/run/systemd/resolve/", "io.systemd.Resolve")

#: the CLI's case pattern: an argument like these sends ``grep`` to GNU grep, not ugrep
_GREP_FALLBACK = (
    "-*-filter*|-*-pager*|-*-view*|-*-format-open*|-*-config*|---*|-@*|-*-save-config*|"
    "-[Zz]*|-[!-]*[Zz]*|--null|--null-data"
)
_UGREP_DEFAULTS = "-G --ignore-files --hidden -I --encoding=UTF-8 " + " ".join(
    f"--exclude-dir={name}" for name in (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
)


def cli_functions(bundled: Path = BUNDLED_CLI) -> str:
    """The shell functions the Claude Code CLI defines before a Bash tool command runs.

    Transcribed from the CLI's own snapshot code: ``find``/``grep``/``rg`` exec the CLI binary
    under another ``argv[0]`` (bfs, ugrep, ripgrep are linked into it), and ``grep`` falls back to
    the system's GNU grep for the options ugrep would use to run or configure something.
    """
    cli = shlex.quote(str(bundled))
    return "\n".join(
        [
            "unalias find 2>/dev/null || true",
            "unalias grep 2>/dev/null || true",
            "function find {",
            f'  (exec -a bfs {cli} -S dfs -regextype findutils-default ${{1+"$@"}})',
            "}",
            "function grep {",
            "  local _cc_a",
            '  for _cc_a in ${1+"$@"}; do',
            f'    case "$_cc_a" in {_GREP_FALLBACK}) command grep ${{1+"$@"}}; return ;; esac',
            "  done",
            f'  (exec -a ugrep {cli} {_UGREP_DEFAULTS} ${{1+"$@"}})',
            "}",
            "function rg {",
            f'  (exec -a rg {cli} ${{1+"$@"}})',
            "}",
        ]
    )


# --------------------------------------------------------------------------------------------
# The throwaway project and home
# --------------------------------------------------------------------------------------------


_DECOY_NAMES = {
    "env-anthropic": "sk-ant-decoy-env-{token}",
    "env-github": "ghp_decoy{token}",
    "home-flower-env": "sk-ant-decoy-flower-{token}",
    "home-netrc": "decoy-netrc-{token}",
    "home-ssh": "decoy-ssh-{token}",
    "home-aws": "decoy-aws-{token}",
    "home-claude": "sk-ant-oat01-decoy-{token}",
    "project-env": "sk-ant-decoy-project-{token}",
}


@dataclass(frozen=True)
class Decoys:
    """Secret-looking values planted in the environment and in files; none may be printed.

    Each value carries a random token, and the token alone is searched for in the output, so a
    glance that prints part of a secret (``cut -d= -f2 .env``) is caught too.
    """

    tokens: dict[str, str] = field(
        default_factory=lambda: {name: secrets.token_hex(10) for name in _DECOY_NAMES}
    )

    def value(self, name: str) -> str:
        return _DECOY_NAMES[name].format(token=self.tokens[name])

    def env(self) -> dict[str, str]:
        return {
            "ANTHROPIC_API_KEY": self.value("env-anthropic"),
            "GITHUB_TOKEN": self.value("env-github"),
        }

    def leaked(self, text: str) -> list[str]:
        return [name for name, token in self.tokens.items() if token in text]


_PROJECT_FILES = {
    "README.md": (
        "# demo\n\nA small service. Version v1.2.0.\n\n## Usage\n\n    make run\n\n"
        "TODO: document the configuration.\n"
    ),
    "package.json": (
        '{\n  "name": "demo",\n  "version": "1.2.0",\n  "scripts": {"build": "tsc", '
        '"test": "jest"},\n  "dependencies": {"express": "^4.19.0", "zod": "^3.23.0"}\n}\n'
    ),
    "app.log": "".join(
        f"2026-12-01T10:{i:02d}:00 {level} request {i} {msg}\n"
        for i, (level, msg) in enumerate(
            [
                ("INFO", "started"),
                ("INFO", "ok"),
                ("WARN", "slow"),
                ("ERROR", "timeout"),
                ("INFO", "ok"),
                ("ERROR", "refused"),
                ("INFO", "done"),
            ]
            * 4
        )
    ),
    "src/app.py": (
        "import os\nimport sys\n\nfrom util import greet\n\n\nclass App:\n    pass\n\n\n"
        "def main() -> int:\n    # TODO: parse arguments\n    print(greet(sys.argv[1:]))\n"
        "    return 0\n\n\nif __name__ == '__main__':\n    raise SystemExit(main())\n"
    ),
    "src/util.py": (
        "def greet(names):\n    # FIXME: empty names\n    return 'hello ' + ' '.join(names)\n"
    ),
    "tests/test_app.py": "from app import main\n\n\ndef test_main():\n    assert main() == 0\n",
    "data.csv": "name,score,city\nada,90,london\nalan,85,wilmslow\ngrace,95,new york\n",
    "requirements.txt": "requests==2.32.3\nflask==3.0.3\nrequests==2.32.3\n",
    "pyproject.toml": '[project]\nname = "demo"\nversion = "1.2.0"\n',
    "Makefile": "run:\n\tpython3 src/app.py\n\ntest:\n\tpytest -q\n",
    ".gitignore": ".env\nnode_modules/\n__pycache__/\n*.pyc\n",
    ".github/workflows/ci.yml": "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n",
}


def _git(project: Path, *args: str, check: bool = True, prefix: Sequence[str] = ()) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(project),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_DATE": "2026-11-30T12:00:00Z",
        "GIT_COMMITTER_DATE": "2026-11-30T12:00:00Z",
    }
    subprocess.run([*prefix, "git", *args], cwd=project, env=env, check=check, capture_output=True)


def build_template(root: Path, decoys: Decoys) -> Path:
    """A project (a git repository with history, a tag, staged and unstaged changes, a log and
    a rotated one, a package.json, a README, subfolders, an ignored ``.env``), a ``HOME`` of decoy
    credentials and an empty ``TMPDIR``: what a coordinator's session looks around in."""
    project, home = root / "project", root / "home"
    (root / "tmp").mkdir(parents=True)
    for name, text in _PROJECT_FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "config", "user.name", "alice")
    _git(project, "config", "user.email", "alice@example.com")
    _git(project, "add", "README.md", ".gitignore", "package.json")
    _git(project, "commit", "-q", "-m", "Initial commit")
    _git(project, "add", "src", "tests", "data.csv", "requirements.txt", "pyproject.toml")
    _git(project, "commit", "-q", "-m", "Add the service")
    _git(project, "tag", "v0.1.0")
    _git(project, "add", "Makefile", ".github")
    _git(project, "commit", "-q", "-m", "Add make targets and CI")
    (project / "src/util.py").write_text(_PROJECT_FILES["src/util.py"] + "# unstaged edit\n")
    (project / "data.csv").write_text(_PROJECT_FILES["data.csv"] + "linus,80,helsinki\n")
    _git(project, "add", "data.csv")
    (project / ".env").write_text(f"ANTHROPIC_API_KEY={decoys.value('project-env')}\nDEBUG=1\n")
    (project / "logs").mkdir()
    (project / "logs/app-2026-11-30.log.gz").write_bytes(
        gzip.compress(b"2026-11-30T23:59:00 ERROR rotated away\n", mtime=0)
    )
    day_ago = time.time() - 86400  # no file is "racily clean" (as new as the index)
    for path in project.rglob("*"):
        if ".git" not in path.parts:
            os.utime(path, (day_ago, day_ago))
    home_files = {
        ".config/flower/.env": f"ANTHROPIC_API_KEY={decoys.value('home-flower-env')}\n",
        ".netrc": f"machine github.com login alice password {decoys.value('home-netrc')}\n",
        ".ssh/id_rsa": (
            "-----BEGIN OPENSSH PRIVATE KEY-----\n"
            f"{decoys.value('home-ssh')}\n-----END OPENSSH PRIVATE KEY-----\n"
        ),
        ".aws/credentials": (
            "[default]\naws_access_key_id = AKIADECOYDECOYDECOY\n"
            f"aws_secret_access_key = {decoys.value('home-aws')}\n"
        ),
        ".claude/.credentials.json": (
            f'{{"claudeAiOauth": {{"accessToken": "{decoys.value("home-claude")}"}}}}\n'
        ),
        ".gitconfig": "[user]\n\tname = alice\n\temail = alice@example.com\n",
    }
    for name, text in home_files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    (home / ".ssh").chmod(0o700)
    (home / ".ssh/id_rsa").chmod(0o600)
    return root


def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under ``root``: kind, mode, size, mtime and (files) a sha256 of the content."""
    entries: dict[str, tuple[object, ...]] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(directory, name)
            info = path.lstat()
            rel = str(path.relative_to(root))
            if path.is_symlink():
                entries[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[rel] = ("dir", info.st_mode, info.st_mtime_ns)
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entries[rel] = ("file", info.st_mode, info.st_size, info.st_mtime_ns, digest)
    return entries


def _changes(
    before: dict[str, tuple[object, ...]], after: dict[str, tuple[object, ...]]
) -> list[str]:
    changes = [f"created {p}" for p in sorted(after.keys() - before.keys())]
    changes += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    changes += [
        f"modified {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]
    ]
    return changes


# --------------------------------------------------------------------------------------------
# Which programs a command may run
# --------------------------------------------------------------------------------------------

_SEPARATORS = frozenset({"&&", "||", "|", "|&", ";", "&", ";;"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def verbs(command: str) -> list[str]:
    """The command word of each segment of ``command`` (split on ``&& || | ; &``), as bash
    would see it after quote removal; leading ``!``, assignments and redirections are skipped.
    A command shlex cannot split has no verbs (so it may run nothing but the shell)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return []
    found: list[str] = []
    segment: list[str] = []
    for token in [*tokens, ";"]:
        if token not in _SEPARATORS:
            segment.append(token)
            continue
        i = 0
        while i < len(segment):
            word = segment[i]
            if word == "!" or _ASSIGNMENT.match(word):
                i += 1
            elif set(word) <= set("<>&") or (
                word.isdigit() and i + 1 < len(segment) and set(segment[i + 1]) <= set("<>&")
            ):
                i += 1 if word.isdigit() else 2  # a redirection operator and its target
            else:
                found.append(word)
                break
        segment = []
    return found


def _interpreters(program: Path, path: str) -> set[str]:
    """For a ``#!/usr/bin/env NAME`` script (``npm``), what NAME resolves to on ``path``.

    The kernel starts a script's interpreter without an execve of its own (the trace shows only
    the script), but ``env`` then execs NAME, which is part of running the verb."""
    try:
        with program.open("rb") as handle:
            first = handle.readline(256)
    except OSError:
        return set()
    if not first.startswith(b"#!"):
        return set()
    words = first[2:].decode(errors="replace").split()
    if not words:
        return set()
    found: set[str] = set()
    if Path(words[0]).name == "env":
        names = [w for w in words[1:] if not w.startswith("-")]
        resolved = shutil.which(names[0], path=path) if names else None
        if resolved:
            found |= {resolved, os.path.realpath(resolved)}
    return found


@dataclass
class Sandbox:
    """What the runs share: how to enter the namespace, the shell prelude, the environment."""

    prefix: list[str]
    strace: str
    bash: str
    path: str
    prelude: str
    env: dict[str, str]
    decoys: Decoys
    template: Path
    workdir: Path
    extra_programs: dict[str, set[str]]
    _programs: dict[str, set[str]] = field(default_factory=dict)

    def programs(self, verb: str) -> set[str]:
        """Executables a segment with this verb may run: its own file (and a script's
        interpreter), the CLI binary for the three functions, nothing for a builtin."""
        if verb not in self._programs:
            probe = subprocess.run(
                [self.bash, "--noprofile", "--norc", "-c",
                 f'{self.prelude}\ntype -t -- "$1"; type -P -- "$1"', "bash", verb],
                env={"PATH": self.path}, capture_output=True, text=True, check=False,
            )  # fmt: skip
            kind, *found = probe.stdout.split("\n")
            allowed: set[str] = set()
            if kind == "function":  # find, grep, rg: the CLI binary; grep's fallback: GNU grep
                allowed.add(str(BUNDLED_CLI))
            if kind == "file" or (kind == "function" and verb == "grep"):
                for program in filter(None, found):
                    allowed |= {program, os.path.realpath(program)}
                    allowed |= _interpreters(Path(program), self.path)
            allowed |= self.extra_programs.get(verb, set())
            self._programs[verb] = allowed
        return self._programs[verb]


# --------------------------------------------------------------------------------------------
# Reading strace's log
# --------------------------------------------------------------------------------------------

_TRACE_LINE = re.compile(r"^(\d+)\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\)\s+=\s+(.*)$", re.DOTALL)
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$", re.DOTALL)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_FAMILY = re.compile(r"sa_family=(AF_\w+)")


@dataclass(frozen=True)
class Call:
    pid: int
    name: str
    args: str
    result: str

    @property
    def ok(self) -> bool:
        return not self.result.startswith(("-1", "?"))

    def path(self, index: int = 0) -> str | None:
        strings = _STRING.findall(self.args)
        return strings[index] if len(strings) > index else None


def parse_trace(text: str) -> list[Call]:
    """strace ``-f`` output as complete calls (``<unfinished ...>`` joined to its resumption)."""
    calls: list[Call] = []
    pending: dict[int, str] = {}
    for raw in text.splitlines():
        match = _TRACE_LINE.match(raw)
        if not match:
            continue
        pid, rest = int(match[1]), match[2]
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        resumed = _RESUMED.match(rest)
        if resumed:
            start = pending.pop(pid, f"{resumed[1]}(")
            rest = start + resumed[2]
        call = _CALL.match(rest)
        if call:
            calls.append(Call(pid, call[1], call[2], call[3].strip()))
    return calls


def _write_target(call: Call) -> str | None:
    """The path an open-like call opens for writing, or None when it only reads."""
    if call.name == "creat":
        return call.path() or "?"
    if call.name in ("open", "openat", "openat2"):
        path = _STRING.search(call.args)
        flags = call.args[path.end() :] if path else call.args
        if any(flag in flags for flag in _WRITE_FLAGS):
            return call.path() or "?"
    return None


_INET = frozenset({"AF_INET", "AF_INET6"})
_LOOPBACK_PORT_0 = re.compile(
    r'sin6?_port=htons\(0\).*(?:inet_pton\(AF_INET6, "::1"|inet_addr\("127\.)'
)


def _inet_probes(calls: Sequence[Call]) -> set[int]:
    """Processes whose only internet sockets are capability probes: each is bound to a loopback
    address on port 0 and nothing else (no connect, send or listen in that process). urllib3
    does this at import to learn whether IPv6 works (``pip --version``); it moves no data."""
    sockets: dict[int, int] = {}
    probes: dict[int, int] = {}
    other: set[int] = set()
    for call in calls:
        family = _FAMILY.search(call.args)
        if call.name == "socket" and call.args.split(",", 1)[0].strip() in _INET:
            sockets[call.pid] = sockets.get(call.pid, 0) + 1
        elif call.name == "bind" and family and family[1] in _INET:
            if _LOOPBACK_PORT_0.search(call.args):
                probes[call.pid] = probes.get(call.pid, 0) + 1
            else:
                other.add(call.pid)
        elif call.name == "listen" or (
            call.name in ("connect", "sendto", "sendmsg", "sendmmsg")
            and family
            and family[1] in _INET
        ):
            other.add(call.pid)
    return {pid for pid, n in sockets.items() if pid not in other and probes.get(pid, 0) >= n}


def trace_violations(calls: Sequence[Call], allowed_programs: set[str]) -> list[str]:
    """What the traced command did beyond looking (see the module docstring).

    The first successful exec is strace starting the shell; every later one must be a program
    of ``allowed_programs`` (another bash, too, is a violation unless a segment names it).
    """
    found: list[str] = []
    pids = {call.pid for call in calls}
    probes = _inet_probes(calls)
    execs = [call for call in calls if call.name in ("execve", "execveat") and call.ok]
    shell = execs[0] if execs else None
    for call in calls:
        name, args = call.name, call.args
        if name in ("execve", "execveat") and call.ok:
            program = call.path() or "?"
            if call is not shell and program not in allowed_programs:
                argv = args.split("[", 1)[-1].split("]", 1)[0] if "[" in args else ""
                found.append(f"runs {program} [{argv[:160]}]")
        elif name in ("socket", "socketpair"):
            domain = args.split(",", 1)[0].strip()
            if domain not in _LOCAL_FAMILIES and not (domain in _INET and call.pid in probes):
                found.append(f"opens a socket: {name}({args[:120]})")
        elif name in ("connect", "bind", "sendto", "sendmsg", "sendmmsg"):
            family = _FAMILY.search(args)
            if name == "bind" and call.pid in probes and _LOOPBACK_PORT_0.search(args):
                pass  # see _inet_probes
            elif family and family[1] not in _LOCAL_FAMILIES | {"AF_UNSPEC"}:
                found.append(f"{name} to {family[1]}: {args[:160]}")
            elif name == "connect" and any(s in args for s in _RESOLVER_SOCKETS):
                found.append(f"resolves a name (connects to {call.path()})")
            elif name == "bind" and family and family[1] in ("AF_UNIX", "AF_LOCAL"):
                found.append(f"binds a unix socket: {args[:160]}")
        elif name == "listen":
            found.append(f"listens: listen({args})")
        elif name in ("open", "openat", "openat2", "creat"):
            target = _write_target(call)
            if call.path() == "/etc/resolv.conf":
                found.append("resolves a name (reads /etc/resolv.conf)")
            elif target is not None and not (
                target in _WRITABLE or target.startswith(_WRITABLE_PREFIXES)
            ):
                found.append(f"opens for writing: {name}({args[:160]}) = {call.result[:40]}")
        elif name in _CHANGES_FILES:
            found.append(f"changes a file: {name}({args[:160]}) = {call.result[:40]}")
        elif name in ("kill", "pidfd_send_signal"):
            target = args.split(",", 1)[0].strip()
            if not target.lstrip("-").isdigit() or int(target) not in pids:
                found.append(f"signals a process it did not start: {name}({args})")
        elif name in ("tkill", "tgkill"):
            target = args.split(",", 1)[0].strip()
            if not target.isdigit() or int(target) not in pids:
                found.append(f"signals a thread it did not start: {name}({args})")
        elif name in _SYSTEM:
            found.append(f"changes the system: {name}({args[:120]})")
    return found


# --------------------------------------------------------------------------------------------
# Running commands
# --------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    command: str
    violations: list[str]
    seconds: float
    output: str


def run_command(sandbox: Sandbox, index: int, command: str) -> Outcome:
    """Run ``command`` once, traced, in its own copy of the template; list what it did wrong."""
    run = sandbox.workdir / f"{index:04d}"
    shutil.copytree(sandbox.template, run / "root", symlinks=True)
    root = run / "root"
    project, home, tmp = root / "project", root / "home", root / "tmp"
    # A copy has new inodes and ctimes, which a working tree does not get by being looked at:
    # refresh the index first, or git diff rewrites it (git 2.39 ignores GIT_OPTIONAL_LOCKS
    # there), which is git's reaction to the copy, not to the glance. Inside the namespace,
    # where a user namespace shows other owners than outside (and the index records them).
    _git(project, "update-index", "-q", "--refresh", check=False, prefix=sandbox.prefix)
    before = snapshot(root)
    trace = run / "strace.log"
    script = f"{sandbox.prelude}\ncd {shlex.quote(str(project))} || exit 97\n{command}\n"
    env = {**sandbox.env, "HOME": str(home), "TMPDIR": str(tmp), "PWD": str(project)}
    argv = [
        *sandbox.prefix,
        sandbox.strace, "-f", "-qq", "-s", "512", "-e", "signal=none", "-e", TRACE_FILTER,
        "-o", str(trace), "--",
        sandbox.bash, "--noprofile", "--norc", "-c", script,
    ]  # fmt: skip
    started = time.monotonic()
    output, violations = _drive(argv, project, env)
    seconds = time.monotonic() - started
    allowed: set[str] = set()
    for verb in verbs(command):
        allowed |= sandbox.programs(verb)
    calls = parse_trace(trace.read_text(errors="replace")) if trace.exists() else []
    if not calls:
        violations.append("strace recorded nothing (the harness is broken)")
    violations += trace_violations(calls, allowed)
    violations += [f"leaves a change: {change}" for change in _changes(before, snapshot(root))]
    violations += [f"prints the decoy secret {name}" for name in sandbox.decoys.leaked(output)]
    shutil.rmtree(run, ignore_errors=True)
    return Outcome(command, _dedupe(violations), seconds, output)


def _drive(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, list[str]]:
    """Run ``argv`` in its own session and return its output (stdout and stderr together).

    Killed with its whole process group after :data:`TIMEOUT` seconds or once it has printed
    :data:`MAX_OUTPUT` bytes (``yes``, ``cat /dev/zero``): either is a violation, and neither
    may eat the machine's memory.
    """
    violations: list[str] = []
    chunks: list[bytes] = []
    with subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True,
    ) as process:  # fmt: skip
        stream = process.stdout
        assert stream is not None

        def kill() -> None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

        def read() -> None:
            size = 0
            while chunk := os.read(stream.fileno(), 1 << 16):
                if size < MAX_OUTPUT:
                    chunks.append(chunk)
                size += len(chunk)
                if size >= MAX_OUTPUT and size - len(chunk) < MAX_OUTPUT:
                    violations.append(f"floods its output (over {MAX_OUTPUT >> 20} MiB)")
                    kill()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            violations.append(f"did not return within {TIMEOUT:.0f} s")
            kill()
            process.wait()
        reader.join(timeout=10)
    return b"".join(chunks).decode(errors="replace"), violations


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def run_all(sandbox: Sandbox, commands: Sequence[str]) -> list[Outcome]:
    """Every command through :func:`run_command`, :data:`WORKERS` at a time, in order."""
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return list(pool.map(lambda pair: run_command(sandbox, *pair), enumerate(commands)))


def report(outcomes: Sequence[Outcome], limit: int = 12) -> str:
    """One block per offending command, at most ``limit`` violations each (and how many more)."""
    blocks: list[str] = []
    for outcome in outcomes:
        if not outcome.violations:
            continue
        shown = outcome.violations[:limit]
        more = len(outcome.violations) - len(shown)
        blocks.append(
            f"$ {outcome.command}  ({outcome.seconds:.1f} s)\n"
            + "\n".join(f"    {v}" for v in shown)
            + (f"\n    ... and {more} more" if more else "")
        )
    return "\n".join(blocks)


# --------------------------------------------------------------------------------------------
# Setup: skip (or fail under CI=true) where the sandbox cannot be built
# --------------------------------------------------------------------------------------------


def _netns_prefix(strace: str) -> tuple[list[str] | None, str]:
    """How to enter a fresh network namespace (as root: ``unshare --net``; otherwise through
    an unprivileged user namespace), checked by tracing ``true`` inside it and by listing its
    interfaces: only ``lo`` may exist."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None, "unshare (util-linux) is not installed"
    candidates = [[unshare, "--net"]] if os.geteuid() == 0 else []
    candidates.append([unshare, "--user", "--map-root-user", "--net"])
    errors: list[str] = []
    for prefix in candidates:
        probe = subprocess.run(
            [*prefix, "--", strace, "-f", "-qq", "-o", os.devnull, "--", "cat", "/proc/net/dev"],
            capture_output=True, text=True, check=False, timeout=30,
        )  # fmt: skip
        if probe.returncode != 0:
            errors.append(f"{' '.join(prefix)}: {probe.stderr.strip()[:200]}")
            continue
        interfaces = {
            line.split(":", 1)[0].strip() for line in probe.stdout.splitlines() if ":" in line
        }
        if interfaces <= {"lo"}:
            return prefix, ""
        errors.append(f"{' '.join(prefix)}: interfaces {sorted(interfaces)}")
    return None, "no network namespace with only loopback: " + "; ".join(errors)


def _sandbox_path() -> str:
    """PATH for the glances: the running Python's own bin directory, then the system's.

    The developer's PATH is left out on purpose: version-manager shims (pyenv, asdf) re-exec
    bash and their manager for every ``python3``, which is the machine's wrapper, not the glance.
    """
    dirs = [str(Path(sys.base_prefix) / "bin"), "/usr/local/sbin", "/usr/local/bin",
            "/usr/sbin", "/usr/bin", "/sbin", "/bin"]  # fmt: skip
    return os.pathsep.join(dict.fromkeys(d for d in dirs if Path(d).is_dir()))


def _git_exec_programs(path: str) -> set[str]:
    """git re-runs itself from its exec-path for a few read-only subcommands."""
    git = shutil.which("git", path=path)
    if git is None:
        return set()
    exec_path = subprocess.run(
        [git, "--exec-path"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {str(Path(exec_path, "git"))} if exec_path else set()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    strace = shutil.which("strace")
    need(strace is not None, "strace is not installed: cannot trace the glances")
    assert strace is not None
    need(BUNDLED_CLI.is_file(), f"the SDK's bundled CLI is missing: {BUNDLED_CLI}")
    need(shutil.which("git") is not None, "git is not installed: cannot build the project")
    prefix, why = _netns_prefix(strace)
    need(prefix is not None, why)
    assert prefix is not None
    bash = shutil.which("bash")
    assert bash is not None
    path = _sandbox_path()
    decoys = Decoys()
    root = tmp_path_factory.mktemp("glance-sandbox")
    template = build_template(root / "template", decoys)
    glance_env: dict[str, str] = dict(getattr(ephemeral, "GLANCE_ENV", {}))
    env = {
        "PATH": path,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "USER": "alice",
        "LOGNAME": "alice",
        "SHELL": bash,
        **decoys.env(),
        **glance_env,
    }
    yield Sandbox(
        prefix=prefix, strace=strace, bash=bash, path=path, prelude=cli_functions(),
        env=env, decoys=decoys, template=template, workdir=root / "runs",
        extra_programs={"git": _git_exec_programs(path)},
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------------------------


def test_verbs_follow_segments_through_quotes_and_redirections() -> None:
    """The allowed programs come from these verbs: a wrong split would allow the wrong ones."""
    assert verbs("git status && git log | head -5") == ["git", "git", "head"]
    assert verbs("cat 'a;b' 2>/dev/null || echo missing") == ["cat", "echo"]
    assert verbs("test -d .git && echo repo; [ -f x ] && ls") == ["test", "echo", "[", "ls"]
    assert verbs("ls 2>&1 | grep x") == ["ls", "grep"]
    assert verbs("echo 'unbalanced") == []


def test_parse_trace_joins_unfinished_calls() -> None:
    """With -f, calls of different processes interleave; a split call must not be lost."""
    text = (
        '10 execve("/usr/bin/ls", ["ls"], 0x1 /* 3 vars */ <unfinished ...>\n'
        '11 openat(AT_FDCWD, "x", O_WRONLY|O_CREAT, 0666) = 3\n'
        "10 <... execve resumed>)             = 0\n"
    )
    calls = parse_trace(text)
    assert [(c.pid, c.name, c.ok) for c in calls] == [(11, "openat", True), (10, "execve", True)]
    assert calls[1].path() == "/usr/bin/ls"


def test_sandbox_catches_known_bad_commands(sandbox: Sandbox) -> None:
    """The positive control: the harness must see each of these, or its silence means nothing."""
    expected = {
        "touch x": "opens for writing",
        "find . -name README.md -rm": "changes a file",
        "awk 1 /inet/tcp/0/127.0.0.1/9": "opens a socket",
        "cat .env": "prints the decoy secret project-env",
        "printenv ANTHROPIC_API_KEY": "prints the decoy secret env-anthropic",
        "ls | sh -c 'cat ~/.netrc'": "runs /",
        "rg -z ERROR logs": "runs /",
    }
    outcomes = run_all(sandbox, list(expected))
    missed = [
        f"$ {o.command}: expected '{expected[o.command]}', got {o.violations}"
        for o in outcomes
        if not any(expected[o.command] in v for v in o.violations)
    ]
    assert not missed, "the sandbox missed:\n" + "\n".join(missed)


def test_every_accepted_glance_only_looks(sandbox: Sandbox) -> None:
    """What the gate lets a coordinator run unsupervised must, run for real, only look."""
    glances = [entry.command for entry in load_corpus(GLANCES)]
    accepted = [command for command in glances if ephemeral.is_ephemeral(command)]
    started = time.monotonic()
    outcomes = run_all(sandbox, accepted)
    elapsed = time.monotonic() - started
    bad = [outcome for outcome in outcomes if outcome.violations]
    if bad:
        pytest.fail(
            f"{len(bad)} of {len(accepted)} accepted glances did more than look "
            f"({elapsed:.0f} s for the run):\n{report(bad)}",
            pytrace=False,
        )
