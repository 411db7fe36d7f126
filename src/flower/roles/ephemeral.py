"""Is this Bash command a read-only one-off look, a *glance* (``is_ephemeral``)?

One predicate serves two masters and must stay one predicate: ``delegate_guard(allow_glance=True)``
lets a coordinator's main thread run exactly these commands itself, unsupervised, and the session
store expires exactly these commands' results at resume time (a stale ``git status`` misleads; an
expired ``ls`` costs nothing to re-run). Because the first use is a security gate, every doubt
resolves to "no": a wrong yes lets an adversarial model write, delete, run code, reach the
network or print secrets without a worker; a wrong no only costs one worker dispatch.

The rule: every segment of the command (split on ``&& || ; |``) must be a binary on the glance
list below, used only with options on that binary's allow-list, judged against the binary the
session *really* runs (bfs for ``find``, ugrep or GNU grep for ``grep``, ripgrep 14, gawk or
mawk for ``awk``, GNU sed). An accepted command does not reach the network or resolve names,
run a program the model chose, write, change processes or the repository, print the
environment or a credential, and it comes back (nothing that follows or waits for input).

This module is the policy, which binaries are glances at all (:data:`VERBS`, :data:`NEVER`,
:data:`REMOVED`); :mod:`flower.roles.glance` holds the machinery (lexer, option allow-lists,
per-binary checkers, sensitive paths). docs/ephemeral.md argues every entry.

* :func:`decide` is the decision; a crash inside a checker propagates (the tests use it).
* :func:`is_ephemeral` is :func:`decide` failing closed: a crash is ``False``.
* :func:`explain` says *why* not, in one line for the model, so it can rephrase
  (``"find -rm deletes files"``, ``"lsof without -n resolves host names: add -n"``).
* :data:`GLANCE_ENV` is the environment every glance must run with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flower.kernel.policies import register_glance
from flower.roles.glance.awk import check_awk
from flower.roles.glance.binaries import TOOLS, check_tool
from flower.roles.glance.find import check_find
from flower.roles.glance.git import check_git
from flower.roles.glance.grep import check_grep, check_rg
from flower.roles.glance.jq import check_jq
from flower.roles.glance.lexer import HOME_MARK, PWD_MARK, Refuse, Word, lex, segments
from flower.roles.glance.paths import network_reason
from flower.roles.glance.sed import check_sed
from flower.roles.glance.shell import (
    NOT_VERSIONED,
    VERSIONS,
    check_command,
    check_echo,
    check_pip,
    check_printf,
    check_test,
    check_true,
    check_version,
    toolchain,
)
from flower.roles.glance.system import (
    SYSTEM_TOOLS,
    check_docker,
    check_hostname,
    check_lsof,
    check_netstat,
    check_ps,
    check_ss,
    check_system_tool,
)

__all__ = ["GLANCE_ENV", "NEVER", "REMOVED", "VERBS", "decide", "explain", "is_ephemeral"]

#: The variables every glance must run with (the glance hook exports them before the command):
#: pip's self version check would reach the network and write its cache; git status would
#: refresh (write) the index; pip must never prompt; ``go version`` must not download the
#: toolchain go.mod asks for; a pager must never wait for a key, nor git prompt for a password;
#: git in a partial clone must not fetch missing objects from its promisor remote.
GLANCE_ENV: dict[str, str] = {
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_NO_INPUT": "1",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GOTOOLCHAIN": "local",
    "GIT_NO_LAZY_FETCH": "1",
}

Checker = Callable[[str, Sequence[Word]], None]

#: Longer commands are refused outright: a glance is short, and the checks (glob against glob)
#: must stay fast on whatever a model sends.
MAX_LENGTH = 4000


def _env(verb: str, args: Sequence[Word]) -> None:
    """``env``/``printenv`` print the environment, which holds the API key; only the version."""
    if [w.text for w in args] not in (["--version"], ["--help"]):
        raise Refuse(f"{verb} prints the environment (API key included)")


#: verb -> checker. A verb absent here is never a glance.
VERBS: dict[str, Checker] = {
    **dict.fromkeys(TOOLS, check_tool),
    **dict.fromkeys(SYSTEM_TOOLS, check_system_tool),
    **dict.fromkeys(VERSIONS, check_version),
    **dict.fromkeys(("g++", "cc", "c++", "clang", "clang++"), check_version),
    "git": check_git,
    "find": check_find,
    "grep": check_grep,
    "egrep": check_grep,
    "fgrep": check_grep,
    "rg": check_rg,
    "awk": check_awk,
    "gawk": check_awk,
    "mawk": check_awk,
    "sed": check_sed,
    "jq": check_jq,
    "ps": check_ps,
    "lsof": check_lsof,
    "ss": check_ss,
    "netstat": check_netstat,
    "hostname": check_hostname,
    "docker": check_docker,
    "echo": check_echo,
    "printf": check_printf,
    "true": check_true,
    "false": check_true,
    "test": check_test,
    "[": check_test,
    "command": check_command,
    "pip": check_pip,
    "pip3": check_pip,
    "env": _env,
    "printenv": _env,
}

#: Binaries that are not glances even in their most harmless form, with the reason (shown by
#: :func:`explain`): kubectl, taken off the list, and the toolchains refused even for --version.
REMOVED: dict[str, str] = {
    "kubectl": "kubectl talks to an API server over the network (and --raw reaches in-cluster"
    " services)",
    # measured: procps-ng's top makes ~/.config/procps on every run where it is missing
    "top": "top creates ~/.config/procps in HOME on its first run; use ps (e.g. ps aux"
    " --sort=-%cpu | head)",
    **{name: f"{name}: {why}" for name, why in NOT_VERSIONED.items()},
}

#: Never glances, whatever follows: they run another command, change the shell, or wait.
NEVER: dict[str, str] = {
    **dict.fromkeys(
        (
            "xargs",
            "exec",
            "eval",
            "source",
            ".",
            "sudo",
            "doas",
            "su",
            "nice",
            "nohup",
            "timeout",
            "time",
            "watch",
            "sh",
            "bash",
            "zsh",
            "dash",
            "ksh",
            "fish",
            "busybox",
            "builtin",
            "coproc",
            "setsid",
            "stdbuf",
            "chroot",
            "ionice",
            "taskset",
            "flock",
            "script",
            "strace",
            "ltrace",
            "parallel",
            "unbuffer",
            "nsenter",
            "runuser",
        ),
        "runs another command",
    ),
    **dict.fromkeys(
        (
            "cd",
            "pushd",
            "popd",
            "export",
            "unset",
            "alias",
            "unalias",
            "set",
            "shopt",
            "trap",
            "declare",
            "typeset",
            "local",
            "readonly",
            "let",
            "read",
            "mapfile",
            "readarray",
            "hash",
            "enable",
            "umask",
            "ulimit",
            "bind",
            "complete",
        ),
        "changes the shell's state for later commands",
    ),
    "tee": "writes files",
    "[[": "evaluates arithmetic in its operands (a[$(cmd)] runs cmd): use test or [",
    "!": "is refused: negate with test instead",
    "kill": "signals processes",
    "wait": "waits for jobs",
}


def _check_segment(words: Sequence[Word]) -> None:
    """One simple command: a glance verb with arguments its checker accepts."""
    verb_word, args = words[0], words[1:]
    verb = verb_word.text
    if verb_word.glob:
        raise Refuse("a glob as the command name is refused")
    if HOME_MARK in verb or PWD_MARK in verb or "/" in verb:
        raise Refuse("a command given as a path runs whatever file is there: use its name")
    if "=" in verb:
        raise Refuse("leading VAR=value assignments are refused (PAGER=, LD_PRELOAD= run code)")
    if verb in NEVER:
        raise Refuse(f"{verb} {NEVER[verb]}")
    if verb in REMOVED:
        raise Refuse(REMOVED[verb])
    for word in args:
        reason = network_reason(word.text)
        if reason is not None:
            raise Refuse(reason)
    checker = VERBS.get(verb)
    if checker is None and toolchain(verb) == "python":
        checker = check_version
    elif checker is None and toolchain(verb) == "pip":
        checker = check_pip
    if checker is None:
        raise Refuse(f"{verb[:40]} is not on the glance list")
    checker(verb, args)


def _has_forbidden_control(cmd: str) -> bool:
    return any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in cmd)


def _verdict(cmd: str) -> str | None:
    """``None`` when ``cmd`` is a glance, else the reason. A checker crash propagates."""
    if not isinstance(cmd, str):
        return "not a command string"
    stripped = cmd.strip(" \t\n")
    if not stripped:
        return "empty command"
    if len(stripped) > MAX_LENGTH:
        return f"longer than {MAX_LENGTH} characters: not a glance"
    if _has_forbidden_control(stripped):
        return "newlines and control characters are refused"
    try:
        for words in segments(lex(stripped)):
            _check_segment(words)
    except Refuse as refusal:
        return refusal.reason
    return None


def decide(cmd: str) -> bool:
    """The decision itself: ``True`` or ``False`` by the rules, and nothing else.

    Every refusal is a decision (a :class:`~flower.roles.glance.lexer.Refuse` ends here as
    ``False``). Any other exception is a bug in the checker and propagates, so tests see it.
    """
    return _verdict(cmd) is None


def explain(cmd: str) -> str | None:
    """``None`` if ``cmd`` is a glance, else one English line naming the refused part.

    Meant for the deny text shown to the model, so it can rephrase instead of dispatching a
    worker. Reasons name options and paths, never option values, so no secret is echoed. A
    checker crash fails closed here too, with a generic reason.
    """
    try:
        reason = _verdict(cmd)
    except Exception:  # fail closed: a checker bug must never become an acceptance
        return "the glance checker could not judge this command"
    if reason is None:
        return None
    return " ".join(reason.split())[:200]


def is_ephemeral(cmd: str) -> bool:
    """True iff ``cmd`` only looks at state (safe to run unsupervised, stale once it ran).

    :func:`decide` failing closed: a crash inside the checker (a bug, never a rule) is a
    ``False`` too, because a wrong ``True`` here is a security hole.
    """
    try:
        return decide(cmd)
    except Exception:  # fail closed: a checker bug must never become a True
        return False


#: The stores expire the stale results of glances without knowing the rule: an
#: ``EphemeralPolicy`` that names no classifier uses the one registered in the kernel.
register_glance(is_ephemeral)
