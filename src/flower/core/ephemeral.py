"""Is this Bash command a one-off look whose answer goes stale (``is_ephemeral``)?

One predicate serves two masters and must stay one predicate: ``delegate_guard(allow_glance=True)``
lets a coordinator's main thread run exactly these commands itself, unsupervised, and the session
store expires exactly these commands' results at resume time (a stale ``git status`` misleads; an
expired ``ls`` costs nothing to re-run). Because the first use is a security gate, every doubt
resolves to ``False``: a wrong ``True`` lets the coordinator change state or run code without a
worker, a wrong ``False`` only costs one subagent launch.

The checks, in the seed's order (each failure is ``False``):

1. empty or blank;
2. command substitution (``$(`` `````` ``<(`` ``>(``) or any construct that runs or changes
   something (see below);
3. a ``>``/``<`` left after dropping the safe redirections (to ``/dev/null`` or ``N>&M``);
4. a lone ``&`` (background job) left after dropping ``&&``/``||``/``;``/``|``;
5. split on ``&&``/``||``/``;``/``|`` (quote-aware); every segment must pass :data:`_VERBS`.

Where the seed is silent, this module chooses the conservative reading:

* The command is tokenised the way bash does it (single/double quotes, backslashes), so
  ``grep "a|b" f`` is one segment and ``grep '>' f`` has no redirection. Unbalanced quotes, a
  trailing backslash, newlines inside the command, carriage returns and other control characters
  are refused; leading/trailing spaces, tabs and newlines are ignored.
* Any unescaped ``$`` outside single quotes is refused (``$VAR`` could expand to ``-delete``),
  as are unquoted ``(`` ``)`` ``{`` ``}`` (subshells, groups, brace expansion ``{-o,x}``; the
  one exception is git's ``@{u}``/``HEAD@{1}``), a ``#`` starting a word (comment) and empty
  segments (``ls ;``, ``;; ``).
* A leading ``VAR=value`` is refused (``PAGER=``, ``GIT_PAGER=``, ``LD_PRELOAD=`` run code).
* A verb written as a path (``/bin/ls``, ``./ls``) is refused, not normalised: ``./ls`` is
  whatever script sits in the workspace. Quoting the verb (``'ls'``) is harmless and allowed.
* Globs are fine, but a glob whose first character is a wildcard (``*``, ``*.py``, ``?x``)
  can expand to a file named like an option (``--pre=sh``, ``-delete``, ``-ofile``), so it is
  only accepted for verbs that have no dangerous option at all (``cat``, ``ls``, ``grep``,
  ``wc``...). Write ``./*.log`` for the others; ``--`` does not help, since a ``--`` can be
  the argument of the option before it (``rg -e -- --pre=sh``).
* Options are checked conservatively: GNU tools accept unique prefixes of long options
  (``sort --out=f``), so any prefix of a dangerous long option is refused; a short-option
  cluster is refused if any of its letters is a dangerous option (``sed -ni``), even where the
  letter would really be an option argument.
* Commands that never return (``tail -f``, ``top`` without ``-b -n N``, ``kubectl get -w``,
  ``docker logs -f``, ``docker stats`` without ``--no-stream``, ``free -s``, ``lsof -r``) are
  refused: a glance must come back.
* ``sed`` passes only when every script parses as a read-only one-liner (no ``w``/``W``/``r``/
  ``R``/``e`` commands, no ``w``/``e`` flag on ``s``, no ``a``/``i``/``c``), with no ``-i``,
  ``-f`` or unknown option. ``awk`` passes only with ``-F``/``-v`` options and a program with no
  ``system``, ``getline``, single ``|``, ``@`` (gawk ``@load``/indirect calls), and no ``>``
  after the first ``print``/``printf`` (so ``$3 > 100 {print $1}`` passes).
* git: only the read-only subcommands in :data:`_GIT_READ_ONLY` plus the listing forms of
  ``branch``/``tag``/``stash``/``remote``/``config``/``reflog``/``worktree``; the only global
  options are ``--no-pager``/``-P``/``--no-optional-locks``/``--literal-pathspecs``
  (``-c``, ``-C``, ``--git-dir``, ``--exec-path`` can point git at hooks or config that run
  code). The repository's own config (``diff.external``, ``core.fsmonitor``) is trusted: running
  any git command in it already trusts it.
* Anything unexpected inside the checker itself is a ``False`` (fail closed): this function
  never raises. The swallow sits in :func:`is_ephemeral` alone; :func:`decide` is the same
  decision with a checker crash left to propagate, which is what the tests exercise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["is_ephemeral"]


# --------------------------------------------------------------------------------------------
# Rule shapes used by the whitelist table
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Free:
    """No option of this verb writes, runs code or blocks: any arguments and globs pass."""


@dataclass(frozen=True)
class Block:
    """Any argument passes except the listed options (and their long-option prefixes).

    ``short``: letters refused anywhere in a ``-xyz`` cluster; ``long``: names refused, with
    every abbreviation of them; ``plus``: also scan ``+xyz`` words (``tail +5f``, ``lsof +r``).
    Globs starting with a wildcard are refused (they can expand to one of these options).
    Every word is scanned, also after ``--`` (it may be an option's argument).
    """

    short: str = ""
    long: tuple[str, ...] = ()
    plus: bool = False


@dataclass(frozen=True)
class Opts:
    """Only the listed options pass (exact names, no abbreviations); checks positionals.

    ``flags``/``with_arg``: short letters without/with an argument; ``long_flags``/``long_args``
    likewise for long names. ``optional``/``long_optional``: options whose argument is optional
    and therefore only ever attached (``-Iseconds``, ``--group=append``): the next word is an
    operand, never their value. ``max_pos``: most operands allowed (a glob operand counts as
    unbounded). ``pos_prefix``: every operand must start with it (``date +FORMAT``).
    """

    flags: str = ""
    with_arg: str = ""
    optional: str = ""
    long_flags: tuple[str, ...] = ()
    long_args: tuple[str, ...] = ()
    long_optional: tuple[str, ...] = ()
    max_pos: int | None = None
    pos_prefix: str = ""


@dataclass(frozen=True)
class Special:
    """Checked by a dedicated function in :data:`_SPECIAL` (git, sed, awk, find...)."""

    name: str


Rule = Free | Block | Opts | Special

# --------------------------------------------------------------------------------------------
# The whitelist
# --------------------------------------------------------------------------------------------

_FREE = Free()

#: verb -> rule. A verb not in this table is never ephemeral.
_VERBS: dict[str, Rule] = {
    # -- read-only git (subcommands in _GIT_READ_ONLY / _GIT_LISTING) --
    "git": Special("git"),
    # -- directory and system info --
    "ls": _FREE,
    "pwd": _FREE,
    "df": _FREE,
    "du": _FREE,
    "date": Opts(
        flags="uR",
        with_arg="dfr",
        optional="I",
        long_flags=("utc", "universal", "rfc-email", "rfc-2822", "debug", "resolution"),
        long_args=("date", "file", "reference", "rfc-3339"),
        long_optional=("iso-8601",),
        pos_prefix="+",  # a bare MMDDhhmm operand *sets* the clock
    ),
    "whoami": _FREE,
    "id": _FREE,
    "groups": _FREE,
    "uname": _FREE,
    "arch": _FREE,
    "uptime": _FREE,
    "nproc": _FREE,
    "tty": _FREE,
    "who": _FREE,
    "w": _FREE,
    "users": _FREE,
    "lscpu": _FREE,
    "lsblk": _FREE,
    "locale": _FREE,
    "free": Block(short="sc", long=("seconds", "count")),  # -s N repeats forever
    "hostname": Opts(  # an operand, -F or -b would set the hostname
        flags="sfiIdaA",
        long_flags=(
            "short",
            "fqdn",
            "long",
            "ip-address",
            "all-ip-addresses",
            "all-fqdns",
            "domain",
            "alias",
        ),
        max_pos=0,
    ),
    "env": Opts(flags="0", long_flags=("null",), max_pos=0),  # `env CMD` runs CMD
    "printenv": _FREE,
    "realpath": _FREE,
    "readlink": _FREE,
    "basename": _FREE,
    "dirname": _FREE,
    "file": Block(short="C", long=("compile",)),  # -C writes magic.mgc
    # -- processes and containers --
    "ps": _FREE,
    "pgrep": _FREE,
    "pstree": _FREE,
    "top": Special("top"),
    "lsof": Block(short="rD", plus=True),  # -r / +r repeat forever; -D b writes a cache file
    "ss": Block(short="KED", long=("kill", "events", "diag")),  # -D FILE dumps to a file
    "netstat": Block(short="c", long=("continuous",)),
    "docker": Special("docker"),
    "kubectl": Special("kubectl"),
    # -- file viewing --
    "cat": _FREE,
    "head": _FREE,
    "tail": Block(short="fF", long=("follow", "retry", "pid", "sleep-interval"), plus=True),
    "wc": _FREE,
    "stat": _FREE,
    "find": Special("find"),
    "tree": Block(short="oR", long=("output",)),  # -o FILE; -R -H writes HTML
    "nl": _FREE,
    "od": _FREE,
    "hexdump": _FREE,
    "strings": _FREE,
    "md5sum": _FREE,
    "sha1sum": _FREE,
    "sha256sum": _FREE,
    "sha512sum": _FREE,
    "cksum": _FREE,
    "b2sum": _FREE,
    # -- path lookup --
    "which": _FREE,
    "whereis": _FREE,
    "type": _FREE,
    "command": Special("command"),  # only -v / -V: otherwise it runs its operand
    # -- text processing --
    "grep": _FREE,
    "egrep": _FREE,
    "fgrep": _FREE,
    "rg": Block(long=("pre", "pre-glob", "hostname-bin")),  # --pre=CMD runs CMD per file
    "sort": Block(short="o", long=("output", "compress-program")),
    "uniq": Opts(  # a second operand is an output file
        flags="cdDiuz",
        with_arg="fsw",
        long_flags=("count", "repeated", "unique", "ignore-case", "zero-terminated"),
        long_args=("skip-fields", "skip-chars", "check-chars"),
        long_optional=("all-repeated", "group"),
        max_pos=1,
    ),
    "awk": Special("awk"),
    "sed": Special("sed"),
    "jq": _FREE,
    "diff": _FREE,
    "cmp": _FREE,
    "comm": _FREE,
    "cut": _FREE,
    "tr": _FREE,
    "column": _FREE,
    "paste": _FREE,
    "join": _FREE,
    "fold": _FREE,
    "fmt": _FREE,
    "rev": _FREE,
    "tac": _FREE,
    "expand": _FREE,
    "unexpand": _FREE,
    "base64": _FREE,
}

#: Never whitelisted, whatever follows: they run another command or write a file.
NEVER: frozenset[str] = frozenset(
    {"xargs", "exec", "eval", "source", ".", "tee", "sudo", "nice", "nohup", "timeout", "time",
     "watch", "sh", "bash", "cd"}
)  # fmt: skip

#: git subcommands that only read (their options still pass _git_options_ok).
_GIT_READ_ONLY: frozenset[str] = frozenset(
    {
        "status", "diff", "log", "show", "shortlog", "whatchanged", "blame", "annotate",
        "rev-parse", "rev-list", "ls-files", "ls-tree", "cat-file", "describe", "merge-base",
        "name-rev", "for-each-ref", "show-ref", "count-objects", "grep", "check-ignore",
        "check-attr", "cherry", "range-diff", "diff-tree", "diff-files", "diff-index",
        "show-branch", "var", "version",
    }
)  # fmt: skip

#: git subcommands that read in some forms and write in others (checked one by one).
_GIT_LISTING: frozenset[str] = frozenset(
    {"branch", "tag", "stash", "remote", "config", "reflog", "worktree"}
)

#: git options allowed before the subcommand.
_GIT_GLOBAL: frozenset[str] = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"}
)

#: long options refused for every git subcommand, with every abbreviation (``--out=x``) ...
_GIT_DANGEROUS_LONG = ("output", "ext-diff", "textconv", "exec", "upload-pack", "receive-pack")
#: ... and with any suffix (``--force-with-lease``, ``--output-directory``, ``--prune-tags``)
_GIT_DANGEROUS_STEMS = ("force", "hard", "prune", "output", "ext-diff", "textconv", "exec")
#: extra dangerous long options per subcommand
_GIT_EXTRA_LONG: dict[str, tuple[str, ...]] = {
    "grep": ("open-files-in-pager", "ext-grep"),
    "cat-file": ("filters",),
}
#: extra dangerous short letters per subcommand
_GIT_EXTRA_SHORT: dict[str, str] = {"grep": "O"}
#: exact long names that are real options although they prefix a dangerous one
_EXACT_OK: frozenset[str] = frozenset({"text"})

#: docker (subcommand, sub-subcommand) pairs that only read; "" = no sub-subcommand
_DOCKER: frozenset[tuple[str, str]] = frozenset(
    {
        ("ps", ""), ("images", ""), ("inspect", ""), ("version", ""), ("info", ""),
        ("logs", ""), ("port", ""), ("top", ""), ("history", ""), ("diff", ""), ("stats", ""),
        ("image", "ls"), ("image", "list"), ("image", "inspect"), ("image", "history"),
        ("container", "ls"), ("container", "list"), ("container", "inspect"),
        ("container", "logs"), ("container", "port"), ("container", "top"),
        ("container", "diff"), ("container", "stats"),
        ("network", "ls"), ("network", "inspect"), ("volume", "ls"), ("volume", "inspect"),
        ("context", "ls"), ("context", "show"), ("context", "inspect"),
        ("system", "df"), ("system", "info"),
        ("compose", "ps"), ("compose", "ls"), ("compose", "images"), ("compose", "top"),
        ("compose", "logs"),
    }
)  # fmt: skip
_DOCKER_GROUPS = frozenset(sub for sub, subsub in _DOCKER if subsub)

#: kubectl subcommands allowed (the seed's "kubectl get" family; nothing that execs or writes)
_KUBECTL: frozenset[str] = frozenset({"get", "describe", "logs"})
#: kubectl options refused anywhere: a foreign kubeconfig runs its `exec` credential plugin,
#: --server/--proxy-url/-s send the user's token elsewhere, -k/--kustomize builds (and may run
#: generators), the others write files or never return (-w/--watch; -f/--follow for logs).
_KUBECTL_BLOCK = Block(
    short="wsk",
    long=("kubeconfig", "watch", "watch-only", "follow", "server", "proxy-url", "cache-dir",
          "log-file", "log-dir", "profile", "profile-output", "kustomize"),
)  # fmt: skip

#: find primaries that run a command or write a file
_FIND_BAD: frozenset[str] = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)

#: sed commands with no argument that only read/print
_SED_PLAIN = frozenset("pdnNPDgGhHxz=F")

# --------------------------------------------------------------------------------------------
# Tokenising (bash's quoting rules, refusing whatever we do not model)
# --------------------------------------------------------------------------------------------


class _Refuse(Exception):
    """Internal: the command is not ephemeral (raised from deep inside the lexer/checks)."""


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal.

    ``glob``: has an unquoted ``*``/``?``/``[`` (bash will expand it); ``lead_glob``: it is a
    glob that may expand to a word starting with ``-`` or ``+`` (its first character is a
    wildcard, or it starts with ``-``/``+`` itself, like ``--out*``), i.e. to unknown options.
    """

    text: str
    glob: bool = False
    lead_glob: bool = False

    def may_be_option(self) -> bool:
        return self.text.startswith("-") or self.lead_glob


@dataclass(frozen=True)
class _Op:
    """A control operator: ``&&``, ``||``, ``;`` or ``|`` (``|&`` is read as ``|``)."""

    op: str


@dataclass(frozen=True)
class _Redir:
    """A redirection operator; its target is the next word."""

    op: str


@dataclass
class _WordBuilder:
    chars: list[str] = field(default_factory=list)
    started: bool = False
    quoted: bool = False
    glob: bool = False
    lead_glob: bool = False

    def add(self, text: str, *, quoted: bool) -> None:
        self.chars.append(text)
        self.started = True
        self.quoted = self.quoted or quoted

    def take(self) -> Word | None:
        if not self.started:
            return None
        text = "".join(self.chars)
        lead = self.glob and (self.lead_glob or text.startswith(("-", "+")))
        word = Word(text, self.glob, lead)
        self.chars, self.started, self.quoted, self.glob, self.lead_glob = (
            [],
            False,
            False,
            False,
            False,
        )
        return word


_BLANK = " \t"
_OPERATOR_CHARS = "|&;<>"
_GLOB_CHARS = "*?["
_GIT_AT_BRACE_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:+-"
)


