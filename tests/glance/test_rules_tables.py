"""The allow-lists against the real binaries' ``--help``: every listed option exists, and every
option listed as taking an argument really takes one.

Both mistakes would be holes, not typos. An option that does not exist but is a prefix of one
that does (``sort --out``) is an abbreviation getopt expands. An option listed as taking an
argument that is really a flag makes the classifier skip the next word as its "value" while the
binary reads it as an option or a file. (The other two mistakes, a flag that really takes an
argument or an optional argument that is really required, only make the classifier stricter.)

The bundled bfs/ugrep/ripgrep are the CLI binary under another ``argv[0]``; the system tools
are checked where installed (skipped otherwise).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import claude_agent_sdk
import pytest

from flower.roles.glance import find, grep
from flower.roles.glance.binaries import TOOLS
from flower.roles.glance.options import Spec
from flower.roles.glance.system import SYSTEM_TOOLS

BUNDLED = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"

_OPT_PART = re.compile(r"^\s{0,12}(-[^\s].*?)(?:\s{2,}|\t|$)")
_TOKEN = re.compile(
    r"(?<![\w-])(--?[A-Za-z0-9][-A-Za-z0-9_.]*)"
    r"(\[=[^\]]*\]|\[[^\]]*\]|=\S+|\s(?=[A-Z<{])[A-Z<{][^\s,]*)?"
)


def _kind(arg: str) -> str:
    if not arg:
        return "flag"
    if arg.startswith("["):
        return "optional"
    value = arg.lstrip("= ")
    # `-p, --indicator-style=slash`: a fixed lowercase value is not an argument
    return "required" if value[:1].isupper() or value[:1] in "<{[-+" else "flag"


def help_options(text: str) -> dict[str, set[str]]:
    """option -> the argument kinds its help lines show ("flag"/"required"/"optional")."""
    kinds: dict[str, set[str]] = {}
    for line in text.splitlines():
        match = _OPT_PART.match(line)
        if not match:
            continue
        tokens = _TOKEN.findall(match.group(1))
        line_kind = "flag"
        for _name, arg in tokens:
            kind = _kind(arg)
            line_kind = kind if line_kind == "flag" else line_kind
        for name, _arg in tokens:
            kinds.setdefault(name, set()).add(line_kind)
    for negation in re.findall(r"disabled\s+with\s+(--no-[-a-z0-9]+)", text):  # ripgrep's style
        kinds.setdefault(negation, set()).add("flag")
    return kinds


@cache
def help_text(argv: tuple[str, ...], argv0: str = "") -> str:
    executable = str(BUNDLED) if argv0 else None
    args = [argv0, *argv[1:]] if argv0 else list(argv)
    result = subprocess.run(
        args, executable=executable, capture_output=True, text=True, timeout=30, check=False
    )
    return result.stdout + result.stderr


def _check(spec: Spec, kinds: dict[str, set[str]], known_missing: frozenset[str]) -> list[str]:
    problems: list[str] = []
    kinds = {k: v for k, v in kinds.items() if k not in known_missing}
    for name in sorted(spec.long_names()):
        option = "--" + name
        if option not in kinds and option not in known_missing:
            problems.append(f"{option} is not in --help")
        if name in spec.long_required and option in kinds and "required" not in kinds[option]:
            problems.append(f"{option} listed with a required value, --help shows {kinds[option]}")
    for letter in sorted(spec.flags | spec.required | spec.optional):
        option = "-" + letter
        if option not in kinds and option not in known_missing:
            problems.append(f"{option} is not in --help")
        elif letter in spec.required and option in kinds and "required" not in kinds[option]:
            problems.append(f"{option} listed with a required value, --help shows {kinds[option]}")
    return problems


#: options that exist but that these --help texts do not show, or show without their argument
#: (checked by hand: ``file -P /etc/hosts`` fails with "Unknown param"), or that only newer
#: versions have (an unknown option is a usage error, and none of these prefixes another one)
KNOWN_MISSING: dict[str, frozenset[str]] = {
    "wc": frozenset({"--total"}),  # coreutils 9.2
    "cksum": frozenset({"--base64", "--raw"}),  # coreutils 9.2
    "rev": frozenset({"-0", "--zero"}),  # util-linux 2.39
    "stat": frozenset({"--format", "-c"}),  # "-c  --format=FORMAT": the comma is missing
    "w": frozenset({"-p"}),
    "head": frozenset({"-q", "-v", "-z"}),
    "tail": frozenset({"-q", "-v", "-z"}),
    "date": frozenset({"-I", "--help", "--version"}),
    "od": frozenset({"-a", "-b", "-c", "-d", "-f", "-i", "-l", "-o", "-s", "-x"}),
    "ls": frozenset({"--hyperlink", "--context"}),
    "du": frozenset({"--time"}),
    "sort": frozenset({"--sort", "--check"}),
    "uniq": frozenset({"--group", "--all-repeated"}),
    "diff": frozenset({"--context", "--unified", "-C", "-U", "--color"}),
    "file": frozenset(
        {"--separator", "--exclude", "--exclude-quiet", "--parameter", "-F", "-e", "-P", "-E"}
    ),
    "column": frozenset(
        {
            "--separator",
            "--output-separator",
            "--output-width",
            "--table-columns",
            "--table-columns-limit",
            "--table-right",
            "--table-truncate",
            "--table-noextreme",
            "--table-wrap",
            "--table-hide",
            "--table-order",
            "--table-name",
            "--tree",
            "--tree-id",
            "--tree-parent",
        }
    ),
    "lscpu": frozenset({"--caches", "--extended", "--parse", "-e", "-p", "-C"}),
    "lsblk": frozenset({"--tree", "--output", "--sort", "--exclude", "--include"}),
    "pgrep": frozenset(
        {
            "--delimiter",
            "--pgroup",
            "--group",
            "--older",
            "--parent",
            "--session",
            "--terminal",
            "--euid",
            "--uid",
            "--runstates",
            "--cgroup",
            "--ns",
            "--nslist",
            "--pidfile",
        }
    ),
    "pstree": frozenset({"--color", "--ns-sort", "--highlight-pid", "--help"}),
    "hexdump": frozenset({"--format", "--length", "--skip"}),
}


def _installed(verb: str) -> bool:
    return shutil.which(verb) is not None


@pytest.mark.parametrize("verb", sorted({**TOOLS, **SYSTEM_TOOLS}))
def test_simple_tool_table_matches_help(verb: str) -> None:
    if verb in ("which", "whereis", "type", "pwd", "users", "groups", "arch", "whoami"):
        pytest.skip(f"{verb}: a builtin or a help text without an option table")
    if not _installed(verb):
        pytest.skip(f"{verb} is not installed here")
    spec = {**TOOLS, **SYSTEM_TOOLS}[verb].spec
    kinds = help_options(help_text((verb, "--help")))
    if not kinds:
        pytest.skip(f"{verb} --help has no option table")
    assert _check(spec, kinds, KNOWN_MISSING.get(verb, frozenset())) == []


def test_grep_table_matches_ugrep_and_gnu_grep() -> None:
    """Each grep option: known to ugrep or GNU grep, with a real argument where listed so."""
    ugrep = help_options(help_text(("ugrep", "--help"), argv0="ugrep"))
    gnu = help_options(help_text(("grep", "--help"))) if _installed("grep") else {}
    kinds = {k: ugrep.get(k, set()) | gnu.get(k, set()) for k in {*ugrep, *gnu}}
    assert _check(grep.GREP, kinds, frozenset({"--colour", "-NUM"})) == []


def test_ugrep_only_names_are_not_prefixes_of_gnu_grep_options() -> None:
    """On a fallback, GNU grep would expand a ugrep-only name that prefixes one of its own."""
    if not _installed("grep"):
        pytest.skip("GNU grep is not installed here")
    gnu = {k for k in help_options(help_text(("grep", "--help"))) if k.startswith("--")}
    for name in grep.GREP.long_names():
        option = "--" + name
        if option not in gnu:
            assert not [g for g in gnu if g.startswith(option)], option


def test_rg_table_matches_ripgrep() -> None:
    kinds = help_options(help_text(("rg", "--help"), argv0="rg"))
    # `-., --hidden` escapes the parser; --no-pre is named in --pre's text, not on its own line
    assert _check(grep.RG, kinds, frozenset({"-.", "--no-pre"})) == []


def test_find_primaries_exist_in_bfs_or_gnu_find() -> None:
    """Every allowed primary is in bfs --help (or GNU find's) or documented as a GNU flag."""
    text = help_text(("bfs", "--help"), argv0="bfs")
    if _installed("find"):
        text += help_text(("find", "--help"))
    for letters, rest in re.findall(r"-\[(\w+)\](\w+)", text):  # `-[aBcm]min`
        text += " " + " ".join(f"-{letter}{rest}" for letter in letters)
    gnu_only = {"-ignore_readdir_race", "-noignore_readdir_race", "-context", "-d"}
    for primary in sorted(find.NO_ARG | find.ONE_ARG):
        assert primary in gnu_only or re.search(rf"(?<![\w-]){re.escape(primary)}\b", text), primary


def test_bfs_rm_really_deletes(tmp_path: Path) -> None:
    """Why -rm is refused: in the CLI's find (bfs 4.1.1) it is -delete."""
    (tmp_path / "x").write_text("x")
    subprocess.run(
        ["bfs", "-S", "dfs", str(tmp_path), "-name", "x", "-rm"],
        executable=str(BUNDLED),
        check=True,
        timeout=30,
    )
    assert not (tmp_path / "x").exists()


def test_fallback_patterns_are_the_clis() -> None:
    """grep.FALLBACK is copied from the CLI's grep function; the bundled binary must agree."""
    wanted = ",".join(f'"{p}"' for p in grep.FALLBACK).encode()
    with BUNDLED.open("rb") as handle:
        found = False
        tail = b""
        while chunk := handle.read(1 << 24):
            if wanted in tail + chunk:
                found = True
                break
            tail = chunk[-len(wanted) :]
    assert found
