"""grep as the session runs it (GNU grep 3.x, or ugrep 7.8.4), egrep/fgrep, and ripgrep 14.

In a session that has the Grep tool (every coordinator's: its workers have it) ``grep`` is
plain GNU grep: the CLI defines the function below only in a session without Grep. So the
checks hold for GNU grep first, and a recursive grep is refused outright.

Without the Grep tool, ``grep`` in the CLI's Bash tool is a shell function running the
bundled ugrep as
``ugrep -G --ignore-files --hidden -I --encoding=UTF-8 --exclude-dir=.git ... "$@"``, except
when any argument matches ``-*-filter* | -*-pager* | -*-view* | -*-format-open* | -*-config*
| ---* | -@* | -*-save-config* | -[Zz]* | -[!-]*[Zz]* | --null | --null-data``: then it runs
``command grep`` (GNU grep). ugrep has dangerous options GNU grep lacks: ``--filter`` runs
commands, ``-Q``/``--query`` is an interactive TUI that can spawn an editor, ``--save-config``
writes a file, ``--pager``/``--view`` run programs, ``--from`` reads the list of files to
search from a file. GNU grep has none of that but is still what runs on a fallback, and where
the function is absent (``egrep``/``fgrep`` are /usr/bin scripts calling GNU grep directly).

The allow-list below therefore holds only options that are read-only in *both* ugrep and GNU
grep with the same arity, plus options that exist in one and are a usage error in the other
(ugrep's ``-t``, GNU's meaning of ``-Z``/``-z``, which the fallback pattern routes to GNU grep
anyway). Long options are exact: GNU grep would expand abbreviations, ugrep refuses them.

ripgrep 14.1.1 (also a function running the bundled binary) runs programs with ``--pre``,
``--pre-glob`` (with ``--pre``), ``--hostname-bin`` and ``-z/--search-zip`` (it spawns
decompressors); none is listed. ``-r`` in rg is ``--replace``, not recursion.

A lead glob (``grep foo *.py``) is refused for all three: a file named ``--from=list.py`` would
make ugrep search the files listed in ``list.py``, secrets included. ``./*.py`` is the same
search. Files searched recursively are not checked one by one (see :mod:`.paths`).
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from .lexer import Refuse, Word
from .options import check_file_values, parse, spec
from .paths import content_reason, recursive_reason

__all__ = ["GREP", "RG", "check_grep", "check_rg"]

#: grep options read-only in ugrep and GNU grep alike (see the module docstring)
GREP = spec(
    "EFGPHhIiLlnoqsvwxcbarRTUVZzjkA:B:C:e:f:m:d:t:g:O:"
    " --extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp= --file="
    " --ignore-case --no-ignore-case --word-regexp --line-regexp --no-messages --invert-match"
    " --version --help --max-count= --byte-offset --line-number --line-buffered"
    " --with-filename --no-filename --label= --only-matching --quiet --silent --binary-files="
    " --text --directories= --recursive --dereference-recursive --include= --exclude="
    " --exclude-from= --exclude-dir= --files-without-match --files-with-matches --count"
    " --initial-tab --before-context= --after-context= --context= --group-separator=?"
    " --no-group-separator --color=? --colour=? --null --null-data --binary"
    # ugrep only (a usage error for GNU grep, and no prefix of a GNU option):
    " --smart-case --column-number --heading --sort=? --stats --tree --json --csv --xml"
    " --depth= --include-dir= --max-files= --file-type= --glob= --iglob= --file-extension=",
    numeric=True,
    files="-f --file --exclude-from",
)
_DIRECTORIES = frozenset({"read", "skip", "recurse", "dereference-recurse"})
_BINARY_FILES = frozenset({"binary", "text", "without-match", "hex", "with-hex"})
#: options that make the search recursive (ugrep: ``-NUM`` is a depth, and globs with a ``/``
#: or ``--depth`` turn on ``-r`` by themselves)
_RECURSIVE = frozenset(
    "-r -R --recursive --dereference-recursive -NUM --depth -g --glob --iglob --include"
    " --include-dir -t --file-type -O --file-extension".split()
)


def _grep_values(verb: str, options: list[tuple[str, str | None]]) -> bool:
    """Check enumerated values; return whether the search is recursive."""
    recursive = False
    for key, value in options:
        if key in ("-d", "--directories"):
            if value not in _DIRECTORIES:
                raise Refuse(f"{verb} -d takes read, skip or recurse")
            recursive = recursive or value.endswith("recurse")
        elif key == "--binary-files" and value not in _BINARY_FILES:
            raise Refuse(f"{verb} --binary-files takes binary, text or without-match")
        recursive = recursive or key in _RECURSIVE
    return recursive


def _no_lead_glob(verb: str, operands: Sequence[Word]) -> None:
    """The pattern included: an unquoted ``*`` there expands like any other word."""
    if any(word.lead_glob for word in operands):
        raise Refuse(
            f"{verb}: a glob starting with a wildcard could expand to an option"
            " (a file named like --pre=sh or --from=list); write ./*.py"
        )


def _check_paths(verb: str, paths: Sequence[Word], recursive: bool) -> None:
    for word in paths:
        reason = recursive_reason(word) if recursive else content_reason(word)
        if reason is not None:
            raise Refuse(f"{verb}: {reason}")


#: The CLI's grep function hands the command to GNU grep when any argument matches one of these
#: bash case patterns (copied from the CLI's function).
FALLBACK = (
    "-*-filter*", "-*-pager*", "-*-view*", "-*-format-open*", "-*-config*", "---*", "-@*",
    "-*-save-config*", "-[Zz]*", "-[!-]*[Zz]*", "--null", "--null-data",
)  # fmt: skip


def runs_gnu_grep(verb: str, args: Sequence[Word]) -> bool:
    """Does this grep command run GNU grep (egrep/fgrep always do) rather than ugrep?"""
    if verb != "grep":
        return True
    return any(fnmatchcase(w.text, pattern) for w in args for pattern in FALLBACK)


def check_grep(verb: str, args: Sequence[Word]) -> None:
    """grep/egrep/fgrep: the ugrep ∩ GNU grep allow-list; pattern, then files.

    A recursive search is refused: in flower's sessions ``grep`` is GNU grep (measured, CLI
    2.1.332: the CLI defines its ugrep function only in a session without the Grep tool, and
    a coordinator's session has its workers' Grep), which, unlike the CLI's ugrep
    (``--ignore-files``), ignores .gitignore and reads the workspace's ``.env``.
    """
    parsed = parse(verb, args, GREP)
    check_file_values(verb, parsed, GREP.files)
    recursive = _grep_values(verb, parsed.options)
    if recursive:
        raise Refuse(
            f"{verb} -r runs GNU grep here, which reads gitignored .env files: use"
            " git grep or rg (both skip what git ignores), or name the files"
        )
    _no_lead_glob(verb, parsed.operands)
    operands = parsed.operands
    if not parsed.has("-e", "--regexp", "-f", "--file"):
        operands = operands[1:]  # the first operand is the pattern
    values = parsed.separate_values(except_keys=("-e", "--regexp"))
    _check_paths(verb, [*operands, *values], recursive)


#: ripgrep 14 options without a program to run
RG = spec(
    "sFivxUPSaL.uqnNoclHIpwb0hVe:f:E:m:j:g:d:t:T:A:B:C:M:r:"
    " --case-sensitive --crlf --fixed-strings --ignore-case --invert-match --line-regexp"
    " --mmap --multiline --multiline-dotall --no-unicode --null-data --pcre2 --smart-case"
    " --stop-on-nonmatch --text --word-regexp --binary --follow --glob-case-insensitive"
    " --hidden --ignore-file-case-insensitive --no-follow-any --no-ignore --no-ignore-dot"
    " --no-ignore-exclude --no-ignore-files --no-ignore-global --no-ignore-parent"
    " --no-ignore-vcs --no-require-git --one-file-system --unrestricted --block-buffered"
    " --byte-offset --column --heading --no-heading --include-zero --line-buffered"
    " --line-number --no-line-number --max-columns-preview --null --only-matching --passthru"
    " --pretty --quiet --trim --vimgrep --with-filename --no-filename --count --count-matches"
    " --files-with-matches --files-without-match --json --debug --no-ignore-messages"
    " --no-messages --stats --trace --files --no-config --pcre2-version --type-list --help"
    " --version --no-hidden --no-follow --no-text --no-binary --no-column --no-fixed-strings"
    " --no-invert-match --no-multiline --no-pcre2 --no-search-zip --no-pre --no-json"
    " --no-stats --no-trim --no-byte-offset --no-mmap --no-crlf"
    " --regexp= --file= --encoding= --engine= --max-count= --dfa-size-limit="
    " --regex-size-limit= --threads= --glob= --iglob= --ignore-file= --max-depth="
    " --max-filesize= --type= --type-not= --type-add= --type-clear= --after-context="
    " --before-context= --context= --color= --colors= --context-separator="
    " --field-context-separator= --field-match-separator= --hyperlink-format="
    " --max-columns= --path-separator= --replace= --sort= --sortr=",
    abbrev=False,
    files="-f --file --ignore-file",
)
_RG_NO_PATTERN = ("-e", "--regexp", "-f", "--file", "--files", "--type-list", "--help", "-h",
                  "--version", "-V", "--pcre2-version")  # fmt: skip


def check_rg(verb: str, args: Sequence[Word]) -> None:
    """ripgrep: the allow-list above; every path is a recursive root.

    rg skips hidden files (``.env`` among them) and gitignored ones by default. ``--hidden``
    alone still skips a gitignored ``.env`` (as the CLI's ugrep does), but together with
    ``--no-ignore*`` or ``-u``, and as ``-uu``, it would search it: refused.
    """
    parsed = parse(verb, args, RG)
    check_file_values(verb, parsed, RG.files)
    unrestricted = sum(1 for key, _ in parsed.options if key in ("-u", "--unrestricted"))
    hidden = parsed.has("--hidden", "-.") or unrestricted >= 2
    ignoring = unrestricted >= 1 or any(key.startswith("--no-ignore") for key, _ in parsed.options)
    if hidden and ignoring:
        raise Refuse("rg --hidden with -u/--no-ignore (or -uu) searches gitignored .env files")
    _no_lead_glob(verb, parsed.operands)
    operands = parsed.operands
    if not parsed.has(*_RG_NO_PATTERN):
        operands = operands[1:]
    values = parsed.separate_values(except_keys=("-e", "--regexp"))
    _check_paths(verb, [*operands, *values], recursive=True)