def _lex(cmd: str) -> list[Word | _Op | _Redir]:
    tokens: list[Word | _Op | _Redir] = []
    word = _WordBuilder()
    i, n = 0, len(cmd)

    def flush() -> None:
        taken = word.take()
        if taken is not None:
            tokens.append(taken)

    while i < n:
        c = cmd[i]
        if c in _BLANK:
            flush()
            i += 1
        elif c == "'":
            end = cmd.find("'", i + 1)
            if end < 0:
                raise _Refuse("unbalanced single quote")
            word.add(cmd[i + 1 : end], quoted=True)
            i = end + 1
        elif c == '"':
            i = _lex_double_quoted(cmd, i + 1, word)
        elif c == "\\":
            if i + 1 >= n:
                raise _Refuse("trailing backslash")
            word.add(cmd[i + 1], quoted=True)
            i += 2
        elif c in "$`()}":
            raise _Refuse(f"unquoted {c!r}")
        elif c == "{":
            i = _lex_git_at_brace(cmd, i, word)
        elif c == "#" and not word.started:
            raise _Refuse("comment")
        elif c in _GLOB_CHARS:
            if not word.started:
                word.lead_glob = True
            word.glob = True
            word.add(c, quoted=False)
            i += 1
        elif c in _OPERATOR_CHARS:
            i = _lex_operator(cmd, i, word, tokens, flush)
        else:
            word.add(c, quoted=False)
            i += 1
    flush()
    return tokens


