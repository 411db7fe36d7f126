"""The sandbox every Bash command of a session runs in: the CLI's own, set by flower.

A worker has to run what a developer runs (the project's tests, its scripts, a build, a
package install, git), and nobody is there to approve a command in an unattended run. So
a worker's Bash runs without a prompt (the tool wall allows it, :mod:`flower.roles.walls`),
and what that Bash can reach is bounded here instead, by the sandbox the bundled Claude
Code CLI starts around each command (bubblewrap on Linux, Seatbelt on macOS), configured
through ``ClaudeAgentOptions(sandbox=...)``:

- **Writes**: the workspace and the CLI's temporary folder (plus the workbench when it
  lives outside the workspace, and any ``add_dirs``); never flower's own state: the run
  folder (``runs/``: the store, the manifest, the lineage), the frozen documents, the run
  id, the spill and archive folders (:meth:`Sandbox.settings`' ``protected``). A
  ``read_only`` role (a judge given Bash) writes nothing through Bash either: its
  workspace is read-only.
- **Reads**: every home folder (``$HOME`` and the account's own) is hidden, so SSH keys,
  cloud credentials, the CLI's OAuth token and flower's saved key are out of reach,
  except an allow-list of toolchain folders (interpreters, package caches, git's
  identity) a build needs; a few system secrets (``/etc/shadow``, the SSH host keys)
  are hidden too. Variables whose names say they hold a secret (the API key first) are
  unset for the command.
- **Network**: off, except the hosts the user allows (``--allow-net HOST``,
  ``FLOWER_ALLOW_NET``: package registries are the usual need).
- **No way out**: ``allowUnsandboxedCommands`` is off (the model's
  ``dangerouslyDisableSandbox`` is ignored) and no command is excluded.

Where the sandbox cannot start (no bubblewrap, user namespaces off, an unsupported
system), flower stops before the session with one line saying how to fix it and how to
opt out (:func:`problem`); the CLI is also told to fail rather than run unsandboxed
(``failIfUnavailable``). The opt-out, ``--no-sandbox`` or ``FLOWER_SANDBOX=0``, keeps the
workers able to run everything; they are then bounded only by the account flower runs as.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.kernel.redact import is_secret_name

__all__ = [
    "ALLOW_NET_ENV",
    "SANDBOX_ENV",
    "Sandbox",
    "SandboxUnavailable",
    "checkout_entries",
    "hidden_from",
    "missing",
    "problem",
    "protected_paths",
    "read_roots",
    "session_sandbox",
]

#: ``0`` / ``false`` / ``off`` / ``no`` turns the sandbox off (as ``--no-sandbox`` does).
SANDBOX_ENV = "FLOWER_SANDBOX"
#: Hosts sandboxed commands may reach, comma- or space-separated (``pypi.org,*.npmjs.org``).
ALLOW_NET_ENV = "FLOWER_ALLOW_NET"
#: How to run without the sandbox, as every refusal says it.
OPT_OUT = "--no-sandbox (or FLOWER_SANDBOX=0)"
_OFF_WORDS = frozenset({"0", "false", "off", "no"})

#: Folders under a home that a build reads and that hold no credentials by convention:
#: interpreters and version managers, package caches, user-installed tools, git's
#: identity (``git commit`` needs ``user.name``). Everything else under a home is hidden.
TOOLCHAIN_DIRS: tuple[str, ...] = (
    ".pyenv", ".local/bin", ".local/lib", ".local/pipx", ".local/share/virtualenvs",
    ".local/share/uv", ".virtualenvs", ".conda", "miniconda3", "anaconda3", "miniforge3",
    "mambaforge", ".cache/pip", ".cache/uv", ".cache/pypoetry", ".cache/pre-commit",
    ".cache/go-build", ".cargo/bin", ".cargo/registry", ".cargo/git", ".rustup", ".nvm",
    ".volta", ".bun/bin", ".deno/bin", ".sdkman/candidates", ".m2/repository",
    ".gradle/caches", ".gradle/wrapper", "go/bin", "go/pkg", ".rbenv", ".gem", ".asdf",
    ".local/share/mise", ".elan", ".ghcup", ".opam", ".julia", ".gitconfig", ".config/git",
    "bin",
)  # fmt: skip
#: System files that hold secrets even on a machine whose homes are hidden.
SYSTEM_SECRETS: tuple[str, ...] = (
    "/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssh",
    "/etc/sudoers", "/etc/sudoers.d", "/root",
)  # fmt: skip


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start here; the message is one line with the fix and the opt-out."""


