"""Allow-lists for the simple tools: file viewers, text filters, system information.

Each :class:`Tool` says which options are read-only (a :class:`~.options.Spec`), whether its
operands are *read as content* (then they pass the sensitive-path checks of :mod:`.paths`), how
many operands it takes (``uniq IN OUT`` writes ``OUT``), and its glob policy.

The glob policy matters because bash expands a glob before the binary sees it, and an attacker
who can create files (a worker, a cloned repository) can create one named like an option. A
glob whose first character is a wildcard (``*``, ``*.log``) may therefore expand to *any* option
of the real binary, not only to the allowed ones, so it is accepted only when that is harmless:

* ``ANY``: no option of the binary writes, runs a program, reaches the network or reads a file
  whose content it then prints. Argued per tool in the comments below.
* ``NONE``: some option is dangerous (``sort -o.log`` writes ``.log``); write ``./*.log``.
* a predicate on the glob's literal suffix: every expansion that starts with ``-`` makes the
  binary's parser fail before it does anything (``tail``, see :func:`tail_suffix_ok`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .lexer import PWD_MARK, Refuse, Word
from .options import Spec, check_file_values, parse, spec
from .paths import content_reason, device_reason, recursive_reason

__all__ = ["ANY", "NONE", "TOOLS", "Tool", "check_operands", "check_tool", "tail_suffix_ok"]

GlobPolicy = Callable[[str], bool]


def ANY(suffix: str) -> bool:
    """Every expansion is harmless (the binary has no dangerous option at all)."""
    return True


def NONE(suffix: str) -> bool:
    """No glob whose first character is a wildcard."""
    return False


_NOT_A_NUMBER = re.compile(r"\.[^.]*[g-oq-zG-OQ-Z]")


def tail_suffix_ok(suffix: str) -> bool:
    """GNU tail fails on every expansion of ``*SUFFIX`` that starts with ``-``.

    Every tail option with an argument takes a number (``-n -c -s --pid --lines
    --sleep-interval --max-unchanged-stats``; ``-s`` a C float, hex floats included) or
    ``--follow=name|descriptor``, and ``.`` is not an option letter. A suffix with a ``.``
    followed by a letter that no number can contain after its point (not a hex digit, not the
    ``p`` of a hex exponent), like ``.log`` or ``.txt``, therefore makes ``-f.log``,
    ``-fs1.log`` and ``--follow=x.log`` all usage errors: tail exits before following anything.
    """
    return bool(_NOT_A_NUMBER.search(suffix))


@dataclass(frozen=True)
class Tool:
    """How one simple binary may be used in a glance."""

    spec: Spec
    #: operands are read and their content printed: they pass :func:`.paths.content_reason`
    reads: bool = True
    #: most operands allowed (``uniq``'s second operand is its output file)
    max_operands: int | None = None
    #: lead-glob policy (see the module docstring)
    globs: GlobPolicy = NONE
    #: an extra per-operand check returning a refusal reason (``date +FORMAT``)
    operand: Callable[[str, Word], str | None] | None = None
    #: option keys that make the operands recursive roots (``diff -r``)
    recursive: frozenset[str] = frozenset()
    #: operands are opened and read even if their content is not printed (``wc``, ``md5sum``):
    #: a device like ``/dev/zero`` would never end
    opens: bool = False
    #: the tool has ``--files0-from=F``, whose error messages print F's content as file names
    #: (``wc -l *`` with a planted file ``--files0-from=.env`` prints ``.env``): a lead glob
    #: must then be unable to match a secret name
    files_option: bool = False


_HV = " --help --version"
#: ``Tool.recursive`` for tools that read inside directories whatever their options
ALWAYS = frozenset({"*"})


def _date_operand(verb: str, word: Word) -> str | None:
    if not word.text.startswith("+"):
        return "date MMDDhhmm sets the clock: only +FORMAT operands are allowed"
    return None


def _no_response_file(verb: str, word: Word) -> str | None:
    if word.text.startswith("@"):
        return f"{verb} reads options from @FILE"
    return None


def _diff_operand(verb: str, word: Word) -> str | None:
    """diff compares the files inside a directory: the working directory holds ``.env``."""
    if word.text in (".", "./") or word.text.rstrip("/") == PWD_MARK:
        return "diff of the working directory compares its .env files: name files or subfolders"
    return None


def _tail_operand(verb: str, word: Word) -> str | None:
    if word.text.startswith("+"):
        return "tail +N operands are obsolete options (+5f follows forever): use -n +5"
    return None


_SUMS = Tool(
    spec("bctwz --binary --check --tag --text --ignore-missing --quiet --status --strict --warn"
         " --zero" + _HV),
    reads=False,  # prints digests, and for -c only names with OK/FAILED
    opens=True,
    # no lead glob: a planted file named -c turns the next operand into a checklist, which
    # a link to /dev/zero makes a read that never ends
    globs=NONE,
)  # fmt: skip

#: verb -> rule for every simple tool. Verbs absent here are not glances.
TOOLS: dict[str, Tool] = {
    # cat: every option is a display flag
    "cat": Tool(
        spec(
            "AbeEnstTuv --show-all --number-nonblank --show-ends --number --squeeze-blank"
            " --show-tabs --show-nonprinting" + _HV
        ),
        globs=ANY,
    ),
    # head: -c/-n take numbers, the rest are flags
    "head": Tool(
        spec(
            "c:n:qvz --bytes= --lines= --quiet --silent --verbose --zero-terminated" + _HV,
            numeric=True,
        ),
        globs=ANY,
    ),
    # tail: -f/-F/--follow/--retry/--pid/-s never return, so they are not listed
    "tail": Tool(
        spec(
            "c:n:qvz --bytes= --lines= --quiet --silent --verbose --zero-terminated" + _HV,
            numeric=True,
        ),
        globs=tail_suffix_ok,
        operand=_tail_operand,
    ),
    # wc: counts only; but --files0-from=F (not listed, yet a glob may expand to it) prints F's
    # content in its "No such file" errors, hence files_option
    "wc": Tool(
        spec("cmlLw --bytes --chars --lines --max-line-length --words --total=" + _HV),
        reads=False,
        opens=True,
        globs=ANY,
        files_option=True,
    ),
    "nl": Tool(
        spec(
            "b:d:f:h:i:l:n:ps:v:w: --body-numbering= --section-delimiter= --footer-numbering="
            " --header-numbering= --line-increment= --join-blank-lines= --number-format="
            " --no-renumber --number-separator= --starting-line-number= --number-width=" + _HV
        ),
        globs=ANY,  # numbering styles and widths only
    ),
    "od": Tool(
        spec(
            "abcdfilosxvA:j:N:t:S:w:: --address-radix= --endian= --format= --output-duplicates"
            " --read-bytes= --skip-bytes= --strings=? --traditional --width=?" + _HV
        ),
        globs=ANY,  # formats, offsets and widths only
    ),
    # hexdump -f reads a format file: not listed, and no lead globs
    "hexdump": Tool(
        spec(
            "bcCdoxve:n:s: --canonical --format= --length= --no-squeezing --one-byte-char"
            " --one-byte-octal --skip= --two-bytes-decimal --two-bytes-hex --two-bytes-octal" + _HV
        ),
    ),
    # strings: binutils reads options from @FILE operands, so none may start with @
    "strings": Tool(
        spec(
            "adfwon:t:e:s:U: --all --data --print-file-name --bytes= --radix="
            " --include-all-whitespace --encoding= --output-separator= --unicode=" + _HV,
            numeric=True,
        ),
        operand=_no_response_file,
    ),
    **{
        name: _SUMS
        for name in ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum")
    },
    "b2sum": Tool(
        spec(
            "bctwzl: --binary --check --tag --text --ignore-missing --quiet --status --strict"
            " --warn --zero --length=" + _HV
        ),
        reads=False,
        opens=True,
        globs=NONE,  # -c: see _SUMS
    ),
    "cksum": Tool(
        spec(
            "a:l:cwz --algorithm= --length= --base64 --raw --tag --untagged --check"
            " --ignore-missing --quiet --status --strict --warn --zero --debug" + _HV
        ),
        reads=False,
        opens=True,
        globs=NONE,  # -c (--check): see _SUMS
    ),
    # stat, ls, du, df, realpath, readlink: metadata only, every option is a display choice
    "stat": Tool(
        spec("Lftc: --dereference --file-system --format= --printf= --terse --cached=" + _HV),
        reads=False,
        globs=ANY,
    ),
    "ls": Tool(
        spec(
            "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1I:T:w: --all --almost-all --author --escape"
            " --block-size= --ignore-backups --color=? --directory --dired --classify=?"
            " --file-type --format= --full-time --group-directories-first --no-group"
            " --human-readable --si --dereference-command-line"
            " --dereference-command-line-symlink-to-dir --hide= --hyperlink=?"
            " --indicator-style= --inode --ignore= --kibibytes --dereference"
            " --numeric-uid-gid --literal --hide-control-chars --show-control-chars"
            " --quote-name --quoting-style= --reverse --recursive --size --sort= --time="
            " --time-style= --tabsize= --width= --context --zero" + _HV
        ),
        reads=False,
        globs=ANY,
    ),
    "du": Tool(
        spec(
            "0abcDhHklLmPsSxB:d:t:X: --null --all --apparent-size --block-size= --bytes"
            " --total --dereference-args --max-depth= --human-readable --inodes --si"
            " --count-links --dereference --no-dereference --separate-dirs --summarize"
            " --threshold= --time=? --time-style= --exclude= --exclude-from= --one-file-system"
            + _HV
        ),
        reads=False,
        globs=ANY,  # -X reads patterns it never prints; --files0-from: see wc
        files_option=True,
    ),
    # df --sync calls sync(2) first: not listed
    "df": Tool(
        spec(
            "ahHiklPTB:t:x: --all --block-size= --human-readable --si --inodes --local"
            " --no-sync --output=? --portability --print-type --total --type= --exclude-type=" + _HV
        ),
        reads=False,
        globs=ANY,
    ),
    "realpath": Tool(
        spec(
            "emLPqsz --canonicalize-existing --canonicalize-missing --logical --physical"
            " --quiet --strip --no-symlinks --zero --relative-to= --relative-base=" + _HV
        ),
        reads=False,
        globs=ANY,
    ),
    "readlink": Tool(
        spec(
            "femnqsvz --canonicalize --canonicalize-existing --canonicalize-missing"
            " --no-newline --quiet --silent --verbose --zero" + _HV
        ),
        reads=False,
        globs=ANY,
    ),
    # basename/dirname: string operations on their operands
    "basename": Tool(spec("azs: --multiple --suffix= --zero" + _HV), reads=False, globs=ANY),
    "dirname": Tool(spec("z --zero" + _HV), reads=False, globs=ANY),
    # date: -s/--set and a bare MMDDhhmm operand set the clock; -f echoes bad lines of FILE
    "date": Tool(
        spec(
            "uRd:f:r:I:: --date= --file= --reference= --rfc-3339= --iso-8601=? --utc"
            " --universal --rfc-email --debug --resolution" + _HV,
            files="-f --file",
        ),
        reads=False,
        max_operands=1,
        operand=_date_operand,
    ),
    "uname": Tool(
        spec(
            "asnrvmpio --all --kernel-name --nodename --kernel-release --kernel-version"
            " --machine --processor --hardware-platform --operating-system" + _HV
        ),
        max_operands=0,
    ),
    "uptime": Tool(spec("psh --pretty --since" + _HV), max_operands=0),
    "nproc": Tool(spec("--all --ignore=" + _HV), max_operands=0),
    "whoami": Tool(spec(_HV), max_operands=0),
    "arch": Tool(spec(_HV), max_operands=0),
    "users": Tool(spec(_HV), max_operands=0),  # an operand is a utmp file to parse
    "groups": Tool(spec(_HV), reads=False),  # operands are user names
    "id": Tool(
        spec("aZgGnruz --context --group --groups --name --real --user --zero" + _HV),
        reads=False,
        max_operands=1,
    ),
    "tty": Tool(spec("s --quiet --silent" + _HV), max_operands=0),
    "pwd": Tool(spec("LP"), max_operands=0),
    "locale": Tool(
        spec(
            "amckv --all-locales --charmaps --category-name --keyword-name --verbose --usage" + _HV
        ),
        reads=False,
    ),
    "lscpu": Tool(
        spec(
            "abJxyhVe::p::C:: --all --bytes --caches=? --extended=? --json --offline --online"
            " --output-all --parse=? --physical --hex" + _HV
        ),
        max_operands=0,
    ),
    "lsblk": Tool(
        spec(
            "abdDfJlmnOpPrStTzMhVe:I:o:x: --all --bytes --nodeps --discard --fs --json --list"
            " --perms --noheadings --output= --output-all --paths --pairs --raw --scsi"
            " --topology --tree=? --sort= --exclude= --include= --merge --ascii --zoned" + _HV
        ),
        reads=False,
    ),
    # free: -s/--seconds and -c/--count repeat
    "free": Tool(
        spec(
            "bkmghltvw --bytes --kibi --mebi --gibi --tebi --pebi --kilo --mega --giga --tera"
            " --peta --human --si --lohi --total --committed --wide" + _HV
        ),
        max_operands=0,
    ),
    # -- text filters --
    # sort: -o/--output writes, -T/--compress-program/--random-source/--files0-from not listed
    "sort": Tool(
        spec(
            "bdfghiMnRrVcCmsuzk:t:S: --ignore-leading-blanks --dictionary-order --ignore-case"
            " --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort"
            " --numeric-sort --random-sort --reverse --version-sort --sort= --check=? --merge"
            " --stable --unique --zero-terminated --key= --field-separator= --buffer-size="
            " --parallel= --debug" + _HV
        ),
    ),
    # uniq: a second operand is the output file
    "uniq": Tool(
        spec(
            "cdDiuzf:s:w: --count --repeated --all-repeated=? --group=? --ignore-case --unique"
            " --zero-terminated --skip-fields= --skip-chars= --check-chars=" + _HV,
            numeric=True,
        ),
        max_operands=1,
    ),
    "cut": Tool(
        spec(
            "nszb:c:d:f: --bytes= --characters= --delimiter= --fields= --complement"
            " --only-delimited --output-delimiter= --zero-terminated" + _HV
        ),
        globs=ANY,  # field selection only
    ),
    "paste": Tool(spec("szd: --delimiters= --serial --zero-terminated" + _HV), globs=ANY),
    "join": Tool(
        spec(
            "iza:e:j:o:t:v:1:2: --ignore-case --check-order --nocheck-order --header"
            " --zero-terminated" + _HV
        ),
        max_operands=2,
        globs=ANY,
    ),
    "fold": Tool(spec("bsw: --bytes --spaces --width=" + _HV, numeric=True), globs=ANY),
    "fmt": Tool(
        spec(
            "cstup:w:g: --crown-margin --prefix= --split-only --tagged-paragraph"
            " --uniform-spacing --width= --goal=" + _HV,
            numeric=True,
        ),
        globs=ANY,
    ),
    "tac": Tool(spec("brs: --before --regex --separator=" + _HV), globs=ANY),
    "rev": Tool(spec("0hV --zero" + _HV), globs=ANY),
    "expand": Tool(spec("it: --initial --tabs=" + _HV, numeric=True), globs=ANY),
    "unexpand": Tool(spec("at: --all --first-only --tabs=" + _HV, numeric=True), globs=ANY),
    "base64": Tool(spec("diw: --decode --ignore-garbage --wrap=" + _HV), max_operands=1, globs=ANY),
    "comm": Tool(
        spec(
            "123z --check-order --nocheck-order --output-delimiter= --total --zero-terminated" + _HV
        ),
        max_operands=2,
        globs=ANY,
    ),
    "cmp": Tool(
        spec("blsi:n: --print-bytes --ignore-initial= --verbose --bytes= --quiet --silent" + _HV),
        max_operands=4,
        globs=ANY,
    ),
    # diff: -l/--paginate runs pr, so not listed, and no lead globs. Given a directory, diff
    # compares the files inside with same-named ones (`diff ~ /tmp/x` would print ~/.netrc
    # against an attacker's /tmp/x/.netrc), so its operands are always recursive roots
    "diff": Tool(
        spec(
            "abBcdeEinNpqrstTuwyZC:D:F:I:S:U:W:x:X: --brief --report-identical-files"
            " --context=? --unified=? --ed --rcs --side-by-side --width= --left-column"
            " --suppress-common-lines --show-c-function --show-function-line= --label="
            " --expand-tabs --initial-tab --tabsize= --suppress-blank-empty --recursive"
            " --no-dereference --new-file --unidirectional-new-file --ignore-file-name-case"
            " --no-ignore-file-name-case --exclude= --exclude-from= --starting-file="
            " --from-file= --to-file= --ignore-case --ignore-tab-expansion"
            " --ignore-trailing-space --ignore-space-change --ignore-all-space"
            " --ignore-blank-lines --ignore-matching-lines= --text --strip-trailing-cr"
            " --ifdef= --line-format= --minimal --horizon-lines= --speed-large-files"
            " --color=? --palette= --normal" + _HV,
            numeric=True,
            files="--from-file --to-file",
        ),
        recursive=ALWAYS,
        operand=_diff_operand,
    ),
    # tr: operands are character sets, not files
    "tr": Tool(
        spec("cCdst --complement --delete --squeeze-repeats --truncate-set1" + _HV),
        reads=False,
        max_operands=2,
        globs=ANY,
    ),
    "column": Tool(
        spec(
            "txdeJLhVs:o:c:N:l:R:T:E:W:H:O:n:r:i:p: --table --fillrows --table-noheadings"
            " --table-header-repeat --json --keep-empty-lines --separator= --output-separator="
            " --output-width= --table-columns= --table-columns-limit= --table-right="
            " --table-truncate= --table-noextreme= --table-wrap= --table-hide= --table-order="
            " --table-name= --tree= --tree-id= --tree-parent=" + _HV
        ),
        globs=ANY,  # layout options only
    ),
    # file: -C writes a magic file, -m/-f read other files, -z/-Z run decompressors,
    # -p resets access times, -s reads devices: none listed, and no lead globs
    "file": Tool(
        spec(
            "bcEhikLNnr0F:e:P: --brief --checking-printout --mime --mime-type --mime-encoding"
            " --apple --extension --keep-going --no-dereference --dereference --no-buffer"
            " --no-pad --raw --print0 --separator= --exclude= --exclude-quiet= --parameter=" + _HV
        ),
        reads=False,
        opens=True,
    ),
    # tree: -o writes its output to a file, -R with -H writes 00Tree.html files, --fromfile
    # and --hintro/--houtro print other files: none listed, and no lead globs
    "tree": Tool(
        spec(
            "adlfxqNQpugshDFvtcUrACSnJXL:P:I:H:T: --gitignore --noreport --dirsfirst"
            " --filesfirst --du --si --prune --matchdirs --metafirst --ignore-case --info"
            " --inodes --device --nolinks --charset= --filelimit= --timefmt= --sort=" + _HV
        ),
        reads=False,
    ),
    # path lookup
    "which": Tool(spec("as"), reads=False, globs=ANY),
    "whereis": Tool(spec("bmsulfB:M:S:"), reads=False, globs=ANY),
    "type": Tool(spec("afpPt"), reads=False, globs=ANY),  # bash builtin
}


def _lead_glob_reason(verb: str, tool: Tool, word: Word) -> str | None:
    """Why a glob starting with a wildcard, before any ``--``, is refused for this tool."""
    if not tool.globs(word.literal_suffix()):
        return (
            f"{verb}: a glob starting with a wildcard could expand to an option;"
            " write ./* or put -- before it"
        )
    if tool.files_option and content_reason(word) is not None:
        return (
            f"{verb}: the glob could expand to --files0-from=NAME with NAME a secret;"
            " put -- before it"
        )
    return None


def check_operands(
    verb: str, tool: Tool, operands: Sequence[Word], recursive: bool, dashdash: int | None = None
) -> None:
    """Operand count, lead globs, per-operand rule and (for readers) sensitive paths.

    A glob after a real ``--`` (``dashdash``: how many operands came before it) can only
    expand to operands, so the lead-glob policy does not apply there.
    """
    if tool.max_operands is not None and len(operands) > tool.max_operands:
        raise Refuse(f"{verb} takes at most {tool.max_operands} operand(s) here")
    for index, word in enumerate(operands):
        before_dashdash = dashdash is None or index < dashdash
        reason = _lead_glob_reason(verb, tool, word) if word.lead_glob and before_dashdash else None
        if reason is not None:
            raise Refuse(reason)
        if tool.max_operands is not None and word.glob:
            raise Refuse(f"{verb}: a glob could expand to more operands than {verb} reads")
        if tool.operand is not None:
            reason = tool.operand(verb, word)
            if reason is not None:
                raise Refuse(reason)
        if tool.reads:
            reason = recursive_reason(word) if recursive else content_reason(word)
            if reason is not None:
                raise Refuse(f"{verb}: {reason}")
        elif tool.opens:
            reason = device_reason(word)
            if reason is not None:
                raise Refuse(f"{verb}: {reason}")


def check_tool(verb: str, args: Sequence[Word]) -> None:
    """Judge one simple tool's arguments against its :data:`TOOLS` entry."""
    tool = TOOLS[verb]
    parsed = parse(verb, args, tool.spec)
    recursive = tool.recursive == ALWAYS or parsed.has(*tool.recursive)
    check_file_values(verb, parsed, tool.spec.files, recursive=recursive)
    check_operands(verb, tool, parsed.operands, recursive, parsed.dashdash)
    check_separate_values(verb, tool, parsed.separate_values(), recursive)


def check_separate_values(verb: str, tool: Tool, values: Sequence[Word], recursive: bool) -> None:
    """Separate-word values may be files to a BSD variant: judge them as read operands."""
    if not (tool.reads or tool.opens):
        return
    for word in values:
        reason = (recursive_reason if recursive else content_reason)(word)
        if reason is None and tool.opens and not tool.reads:
            reason = device_reason(word)
        if reason is not None:
            raise Refuse(f"{verb}: {reason}")