def _lex_double_quoted(cmd: str, i: int, word: _WordBuilder) -> int:
    """Consume up to the closing ``"``; return the index after it."""
    parts: list[str] = []
    n = len(cmd)
    while i < n:
        c = cmd[i]
        if c == '"':
            word.add("".join(parts), quoted=True)
            return i + 1
        if c == "\\" and i + 1 < n and cmd[i + 1] in '$`"\\':
            parts.append(cmd[i + 1])
            i += 2
            continue
        if c in "$`":
            raise _Refuse(f"{c!r} inside double quotes")
        parts.append(c)
        i += 1
    raise _Refuse("unbalanced double quote")


def _lex_git_at_brace(cmd: str, i: int, word: _WordBuilder) -> int:
    """Accept git's ``@{u}`` / ``HEAD@{1}`` (no brace expansion there); refuse any other ``{``."""
    end = cmd.find("}", i + 1)
    inner = cmd[i + 1 : end] if end > i else ""
    if (
        end < 0
        or not word.chars
        or not word.chars[-1].endswith("@")
        or not set(inner) <= _GIT_AT_BRACE_CHARS
        or ".." in inner
    ):
        raise _Refuse("brace group or brace expansion")
    word.add(cmd[i : end + 1], quoted=False)
    return end + 1