def _off(value: str | None) -> bool:
    return value is not None and value.strip().lower() in _OFF_WORDS


def hosts(values: Iterable[str]) -> tuple[str, ...]:
    """Host names from ``--allow-net`` values and ``FLOWER_ALLOW_NET`` (commas or spaces),
    each checked: a URL or a path is refused with what to write instead."""
    found: list[str] = []
    for value in values:
        for host in value.replace(",", " ").split():
            if "://" in host or "/" in host or not host.strip("*."):
                raise ValueError(
                    f"--allow-net takes a host name such as pypi.org or *.npmjs.org, not {host!r}"
                )
            found.append(host.lower())
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Sandbox:
    """How the CLI's sandbox confines Bash; the Runtime's ``sandbox`` policy.

    Attributes:
        enabled: Sandbox every session that has Bash (the default). ``False`` runs
            commands with the account's own rights (workers still need no approval).
        allow_net: Hosts sandboxed commands may reach (the CLI's ``allowedDomains``;
            ``*.example.org`` for subdomains). Empty: no network at all.
    """

    enabled: bool = True
    allow_net: tuple[str, ...] = ()

    @classmethod
    def resolve(
        cls,
        value: Sandbox | bool | None = None,
        *,
        allow_net: Iterable[str] = (),
        environ: Mapping[str, str] | None = None,
    ) -> Sandbox:
        """The policy in effect: ``value`` as given (a ``Sandbox``, or ``True``/``False``),
        else on unless ``FLOWER_SANDBOX`` turns it off; ``allow_net`` joined with
        ``FLOWER_ALLOW_NET``. ``FLOWER_SANDBOX=0`` also turns off a ``True`` (the opt-out
        works without touching code); an explicit ``Sandbox`` is kept as it is."""
        env = os.environ if environ is None else environ
        extra = hosts([*allow_net, env.get(ALLOW_NET_ENV, "")])
        if isinstance(value, Sandbox):
            return cls(value.enabled, hosts([*value.allow_net, *extra]))
        enabled = value is not False and not _off(env.get(SANDBOX_ENV))
        return cls(enabled, extra)

    def settings(
        self,
        *,
        workspace: Path,
        protected: Iterable[Path] = (),
        writable: Iterable[Path] = (),
        read_only: bool = False,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, Any] | None:
        """The CLI's ``sandbox`` settings for one session, or ``None`` when off.

        ``protected``: paths no command may write (flower's state); ``writable``: folders
        beside the workspace a command may write (an outside workbench, ``add_dirs``);
        ``read_only``: the workspace itself is not writable (a role with no write tool);
        ``environ``: the CLI's environment, whose secret-named variables are unset.
        """
        if not self.enabled:
            return None
        env = dict(os.environ if environ is None else environ)
        ws = _real(workspace)
        deny_write = [str(p) for p in dict.fromkeys(_real(p) for p in protected)]
        allow_write = [str(p) for p in dict.fromkeys(_real(p) for p in writable)]
        if read_only:
            deny_write = [str(ws), *allow_write, *deny_write]
            allow_write = []
        deny_read, allow_read = _read_rules(ws, [Path(p) for p in allow_write], env)
        settings: dict[str, Any] = {
            "enabled": True,
            "failIfUnavailable": True,
            "autoAllowBashIfSandboxed": True,
            "allowUnsandboxedCommands": False,
            "excludedCommands": [],
            "filesystem": {
                "allowWrite": allow_write,
                "denyWrite": deny_write,
                "denyRead": deny_read,
                "allowRead": allow_read,
            },
            "credentials": {
                "envVars": [
                    {"name": name, "mode": "deny"}
                    for name in sorted(n for n in env if is_secret_name(n))
                ]
            },
            "network": {"allowedDomains": list(self.allow_net)},
        }
        return settings


