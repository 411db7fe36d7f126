"""``find`` as the session really runs it: bfs 4.1.1, falling back to GNU find.

Inside the CLI's Bash tool ``find`` is a shell function running the bundled bfs
(``bfs -S dfs -regextype findutils-default "$@"``), and plain GNU find where the function is
missing. bfs is find-compatible with extensions, one of which is ``-rm``, a synonym of
``-delete``: a deny-list written for GNU find let ``find . -name X -rm`` delete files.

So the expression is walked primary by primary against an allow-list whose entries are safe in
*both* implementations (or exist in one and are a usage error in the other, which is safe).
Every primary that runs a command (``-exec -execdir -ok -okdir``), deletes (``-delete -rm``),
writes a file (``-fprint -fprint0 -fprintf -fls``) or reads names from a file
(``-files0-from``) is absent, and so is anything unknown. Each primary consumes exactly the
arguments it takes in both parsers, so ``-name -delete`` is a pattern, not an action.

find only prints names and metadata, so its paths are not checked as secrets: ``find ~/.ssh``
lists key *names*, which the model may see.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .lexer import Refuse, Word

__all__ = ["check_find"]

#: primaries without an argument (bfs-only ones are usage errors in GNU find)
NO_ARG = frozenset(
    "-depth -d -daystart -follow -mount -noleaf -xdev -ignore_readdir_race "
    "-noignore_readdir_race -warn -nowarn -empty -executable -readable -writable -false -true "
    "-nogroup -nouser -print -print0 -ls -prune -quit -printx -hidden -nohidden -sparse "
    "-xattr -unique -noerror -color -nocolor -help -version -H -L -P -E -X -s -x".split()
)
#: primaries taking exactly one argument
ONE_ARG = frozenset(
    "-maxdepth -mindepth -amin -atime -cmin -ctime -mmin -mtime -Bmin -Btime -anewer -cnewer "
    "-newer -Bnewer -mnewer -asince -Bsince -csince -msince -since -used -fstype -gid -uid "
    "-group -user -ilname -iname -ipath -iregex -iwholename -lname -name -path -regex "
    "-wholename -inum -links -perm -samefile -size -type -xtype -regextype -xattrname -printf "
    "-limit -context -D".split()
)
OPERATORS = frozenset({"(", ")", "!", ",", "-not", "-a", "-and", "-o", "-or"})
_NEWER_XY = re.compile(r"^-newer[aBcm][aBcmt]$")
_OPTIMIZE = re.compile(r"^-(O\d|j\d+)$")
_DEBUG = frozenset("exec opt rates search stat tree all help cost time".split())

#: why each refused primary is refused (others: "not an allowed primary")
REFUSED: dict[str, str] = {
    "-exec": "runs a command",
    "-execdir": "runs a command",
    "-ok": "runs a command",
    "-okdir": "runs a command",
    "-delete": "deletes files",
    "-rm": "deletes files",
    "-fprint": "writes a file",
    "-fprint0": "writes a file",
    "-fprintf": "writes a file",
    "-fls": "writes a file",
    "-files0-from": "reads paths from a file",
    "-status": "draws a status bar",
    "-exit": "is bfs-only",
}


def _path_glob_ok(word: Word) -> bool:
    """A path glob like ``*.py`` can only expand to names no primary has: ``.`` is in none."""
    suffix = word.literal_suffix()
    return any(not (c.isalnum() or c in "_-") for c in suffix)


def check_find(verb: str, args: Sequence[Word]) -> None:
    """Walk bfs/GNU find's arguments: flags, paths, then the expression."""
    i = 0
    while i < len(args):
        word, i = args[i], i + 1
        text = word.text
        if word.glob and text.startswith("-"):
            raise Refuse("find: a glob could expand to any primary (quote it)")
        if text in OPERATORS or text in NO_ARG or _OPTIMIZE.match(text):
            continue
        if text in ONE_ARG or _NEWER_XY.match(text):
            if i >= len(args):
                raise Refuse(f"find {text} is missing its argument")
            value = args[i]
            if value.glob:
                raise Refuse(f"find {text}: quote the pattern (bash would expand it first)")
            if text == "-D" and not set(value.text.split(",")) <= _DEBUG:
                raise Refuse("find -D takes only debug flag names")
            i += 1
            continue
        if text.startswith("-") and text != "-":
            why = REFUSED.get(text, "is not an allowed primary")
            raise Refuse(f"find {text[:30]} {why}")
        if word.lead_glob and not _path_glob_ok(word):
            raise Refuse("find: a glob starting with a wildcard could expand to a primary")