def _lex_operator(
    cmd: str,
    i: int,
    word: _WordBuilder,
    tokens: list[Word | _Op | _Redir],
    flush: Callable[[], None],
) -> int:
    """Lex one of ``| & ; < >`` at ``cmd[i]``; return the index after the operator."""
    c, rest = cmd[i], cmd[i : i + 3]
    if c in "<>":
        fd = ""
        if word.started and not word.quoted and "".join(word.chars).isdigit():
            fd = "".join(word.chars)  # `2>`: the digits are the fd, not a word
            word.take()
        else:
            flush()
        for op in ("<<<", "<<", "<>", "<&", "<(", ">>", ">|", ">&", ">(", "<", ">"):
            if rest.startswith(op):
                if op in ("<<<", "<<", "<>", "<(", ">("):
                    raise _Refuse(f"{op!r} is a heredoc, read-write or process substitution")
                tokens.append(_Redir(fd + op))
                return i + len(op)
    flush()
    if c == "&":
        for op in ("&>>", "&>"):
            if rest.startswith(op):
                tokens.append(_Redir(op))
                return i + len(op)
        if rest.startswith("&&"):
            tokens.append(_Op("&&"))
            return i + 2
        raise _Refuse("background job '&'")
    if c == "|":
        if rest.startswith("||"):
            tokens.append(_Op("||"))
            return i + 2
        tokens.append(_Op("|"))
        return i + (2 if rest.startswith("|&") else 1)
    # c == ";"
    if rest.startswith((";;", ";&")):
        raise _Refuse("case terminator")
    tokens.append(_Op(";"))
    return i + 1