def _real(path: Path | str) -> Path:
    """``path`` absolute, its links resolved where it exists (the sandbox binds real paths)."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return Path(path).expanduser().absolute()


def homes(environ: Mapping[str, str]) -> list[Path]:
    """Every home folder a command could find credentials in: ``$HOME``, the account's
    own home (it differs under a test's or a wrapper's ``HOME``), the CLI's and flower's
    configuration folders when they live elsewhere."""
    found: list[Path] = []
    if environ.get("HOME"):
        found.append(_real(environ["HOME"]))
    try:
        found.append(_real(pwd.getpwuid(os.getuid()).pw_dir))
    except (KeyError, OSError):
        pass
    for name in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        if environ.get(name):
            found.append(_real(environ[name]))
    return [p for p in dict.fromkeys(found) if str(p) != "/"]


def _read_rules(
    workspace: Path, writable: list[Path], environ: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """(denyRead, allowRead) for the CLI: :func:`read_roots` as strings, the hidden ones
    that exist."""
    hidden, shown = read_roots(workspace, writable, environ)
    return [str(p) for p in hidden if p.exists()], [str(p) for p in shown]


#: The variables :func:`read_roots` depends on (its cache key).
_ROOT_VARS = ("HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "PATH")


def read_roots(
    workspace: Path, writable: Iterable[Path], environ: Mapping[str, str]
) -> tuple[list[Path], list[Path]]:
    """(hidden, shown): the homes and system secrets hidden; the workspace, the folders
    a command may write, the interpreter flower runs on, the toolchain folders and the
    ``PATH`` folders inside a hidden home shown again. The sandbox hides them from Bash;
    the reach guard (:func:`flower.roles.guard.reach_guard`) from Read, Glob and Grep.

    Resolving a few dozen paths costs ~20 ms, once per session: the answer is cached per
    workspace, folders and the variables it reads (a folder made later needs a new
    process to be shown; hiding never waits for one)."""
    key = tuple(environ.get(name, "") for name in _ROOT_VARS)
    hidden, shown = _read_roots(str(workspace), tuple(str(p) for p in writable), key)
    return list(hidden), list(shown)


@functools.lru_cache(maxsize=64)
def _read_roots(
    workspace_text: str, writable_text: tuple[str, ...], key: tuple[str, ...]
) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    environ = dict(zip(_ROOT_VARS, key, strict=True))
    workspace = _real(workspace_text)
    writable = [_real(p) for p in writable_text]
    hidden = [*homes(environ), *(Path(p) for p in SYSTEM_SECRETS)]
    shown: list[Path] = [workspace, *writable]
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        shown.append(_real(prefix))
    # what the interpreter imports from outside its prefixes: an editable install's
    # source folders (a .pth names them: a clone's src/ under /tmp, which a check's fresh
    # /tmp would hide, so `python -m pytest` stopped with exit 3 loading flower's plugin)
    shown.extend(
        _real(entry) for entry in sys.path if os.path.isabs(entry) and os.path.isdir(entry)
    )
    for home in homes(environ):
        shown.extend(home / name for name in TOOLCHAIN_DIRS if (home / name).exists())
    for entry in environ.get("PATH", "").split(os.pathsep):
        if entry and any(_inside(_real(entry), h) for h in hidden):
            shown.append(_real(entry))
    # a shown folder must not uncover a hidden credential folder inside it (a workspace
    # that is itself a home): the CLI lets allowRead win over denyRead
    keep = [p for p in dict.fromkeys(shown) if not any(_inside(h, p) and h != p for h in hidden)]
    return tuple(dict.fromkeys(hidden)), tuple(keep)


def hidden_from(path: Path, hidden: Iterable[Path], shown: Iterable[Path]) -> bool:
    """Whether ``path`` (resolved) lies in a hidden root and in no shown one."""
    real = _real(path)
    return any(_inside(real, h) for h in hidden) and not any(_inside(real, s) for s in shown)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def problem() -> str | None:
    """Why the sandbox cannot start on this machine, as one line with the fix and the
    opt-out, or ``None`` when it can; :func:`missing` without the opt-out."""
    why = missing()
    return (
        f"the workers' sandbox cannot start: {why}; or run without it: {OPT_OUT}" if why else None
    )


@functools.lru_cache(maxsize=1)
def missing() -> str | None:
    """What keeps the sandbox from starting here (what to install or change), or
    ``None``. Checked once per process, before a session is paid for.

    Linux needs bubblewrap (``bwrap``) and ``socat`` on ``PATH`` and user namespaces a
    process may create (checked by starting ``bwrap`` once); macOS has Seatbelt
    (``sandbox-exec``); other systems have no sandbox the CLI can start.
    """
    if sys.platform == "darwin":
        if Path("/usr/bin/sandbox-exec").exists():
            return None
        return "macOS has no /usr/bin/sandbox-exec here"
    if not sys.platform.startswith("linux"):
        return f"the CLI's sandbox runs on Linux and macOS, not on {sys.platform}"
    absent = [name for name in ("bwrap", "socat") if shutil.which(name) is None]
    if absent:
        names = " and ".join("bubblewrap (bwrap)" if n == "bwrap" else n for n in absent)
        return (
            f"{names} not installed; install them (Debian/Ubuntu: sudo apt install bubblewrap"
            " socat; Fedora: sudo dnf install bubblewrap socat)"
        )
    try:
        trial = subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap would not start ({exc})"
    if trial.returncode != 0:
        said = " ".join(trial.stderr.split())[:200] or f"exit status {trial.returncode}"
        return (
            f"bubblewrap cannot create its namespaces ({said}); allow unprivileged user"
            " namespaces (sudo sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu"
            " kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    return None


def check(sandbox: Sandbox) -> None:
    """Raise :class:`SandboxUnavailable` when ``sandbox`` is on and cannot start here."""
    why = problem() if sandbox.enabled else None
    if why:
        raise SandboxUnavailable(why)


#: What a run folder holds that no agent may change: the store (and SQLite's side files),
#: the manifest, the lineage, the lock, the outcome, the pending question, the drift record.
RUN_STATE: tuple[str, ...] = (
    "sessions.db", "sessions.db-wal", "sessions.db-shm", "sessions.db-journal",
    "manifest.json", "lineage.json", "run.lock", "outcome.json", "pending.json",
    "workspace-state.json",
)  # fmt: skip


def protected_paths(run_dir: Path, workbench: Any, extra: Iterable[Path] = ()) -> list[Path]:
    """flower's own state, which no agent may write: the run folder (or, when the
    workbench lives inside it, each of its entries but the workbench), the workbench's
    spill and archive folders and its run id, and ``extra`` (what the workflow froze)."""
    from flower.records.runstate import MARKER_NAME
    from flower.records.workbench import ARCHIVE_DIRNAME, SPILL_DIRNAME

    run = _real(run_dir)
    found: list[Path] = []
    root = _real(workbench.root) if workbench is not None else None
    if root is not None and root != run and _inside(root, run):
        try:
            entries = [p for p in run.iterdir() if not _inside(root, _real(p))]
        except OSError:
            entries = []
        found += [*entries, *(run / name for name in RUN_STATE)]
    else:
        found.append(run)
    if root is not None:
        found += [root / SPILL_DIRNAME, root / "notes" / ARCHIVE_DIRNAME, root / MARKER_NAME]
    found += [_real(p) for p in extra]
    return list(dict.fromkeys(found))


#: What an isolated worker may still write in the shared checkout: git's own folder (a
#: worktree's commits land in its objects and refs) and the CLI's, where the worktrees are.
CHECKOUT_KEEPS = {".git": (), ".claude": ("worktrees",)}


def checkout_entries(workspace: Path) -> list[Path]:
    """Everything at the top of the shared checkout an isolated worker must not write:
    each entry but ``.git``, and each entry of ``.claude`` but ``worktrees``. (A new
    entry at the top cannot be mounted read-only before it exists: the confine guard
    moves one out after the command, :func:`flower.roles.guard.confine_guard`.)"""
    found: list[Path] = []
    try:
        top = sorted(workspace.iterdir())
    except OSError:
        return found
    for entry in top:
        if entry.name not in CHECKOUT_KEEPS:
            found.append(entry)
            continue
        kept = CHECKOUT_KEEPS[entry.name]
        if kept and entry.is_dir() and not entry.is_symlink():
            found += sorted(p for p in entry.iterdir() if p.name not in kept)
    return found


def session_sandbox(
    sandbox: Sandbox,
    tools: Iterable[str],
    *,
    workspace: Path,
    protected: Iterable[Path],
    writable: Iterable[Path],
    environ: Mapping[str, str],
    isolated: bool = False,
    read_only: bool = False,
) -> dict[str, Any] | None:
    """The ``sandbox`` option of a session whose threads have ``tools`` (the CLI's tool
    set): ``None`` without Bash (nothing to confine) or with the sandbox off; a
    read-only workspace for a ``read_only`` role; the shared checkout's entries
    read-only when every worker runs ``isolated`` in a worktree. Raises
    :class:`SandboxUnavailable` where it cannot start: never a silent unsandboxed run."""
    if "Bash" not in set(tools) or not sandbox.enabled:
        return None
    check(sandbox)
    confined = checkout_entries(_real(workspace)) if isolated else []
    return sandbox.settings(
        workspace=workspace,
        protected=[*protected, *confined],
        writable=writable,
        read_only=read_only,
        environ=environ,
    )
