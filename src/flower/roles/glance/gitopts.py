"""The option allow-lists of read-only git subcommands (the tables :mod:`.git` checks against).

Missing on purpose, everywhere: ``--output`` (writes a file), ``--ext-diff`` and ``--textconv``
(run configured programs), ``-O<orderfile>``, ``--show-signature`` (runs gpg), ``--help`` (git
turns ``git log --help`` into ``git help log``, which starts ``man`` or a browser), and every
option that changes refs, the index or the work tree. Formats are checked separately for the
placeholders that verify signatures (``%G?``, ``%(signature)``).
"""

from __future__ import annotations

from .options import Spec, merge, spec

__all__ = ["GLOBAL", "SUBCOMMANDS"]

#: options allowed between ``git`` and the subcommand
GLOBAL = frozenset(
    "--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs"
    " --icase-pathspecs --no-replace-objects".split()
)


def _git(text: str, **kw: object) -> Spec:
    return spec(text, **kw)  # type: ignore[arg-type]


DIFF = _git(
    "pusRzabwWDhB::M::C::X::l:S:G:U:I: --patch --no-patch --raw --patch-with-raw"
    " --indent-heuristic --no-indent-heuristic --minimal --patience --histogram"
    " --compact-summary --numstat --shortstat --cumulative --dirstat-by-file --summary"
    " --patch-with-stat --name-only --name-status --no-color --no-color-moved"
    " --no-color-moved-ws --no-renames --rename-empty --no-rename-empty --check --full-index"
    " --binary --find-copies-harder --irreversible-delete --pickaxe-all --pickaxe-regex"
    " --no-relative --text --ignore-cr-at-eol --ignore-space-at-eol --ignore-space-change"
    " --ignore-all-space --ignore-blank-lines --function-context --exit-code --quiet"
    " --no-ext-diff --no-textconv --no-prefix --default-prefix --ita-invisible-in-index"
    " --ita-visible-in-index --no-stat"
    " --stat=? --dirstat=? --submodule=? --color=? --color-moved=? --word-diff=?"
    " --color-words=? --abbrev=? --break-rewrites=? --find-renames=? --find-copies=?"
    " --relative=? --ignore-submodules=?"
    " --unified= --output-indicator-new= --output-indicator-old= --output-indicator-context="
    " --anchored= --diff-algorithm= --stat-width= --stat-name-width= --stat-graph-width="
    " --stat-count= --color-moved-ws= --word-diff-regex= --ws-error-highlight="
    " --diff-filter= --find-object= --skip-to= --rotate-to= --ignore-matching-lines="
    " --inter-hunk-context= --src-prefix= --dst-prefix= --line-prefix= --diff-merges="
    " --no-diff-merges --combined-all-paths --merge-base"
)

REV = _git(
    "gimcEFn:L: --max-count= --skip= --since= --after= --since-as-filter= --until= --before="
    " --max-age= --min-age= --author= --committer= --grep-reflog= --grep= --all-match"
    " --invert-grep --regexp-ignore-case --basic-regexp --extended-regexp --fixed-strings"
    " --perl-regexp --remove-empty --merges --no-merges --min-parents= --max-parents="
    " --no-min-parents --no-max-parents --first-parent --exclude-first-parent-only --not"
    " --all --branches=? --tags=? --remotes=? --glob= --exclude= --exclude-hidden= --reflog"
    " --alternate-refs --single-worktree --ignore-missing --bisect --stdin --cherry-mark"
    " --cherry-pick --left-only --right-only --cherry --walk-reflogs --merge --boundary"
    " --simplify-by-decoration --show-pulls --full-history --dense --sparse --simplify-merges"
    " --ancestry-path=? --date-order --author-date-order --topo-order --reverse --no-walk=?"
    " --do-walk --pretty=? --format= --abbrev-commit --no-abbrev-commit --oneline --encoding="
    " --expand-tabs=? --no-expand-tabs --notes=? --no-notes --show-notes=? --standard-notes"
    " --no-standard-notes --relative-date --date= --parents --children --left-right --graph"
    " --no-graph --show-linear-break=? --cc --dd",
    numeric=True,
)

LOG = _git(
    "t --follow --no-follow --decorate=? --no-decorate --decorate-refs= --decorate-refs-exclude="
    " --source --mailmap --no-mailmap --use-mailmap --no-use-mailmap --full-diff --log-size"
    " --clear-decorations"
)

_LOG = merge(DIFF, REV, LOG)