def _safe_redirection(op: str, target: Word) -> bool:
    """Only ``/dev/null`` and fd duplication (``2>&1``, ``>&2``) are harmless."""
    if target.glob:
        return False
    bare = op.lstrip("0123456789")
    if bare in (">&", "<&") and target.text.isdigit():
        return True
    return bare in (">", ">>", ">|", "&>", "&>>", "<", ">&") and target.text == "/dev/null"


def _segments(tokens: Sequence[Word | _Op | _Redir]) -> list[list[Word]]:
    """Drop safe redirections and split on control operators; refuse empty segments."""
    segments: list[list[Word]] = [[]]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, _Op):
            segments.append([])
        elif isinstance(token, _Redir):
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            if not isinstance(target, Word) or not _safe_redirection(token.op, target):
                raise _Refuse("redirection to a file")
            i += 1
        else:
            segments[-1].append(token)
        i += 1
    if any(not segment for segment in segments):
        raise _Refuse("empty segment")
    return segments


# --------------------------------------------------------------------------------------------
# Option checks shared by the rules
# --------------------------------------------------------------------------------------------


def _long_name(text: str) -> str:
    return text[2:].split("=", 1)[0]


def _long_hits(name: str, dangerous: Sequence[str]) -> bool:
    """Is ``--name`` one of ``dangerous`` or an abbreviation getopt would expand to one?"""
    if not name or name in _EXACT_OK:
        return False
    return any(d.startswith(name) for d in dangerous)


def _block_ok(args: Sequence[Word], rule: Block) -> bool:
    # `--` is not trusted as the end of options: it may be the argument of the option before
    # it (`rg -e -- --pre=sh`), so every word is scanned.
    for word in args:
        if word.lead_glob:
            return False
        text = word.text
        if text.startswith("--"):
            if _long_hits(_long_name(text), rule.long):
                return False
        elif (text.startswith("-") or (rule.plus and text.startswith("+"))) and len(text) > 1:
            if any(letter in rule.short for letter in text[1:]):
                return False
    return True


def _opts_ok(args: Sequence[Word], rule: Opts) -> bool:
    positional: list[Word] = []
    i = 0
    only_operands = False
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if only_operands or not word.may_be_option() or text == "-":
            positional.append(word)
            continue
        if word.lead_glob:
            return False
        if text == "--":
            only_operands = True
        elif text.startswith("--"):
            name, has_value = _long_name(text), "=" in text
            if name in rule.long_args:
                if not has_value:
                    i += 1  # the value is the next word
                    if i <= len(args) and args[i - 1].glob:
                        return False  # a glob value may expand to value + operands
            elif name in rule.long_optional:
                pass
            elif name not in rule.long_flags or has_value:
                return False
        else:
            for k, letter in enumerate(text[1:], start=1):
                if letter in rule.optional:
                    break  # `-I` or `-Iseconds`; never the next word
                if letter in rule.with_arg:
                    if k == len(text) - 1:
                        i += 1  # `-d VALUE`
                        if i <= len(args) and args[i - 1].glob:
                            return False
                    break  # `-dVALUE`
                if letter not in rule.flags:
                    return False
    if i > len(args):
        return False  # option missing its argument
    if rule.max_pos is not None:
        if len(positional) > rule.max_pos or any(w.glob for w in positional):
            return False
    return all(w.text.startswith(rule.pos_prefix) and not w.lead_glob for w in positional)


