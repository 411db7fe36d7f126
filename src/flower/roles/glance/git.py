"""git, read-only: an allow-list of subcommands, each with an allow-list of options.

git is the most common glance and the one with the most ways to run code: ``-c`` and
``--config-env`` set any config (``core.pager``, ``alias.x=!cmd``), ``-C``/``--git-dir``/
``--work-tree``/``--exec-path`` point git at a repository or helpers the model chose,
``--output`` writes a file, ``--ext-diff``/``--textconv`` run configured programs,
``git grep -O`` opens a pager, ``--show-signature`` and the ``%G?`` format run gpg, any
``--help`` starts ``man``, and ``fetch``/``ls-remote``/``remote show`` reach the network.

So: only the global options in :data:`.gitopts.GLOBAL`; only the subcommands in
:data:`.gitopts.SUBCOMMANDS` (each with its option table) plus the listing forms of
``branch``, ``tag``, ``stash``, ``remote``, ``config``, ``reflog`` and ``worktree``. An alias
never shadows a builtin, so a known subcommand name is the builtin.

The repository's own configuration is trusted: ``git status`` runs ``core.fsmonitor`` and
``git diff`` runs ``diff.external`` whatever the classifier says, so judging them would only
pretend. ``git config --list`` is refused: it prints ``http.*.extraheader`` tokens and
credential settings; ``git config --get`` passes for keys that do not name a secret.
Operands (revisions, paths, ``rev:path``) pass the sensitive-path check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .gitopts import BRANCH, CONFIG, GLOBAL, REFLOG, STASH_SHOW, SUBCOMMANDS, TAG
from .lexer import PWD_MARK, Refuse, Word
from .options import Parsed, Spec, check_file_values, parse, spec
from .paths import content_reason, recursive_reason

__all__ = ["check_git"]

#: subcommands refused with a specific reason (others: "is not read-only")
WHY: dict[str, str] = {
    "fetch": "reaches the network",
    "pull": "reaches the network and merges",
    "push": "reaches the network and changes the remote",
    "clone": "reaches the network and writes",
    "ls-remote": "reaches the network",
    "archive": "writes an archive (and --remote reaches the network)",
    "help": "starts man or a browser",
    "submodule": "may reach the network",
    "bisect": "moves HEAD",
}
_SECRET_KEY = re.compile(r"(?i)extraheader|credential|password|passwd|token|secret|cookie|auth")
_SIGNATURE_FORMAT = re.compile(r"%G|%\(signature", re.IGNORECASE)
_FORMAT_KEYS = ("--format", "--pretty")


def _check_values(sub: str, parsed: Parsed, rules: Spec) -> None:
    check_file_values(f"git {sub}", parsed, rules.files)
    for key, value in parsed.options:
        if value is None:
            continue
        if key in _FORMAT_KEYS and _SIGNATURE_FORMAT.search(value):
            raise Refuse(f"git {sub}: signature placeholders in {key} run gpg")
        if key == "-L":
            reason = content_reason(Word(value.rsplit(":", 1)[-1]))
            if reason is not None:
                raise Refuse(f"git {sub} -L: {reason}")


_MAGIC = re.compile(r"^(\([^)]*\)|[/!^]+)")


def _path_candidates(text: str) -> list[str]:
    """Every path an operand may name: itself, and what follows each ``:`` (``HEAD:x``,
    ``:0:x``, ``:(top).env``, ``:!x``), pathspec magic removed."""
    if text.count(":") > 4:
        raise Refuse("git: an operand with more than four ':' is refused")
    candidates = [text]
    for k, char in enumerate(text):
        if char == ":":
            tail = text[k + 1 :]
            candidates.append(_MAGIC.sub("", tail) or tail)
    return candidates


def _workspace_root(text: str) -> bool:
    return text in (".", "./") or text.rstrip("/") == PWD_MARK


def _check_no_index(sub: str, parsed: Parsed) -> None:
    """``--no-index`` reads files git does not track, gitignored ones included."""
    if sub == "grep" and not parsed.has("--exclude-standard"):
        raise Refuse(
            "git grep --no-index reads gitignored files such as .env: add --exclude-standard"
        )
    for word in parsed.operands:
        reason = recursive_reason(word)
        if reason is None and _workspace_root(word.text):
            reason = "the working directory holds .env files"
        if reason is not None:
            raise Refuse(f"git {sub} --no-index: {reason}")


def _check_operands(sub: str, parsed: Parsed) -> None:
    """Revisions, paths and ``rev:path`` operands, judged as *globs* whatever their quoting:
    git expands pathspecs itself (``git grep KEY -- '.e*'`` matches ``.env``)."""
    if parsed.has("--no-index"):
        _check_no_index(sub, parsed)
    for index, word in enumerate(parsed.operands):
        before_dashdash = parsed.dashdash is None or index < parsed.dashdash
        if word.lead_glob and before_dashdash:
            raise Refuse(f"git {sub}: a glob starting with a wildcard could expand to an option")
        for part in _path_candidates(word.text):
            reason = content_reason(Word(part, part))
            if reason is not None:
                raise Refuse(f"git {sub}: {reason}")


def _parse(sub: str, args: Sequence[Word], rules: Spec, *, paths: bool = True) -> Parsed:
    """Parse, check option values, and (unless the operands are ref patterns or config keys,
    ``paths=False``) judge the operands as paths."""
    parsed = parse(f"git {sub}", args, rules)
    _check_values(sub, parsed, rules)
    if paths:
        _check_operands(sub, parsed)
    elif any(w.lead_glob for w in parsed.operands):
        raise Refuse(f"git {sub}: a glob starting with a wildcard could expand to an option")
    return parsed


_BRANCH_LIST = ("-l", "--list", "-v", "--verbose", "--contains", "--no-contains", "--merged",
                "--no-merged", "--points-at")  # fmt: skip
_TAG_LIST = ("-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged",
             "--points-at")  # fmt: skip


def _branch_or_tag(sub: str, args: Sequence[Word]) -> None:
    """``git branch``/``git tag`` in list mode only: an operand otherwise creates a ref."""
    rules, listing = (BRANCH, _BRANCH_LIST) if sub == "branch" else (TAG, _TAG_LIST)
    parsed = _parse(sub, args, rules, paths=False)
    if parsed.operands and not parsed.has(*listing):
        raise Refuse(f"git {sub} NAME creates a {sub}: add --list to list matching ones")


def _stash(args: Sequence[Word]) -> None:
    if not args or args[0].text not in ("list", "show"):
        raise Refuse("git stash changes the work tree: only stash list and stash show read")
    rules = REFLOG if args[0].text == "list" else STASH_SHOW
    _parse("stash", args[1:], rules)


_REMOTE = spec("v --verbose")
_GET_URL = spec(" --push --all")


def _remote(args: Sequence[Word]) -> None:
    if args and args[0].text == "get-url":
        parsed = _parse("remote get-url", args[1:], _GET_URL, paths=False)
        if len(parsed.operands) != 1:
            raise Refuse("git remote get-url takes one remote name")
        return
    parsed = _parse("remote", args, _REMOTE, paths=False)
    if parsed.operands:
        why = "reaches the network" if parsed.operands[0].text == "show" else "changes remotes"
        raise Refuse(f"git remote {parsed.operands[0].text[:20]} {why}")


_CONFIG_GET = ("--get", "--get-all", "--get-color", "--get-colorbool")


def _config(args: Sequence[Word]) -> None:
    """``git config --get KEY`` / ``git config get KEY`` for keys that do not name a secret."""
    new_style = bool(args) and args[0].text == "get"
    if args and args[0].text in ("list", "--list", "-l"):
        raise Refuse("git config --list prints credentials (http.extraheader, tokens in URLs)")
    parsed = _parse("config", args[1:] if new_style else args, CONFIG, paths=False)
    legacy_get = len(parsed.operands) == 1  # `git config KEY` reads; `KEY VALUE` writes
    if not (new_style or legacy_get or parsed.has(*_CONFIG_GET)):
        raise Refuse("git config KEY VALUE changes the configuration")
    if not parsed.operands:
        raise Refuse("git config --get needs a key")
    key = parsed.operands[0].text
    if _SECRET_KEY.search(key):
        raise Refuse("git config: that key may hold a credential")


def _reflog(args: Sequence[Word]) -> None:
    if args and args[0].text in ("show", "list", "exists"):
        args = args[1:]
    elif args and not args[0].text.startswith("-") and args[0].text in ("expire", "delete"):
        raise Refuse(f"git reflog {args[0].text} rewrites the reflog")
    _parse("reflog", args, REFLOG)


_WORKTREE = spec("vz --porcelain --verbose --expire=")


def _worktree(args: Sequence[Word]) -> None:
    if not args or args[0].text != "list":
        raise Refuse("git worktree changes work trees: only worktree list reads")
    _parse("worktree list", args[1:], _WORKTREE)


_LISTING: dict[str, Callable[[Sequence[Word]], None]] = {
    "branch": lambda args: _branch_or_tag("branch", args),
    "tag": lambda args: _branch_or_tag("tag", args),
    "stash": _stash,
    "remote": _remote,
    "config": _config,
    "reflog": _reflog,
    "worktree": _worktree,
}


def check_git(verb: str, args: Sequence[Word]) -> None:
    """git [read-only global options] SUBCOMMAND [allowed options] [operands]."""
    if [w.text for w in args] == ["--version"]:
        return
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text not in GLOBAL:
            name = args[i].text.split("=", 1)[0][:30]
            raise Refuse(f"git {name} is refused (it can point git at other config or code)")
        i += 1
    if i == len(args):
        raise Refuse("git without a subcommand")
    sub_word, rest = args[i], args[i + 1 :]
    sub = sub_word.text
    if sub_word.glob:
        raise Refuse("git: a glob as the subcommand is refused")
    if sub in SUBCOMMANDS:
        _parse(sub, rest, SUBCOMMANDS[sub])
    elif sub in _LISTING:
        _LISTING[sub](rest)
    else:
        raise Refuse(f"git {sub[:30]} {WHY.get(sub, 'is not read-only')}")