SUBCOMMANDS: dict[str, Spec] = {
    "status": _git(
        "sbvzu::h --short --branch --porcelain=? --long --verbose --untracked-files=?"
        " --ignored=? --ignore-submodules=? --column=? --no-column --ahead-behind"
        " --no-ahead-behind --renames --no-renames --find-renames=? --show-stash --null"
    ),
    "diff": merge(DIFF, _git("0123 --cached --staged --no-index --base --ours --theirs")),
    "log": _LOG,
    "whatchanged": _LOG,
    "show": _LOG,
    "shortlog": merge(REV, _git("nsecw:: --numbered --summary --email --committer --group=")),
    "blame": _git(
        "bltfnsewpcM::C::L:S: --root --show-stats --porcelain --line-porcelain --incremental"
        " --encoding= --contents= --date= --progress --no-progress --reverse= --first-parent"
        " --ignore-rev= --ignore-revs-file= --color-lines --color-by-age --score-debug"
        " --show-name --show-number --show-email --abbrev=?",
        files="--contents --ignore-revs-file -S",
    ),
    "rev-parse": _git(
        "q --verify --quiet --short=? --abbrev-ref=? --symbolic --symbolic-full-name"
        " --show-toplevel --show-prefix --show-cdup --git-dir --git-common-dir"
        " --absolute-git-dir --is-inside-work-tree --is-inside-git-dir --is-bare-repository"
        " --is-shallow-repository --show-superproject-working-tree --shared-index-path"
        " --show-object-format=? --show-ref-format --local-env-vars --all --branches=?"
        " --tags=? --remotes=? --glob= --exclude= --disambiguate= --since= --after= --until="
        " --before= --default= --prefix= --path-format= --git-path= --revs-only --no-revs"
        " --flags --no-flags --not --sq --sq-quote --resolve-git-dir= --abbrev=? --verify"
    ),
    "rev-list": merge(
        REV,
        _git(
            " --count --objects --objects-edge --no-object-names --object-names --header"
            " --timestamp --bisect-all --quiet --disk-usage=? --use-bitmap-index"
            " --in-commit-order --indexed-objects --unpacked --filter= --missing="
        ),
    ),
    "ls-files": _git(
        "cdmoiusktvfzx:X: --cached --deleted --modified --others --ignored --stage --unmerged"
        " --killed --directory --no-empty-directory --eol --exclude= --exclude-from="
        " --exclude-per-directory= --exclude-standard --error-unmatch --with-tree="
        " --full-name --recurse-submodules --abbrev=? --debug --deduplicate --sparse"
        " --format= --resolve-undo",
        files="-X --exclude-from",
    ),
    "ls-tree": _git(
        "drtlz --name-only --name-status --object-only --full-name --full-tree --abbrev=?"
        " --format= --long"
    ),
    "cat-file": _git(
        "tsepZ --batch=? --batch-check=? --batch-all-objects --buffer --follow-symlinks"
        " --unordered --allow-unknown-type --mailmap --use-mailmap --no-mailmap"
    ),
    "describe": _git(
        " --all --tags --contains --abbrev= --candidates= --exact-match --debug --long --match="
        " --exclude= --always --first-parent"
    ),
    "merge-base": _git("a --octopus --independent --is-ancestor --fork-point --all"),
    "name-rev": _git(
        " --tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined --always"
    ),
    "for-each-ref": _git(
        "s --count= --shell --perl --python --tcl --sort= --format= --color=? --points-at="
        " --merged=? --no-merged=? --contains=? --no-contains=? --ignore-case --omit-empty"
        " --exclude= --stdin"
    ),
    "show-ref": _git(
        "dsq --head --branches --tags --heads --dereference --hash=? --abbrev=? --verify --quiet"
        " --exclude-existing=? --exists"
    ),
    "count-objects": _git("vH --verbose --human-readable"),
    "check-ignore": _git("qvnz --quiet --verbose --stdin --non-matching --no-index"),
    "check-attr": _git("az --all --cached --stdin --source="),
    "cherry": _git("v --abbrev=?"),
    "range-diff": merge(
        DIFF,
        _git(" --creation-factor= --no-dual-color --left-only --right-only --notes=? --no-notes"),
    ),
    "show-branch": _git(
        "arg --all --remotes --current --topo-order --date-order --sparse --more= --list"
        " --merge-base --independent --no-name --sha1-name --topics --reflog=? --color=?"
        " --no-color"
    ),
    "version": _git(" --build-options"),
    "var": _git(""),
}
for _name in ("diff-tree", "diff-files", "diff-index"):
    SUBCOMMANDS[_name] = merge(
        DIFF,
        _git(
            "rtmcsv0123q --root --stdin --no-commit-id --always --cached --pretty=? --format="
            " --abbrev-commit --cc --combined-all-paths"
        ),
    )
SUBCOMMANDS["annotate"] = SUBCOMMANDS["blame"]

GREP = _git(
    "aiIrwvhHEGFPnlLzocpWqf:e:A:B:C:m: --text --no-textconv --ignore-case --max-depth="
    " --recursive --no-recursive --word-regexp --invert-match --full-name --extended-regexp"
    " --basic-regexp --fixed-strings --perl-regexp --line-number --column --name-only"
    " --files-with-matches --files-without-match --null --only-matching --count --color=?"
    " --no-color --break --heading --show-function --function-context --threads= --file="
    " --and --or --not --all-match --quiet --cached --untracked --no-index --exclude-standard"
    " --recurse-submodules --max-count= --after-context="
    " --before-context= --context=",
    numeric=True,
    files="-f --file",
)
SUBCOMMANDS["grep"] = GREP

#: the listing forms of subcommands that also write (checked in :mod:`.git`)
BRANCH = _git(
    "arvlih --all --remotes --verbose --list --show-current --ignore-case --no-color --no-column"
    " --no-abbrev --omit-empty --quiet --contains=? --no-contains=? --merged=? --no-merged=?"
    " --points-at= --sort= --format= --color=? --column=? --abbrev="
)
TAG = _git(
    "lin:: --list --ignore-case --no-color --no-column --omit-empty --contains=? --no-contains=?"
    " --merged=? --no-merged=? --points-at= --sort= --format= --color=? --column="
)
REFLOG = merge(_LOG, _git(""))
CONFIG = _git(
    "z --get --get-all --get-color --get-colorbool --show-origin --show-scope --name-only"
    " --null --global --system --local --worktree --bool --int --bool-or-int --path"
    " --expiry-date --includes --no-includes --all --fixed-value --type= --default="
)
STASH_SHOW = merge(DIFF, _git("u --include-untracked --only-untracked"))