# --------------------------------------------------------------------------------------------
# Special verbs
# --------------------------------------------------------------------------------------------


def _git_options_ok(args: Sequence[Word], sub: str) -> bool:
    dangerous = _GIT_DANGEROUS_LONG + _GIT_EXTRA_LONG.get(sub, ())
    short = _GIT_EXTRA_SHORT.get(sub, "")
    for word in args:  # every word, `--` included: it may be an option's value (see _block_ok)
        text = word.text
        if word.lead_glob:
            return False
        if text.startswith("--"):
            name = _long_name(text)
            if _long_hits(name, dangerous) or name.startswith(_GIT_DANGEROUS_STEMS):
                return False
        elif text.startswith("-") and any(letter in short for letter in text[1:]):
            return False
    return True


def _flags_before_operands(args: Sequence[Word]) -> list[str]:
    return [w.text for w in args if w.text.startswith("-")]


def _git_branch_or_tag(args: Sequence[Word], sub: str) -> bool:
    """``git branch``/``git tag`` only in list mode: any operand otherwise creates a ref."""
    if sub == "branch":
        short, list_short = "arvli", ""
        flags = {"--all", "--remotes", "--verbose", "--list", "--show-current", "--ignore-case",
                 "--no-color", "--no-column", "--no-abbrev", "--omit-empty", "--quiet"}  # fmt: skip
    else:
        short, list_short = "li", "ln"
        flags = {"--list", "--ignore-case", "--no-color", "--no-column", "--omit-empty"}
    listing = {"--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
    with_value = {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
                  "--sort", "--format"}  # fmt: skip
    attached_only = ("--color=", "--column=", "--abbrev=")
    list_mode = False
    has_operand = False
    for word in args:
        text = word.text
        if word.lead_glob and text != "--":
            return False
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            if text.startswith(attached_only) or text in flags or name in with_value:
                list_mode = list_mode or name in listing
                continue
            return False
        if text.startswith("-") and len(text) > 1:
            body = text[1:]
            if sub == "tag" and "n" in body:
                head, _, tail = body.partition("n")
                if not tail.isdigit() and tail:
                    return False
                body = head + "n"
            if not set(body) <= set(short + list_short):
                return False
            list_mode = list_mode or bool(set(body) & set(list_short + "l"))
            continue
        has_operand = True
    return list_mode or not has_operand


def _git_listing(sub: str, args: Sequence[Word]) -> bool:
    if sub in ("branch", "tag"):
        return _git_branch_or_tag(args, sub)
    operands = [w.text for w in args if not w.text.startswith("-")]
    if sub == "stash":
        return bool(operands) and operands[0] in ("list", "show") and args[0].text == operands[0]
    if sub == "worktree":
        return bool(args) and args[0].text == "list"
    if sub == "reflog":
        return not operands or (args[0].text in ("show", "list", "exists"))
    if sub == "remote":
        if not operands:
            return set(_flags_before_operands(args)) <= {"-v", "--verbose"}
        return args[0].text == "get-url" and set(_flags_before_operands(args)) <= {
            "--push",
            "--all",
        }
    if sub == "config":
        return _git_config(args)
    return False


_GIT_CONFIG_MODES = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
     "--list", "-l"}
)  # fmt: skip
_GIT_CONFIG_FLAGS = frozenset(
    {"--show-origin", "--show-scope", "--name-only", "--null", "-z", "--global", "--system",
     "--local", "--worktree", "--bool", "--int", "--bool-or-int", "--path", "--expiry-date",
     "--includes", "--no-includes", "--all", "--regexp", "--fixed-value"}
)  # fmt: skip
_GIT_CONFIG_ARGS = frozenset({"--file", "-f", "--blob", "--type", "--default", "--value", "--url"})


def _git_config(args: Sequence[Word]) -> bool:
    """``git config`` reads only with a get/list mode (old flags or new subcommands)."""
    new_style = bool(args) and args[0].text in ("get", "list")
    mode = new_style
    i = 1 if new_style else 0
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if word.lead_glob:
            return False
        if not text.startswith("-"):
            continue
        name = text.split("=", 1)[0]
        if name in _GIT_CONFIG_MODES:
            mode = True
        elif name in _GIT_CONFIG_ARGS:
            if "=" not in text:
                i += 1
        elif text not in _GIT_CONFIG_FLAGS:
            return False
    return mode


def _check_git(args: Sequence[Word]) -> bool:
    if [w.text for w in args] == ["--version"]:
        return True
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text not in _GIT_GLOBAL:
            return False
        i += 1
    if i == len(args):
        return False  # bare `git` (or only globals): nothing to glance at
    sub_word, rest = args[i], args[i + 1 :]
    sub = sub_word.text
    if sub_word.glob or not _git_options_ok(rest, sub):
        return False
    if sub in _GIT_READ_ONLY:
        return True
    return sub in _GIT_LISTING and _git_listing(sub, rest)


def _check_top(args: Sequence[Word]) -> bool:
    """``top`` returns only in batch mode with an iteration count (``top -b -n 1``)."""
    batch = count = False
    i = 0
    while i < len(args):
        text = args[i].text
        i += 1
        if not text.startswith("-") or args[i - 1].glob:
            return False
        for k, letter in enumerate(text[1:], start=1):
            if letter in "ndpuUow":
                value = text[k + 1 :]
                if not value:
                    if i >= len(args):
                        return False
                    value = args[i].text
                    i += 1
                count = count or (letter == "n" and value.isdigit() and int(value) > 0)
                break
            if letter not in "bcHiSs1EO":
                return False
            batch = batch or letter == "b"
    return batch and count


def _check_docker(args: Sequence[Word]) -> bool:
    if not args or args[0].glob:
        return False
    sub, rest = args[0].text, list(args[1:])
    subsub = ""
    if sub in _DOCKER_GROUPS:
        if not rest or rest[0].glob:
            return False
        subsub, rest = rest[0].text, rest[1:]
    if (sub, subsub) not in _DOCKER:
        return False
    verb = subsub or sub
    texts = [w.text for w in rest]
    if verb == "stats" and (
        "--no-stream" not in texts or any(t.startswith("--no-stream=") for t in texts)
    ):
        return False
    follow = Block(short="f", long=("follow",)) if verb == "logs" else Block()
    return _block_ok(rest, follow)


def _check_kubectl(args: Sequence[Word]) -> bool:
    if not args or args[0].glob or args[0].text not in _KUBECTL:
        return False
    sub, rest = args[0].text, args[1:]
    if not _block_ok(rest, _KUBECTL_BLOCK):
        return False
    return sub != "logs" or _block_ok(rest, Block(short="f"))


def _check_find(args: Sequence[Word]) -> bool:
    return not any(w.lead_glob or w.text in _FIND_BAD for w in args)


def _check_command(args: Sequence[Word]) -> bool:
    """``command -v/-V NAME`` only looks a name up; every other form runs it."""
    lookup = False
    for word in args:
        text = word.text
        if not text.startswith("-") or text == "--":
            break
        if word.glob or not set(text[1:]) <= set("vVp"):
            return False
        lookup = lookup or bool(set(text[1:]) & set("vV"))
    return lookup


_SED_LONG_FLAGS = "quiet silent regexp-extended separate unbuffered null-data posix debug sandbox"
_SED_OPTS = Opts(
    flags="nErsuz",
    with_arg="el",
    long_flags=tuple(_SED_LONG_FLAGS.split()),
    long_args=("expression", "line-length"),
)


def _check_sed(args: Sequence[Word]) -> bool:
    if not _opts_ok(args, _SED_OPTS):
        return False
    scripts: list[Word] = []
    operands: list[Word] = []
    i = 0
    only_operands = False
    while i < len(args):
        word = args[i]
        text = word.text
        i += 1
        if only_operands or not text.startswith("-") or text == "-":
            operands.append(word)
        elif text == "--":
            only_operands = True
        elif text in ("-e", "--expression"):
            scripts.append(args[i])
            i += 1
        elif text.startswith("--expression="):
            scripts.append(Word(text.split("=", 1)[1]))
        elif text.startswith("--line-length") or text == "-l":
            i += 0 if "=" in text else 1
        elif text.startswith("-") and not text.startswith("--"):
            body = text[1:]
            for k, letter in enumerate(body):
                if letter == "e":
                    value = body[k + 1 :]
                    if value:
                        scripts.append(Word(value))
                    else:
                        scripts.append(args[i])
                        i += 1
                    break
                if letter == "l":
                    i += 0 if body[k + 1 :] else 1
                    break
    if not scripts:
        if not operands:
            return False
        scripts.append(operands[0])
    return all(not s.glob and _sed_script_ok(s.text) for s in scripts)


def _sed_skip_regex(script: str, i: int, delim: str) -> int:
    """Index just after the unescaped ``delim`` closing a regex/replacement starting at ``i``."""
    while i < len(script):
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c == delim:
            return i + 1
        i += 1
    raise _Refuse("unterminated sed regex")


def _sed_address(script: str, i: int) -> int:
    """Skip one address (``12``, ``$``, ``/re/I``, ``\\cREc``, ``first~step``) if present."""
    n = len(script)
    if i < n and script[i].isdigit():
        while i < n and (script[i].isdigit() or script[i] == "~"):
            i += 1
    elif i < n and script[i] == "$":
        i += 1
    elif i < n and script[i] in "/\\":
        if script[i] == "\\":
            if i + 1 >= n or script[i + 1] in "\\\n":
                raise _Refuse("bad sed address delimiter")
            delim, i = script[i + 1], i + 2
        else:
            delim, i = "/", i + 1
        i = _sed_skip_regex(script, i, delim)
        while i < n and script[i] in "IM":
            i += 1
    return i


def _sed_script_ok(script: str) -> bool:
    """Accept only sed programs built from read-only commands; anything else is refused."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t;}":
            i += 1
            continue
        start = i
        i = _sed_address(script, i)
        if i > start and i < n and script[i] == ",":
            i += 1
            if i < n and script[i] in "+~":
                i += 1
            i = _sed_address(script, i)
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            return False
        command = script[i]
        i += 1
        if command == "{":
            continue  # a block opens; its first command may follow directly
        if command in _SED_PLAIN:
            pass
        elif command in "qQlL":
            while i < n and script[i].isdigit():
                i += 1
        elif command in "btT:":
            while i < n and script[i] in " \t":
                i += 1
            while i < n and (script[i].isalnum() or script[i] == "_"):
                i += 1
        elif command in "sy":
            if i >= n or script[i] in "\\\n":
                return False
            delim = script[i]
            i = _sed_skip_regex(script, i + 1, delim)
            i = _sed_skip_regex(script, i, delim)
            if command == "s":
                while i < n and (script[i] in "gpiImM" or script[i].isdigit()):
                    i += 1
        else:
            return False  # w W r R e a i c v # and anything unknown
        if i < n and script[i] not in " \t;}":
            return False
    return True


_AWK_OPTS = Opts(with_arg="Fv", long_args=("field-separator", "assign"))


def _check_awk(args: Sequence[Word]) -> bool:
    """gawk/mawk: ``-F``/``-v`` only; the program must not run, pipe, load or write."""
    i = 0
    while i < len(args) and args[i].text.startswith("-") and args[i].text != "-":
        text = args[i].text
        i += 1
        if text == "--":
            break
        if text in ("-F", "-v", "--field-separator", "--assign"):
            i += 1
    if not _opts_ok(args[:i], _AWK_OPTS) or i >= len(args):
        return False
    program = args[i]
    if program.glob:
        return False
    text = program.text
    if any(word in text for word in ("system", "getline", "@")):
        return False
    if "|" in text.replace("||", ""):
        return False
    # An output redirection is a `>` after `print`/`printf` in the same statement, so a `>`
    # that comes before the first `print` anywhere (`$3 > 100 {print $1}`) is a comparison.
    first_print = text.find("print")
    return first_print < 0 or ">" not in text[first_print:]


_SPECIAL: dict[str, Callable[[Sequence[Word]], bool]] = {
    "git": _check_git,
    "top": _check_top,
    "docker": _check_docker,
    "kubectl": _check_kubectl,
    "find": _check_find,
    "command": _check_command,
    "sed": _check_sed,
    "awk": _check_awk,
}

# --------------------------------------------------------------------------------------------
# The predicate
# --------------------------------------------------------------------------------------------


def _segment_ok(words: Sequence[Word]) -> bool:
    verb, args = words[0], words[1:]
    if verb.glob or "/" in verb.text:
        return False
    rule = _VERBS.get(verb.text)
    if rule is None or verb.text in NEVER:
        return False
    if isinstance(rule, Free):
        return True
    if isinstance(rule, Block):
        return _block_ok(args, rule)
    if isinstance(rule, Opts):
        return _opts_ok(args, rule)
    return _SPECIAL[rule.name](args)


def _has_forbidden_control(cmd: str) -> bool:
    return any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in cmd)


def decide(cmd: str) -> bool:
    """The decision itself: ``True`` or ``False`` by the rules, and nothing else.

    Every refusal is a decision: the checks return ``False`` or raise :class:`_Refuse`,
    which ends here as ``False``. Any other exception is a bug in the checker and
    propagates, so tests see it (:func:`is_ephemeral` is what callers use: it fails
    closed on such a bug).
    """
    if not isinstance(cmd, str):
        return False
    stripped = cmd.strip(" \t\n")
    if not stripped or _has_forbidden_control(stripped):
        return False
    try:
        return all(_segment_ok(segment) for segment in _segments(_lex(stripped)))
    except _Refuse:
        return False


def is_ephemeral(cmd: str) -> bool:
    """True iff ``cmd`` only looks at state (safe to run unsupervised, stale once it ran).

    See the module docstring for the exact rules; every doubt is ``False``. This is
    :func:`decide` failing closed: a crash inside the checker (a bug, never a rule) is a
    ``False`` too, because a wrong ``True`` here is a security hole.
    """
    try:
        return decide(cmd)
    except Exception:  # fail closed: a checker bug must never become a True
        return False
