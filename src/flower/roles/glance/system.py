"""Processes, sockets, the host name and docker: tools that look at the machine, not at files.

What makes these dangerous is rarely a write. It is the network (``lsof -i @evil.example`` and
``ss dst evil.example`` resolve a name the model picked, which is enough to leak data through
DNS; ``netstat``/``lsof`` without ``-n`` reverse-resolve every peer; ``hostname -f`` asks DNS),
the environment of processes (``ps e`` prints it, and the API key with it; ``docker inspect``
prints a container's ``Env``), and commands that never return (``docker logs -f``, ``docker
stats`` without ``--no-stream``, ``ss -E``, ``lsof -r``). ``top`` is off the list: even
``top -b -n 1`` creates ``~/.config/procps`` where it is missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .binaries import Tool, check_operands
from .lexer import Refuse, Word
from .options import Spec, parse, spec

__all__ = [
    "SYSTEM_TOOLS",
    "check_docker",
    "check_hostname",
    "check_lsof",
    "check_netstat",
    "check_ps",
    "check_ss",
]

_HV = " --help --version"

#: Tools of this family that the generic checker handles.
SYSTEM_TOOLS: dict[str, Tool] = {
    "pgrep": Tool(
        spec(
            "acfilnovwxAd:g:G:O:P:s:t:u:U:r: --delimiter= --list-name --list-full --inverse"
            " --lightweight --count --full --pgroup= --group= --ignore-case --newest --oldest"
            " --older= --parent= --session= --terminal= --euid= --uid= --exact --runstates="
            " --ignore-ancestors --cgroup= --ns= --nslist=" + _HV
        ),
        reads=False,
    ),
    "pstree": Tool(
        spec(
            "aAcghlnpsStTuUZGH:N:C: --arguments --ascii --compact-not --show-pgids"
            " --highlight-all --highlight-pid= --long --numeric-sort --ns-sort= --show-pids"
            " --show-parents --ns-changes --thread-names --hide-threads --uid-changes --unicode"
            " --security-context --vt100 --color=" + _HV
        ),
        reads=False,
        max_operands=1,
    ),
    # who --lookup canonicalises host names through DNS: not listed
    "who": Tool(
        spec(
            "abdHlmpqrstTuw --all --boot --dead --heading --login --mesg --message --writable"
            " --process --count --runlevel --short --time --users --ips" + _HV
        ),
        reads=False,
        max_operands=2,  # only `who am i`, checked below
    ),
    "w": Tool(
        spec("husfoip --no-header --no-current --short --from --old-style --ip-addr" + _HV),
        reads=False,
        max_operands=1,
    ),
}


def check_who(verb: str, args: Sequence[Word]) -> None:
    """``who`` reads a utmp file given as operand; only ``who am i`` takes operands."""
    parsed = parse(verb, args, SYSTEM_TOOLS["who"].spec)
    texts = [w.text for w in parsed.operands]
    if texts and [t.lower() for t in texts] != ["am", "i"]:
        raise Refuse("who: only `who am i` takes operands (one would be parsed as a utmp file)")


# --------------------------------------------------------------------------------------------
# ps
# --------------------------------------------------------------------------------------------

#: ps format keys allowed in -o/-O/o/O/--format/--sort (``environ`` prints the environment).
PS_KEYS = frozenset(
    "%cpu %mem args atime bsdstart bsdtime c cgroup class cls cmd comm command cputime cputimes "
    "drs egid egroup etime etimes euid euser exe f flag flags fname gid group label lstart lwp "
    "ni nice nlwp pcpu pgid pgrp pid pmem policy ppid pri priority psr pss rgid rgroup rss "
    "rssize rsz rtprio ruid ruser s sess session sgid sgroup sid size start start_time stat "
    "state stime suid suser sz tgid thcount tid time tname tpgid tt tty ucmd ucomm uid uname "
    "user uss vsize vsz wchan".split()
)
_PS_UNIX = spec(
    "AadeFfHjLlMNTwyZcmC:G:g:O:o:p:q:s:t:u:U: --cols= --columns= --cumulative --deselect"
    " --forest --format= --group= --Group= --headers --no-headers --lines= --pid= --ppid="
    " --quick-pid= --rows= --sid= --sort= --tty= --user= --User= --width= --context --help=?"
    " --version"
)
_PS_FORMATS = {"-o", "-O", "--format", "o", "O"}
#: BSD letters (no dash): ``e`` (show the environment) is deliberately absent
_PS_BSD_FLAGS = set("acfhjlmnrsSTuvwxXLHZ")
_PS_BSD_ARGS = set("OopqtUk")


def _ps_format(value: str, *, sort: bool = False) -> None:
    """Every key of a format or sort list must be in :data:`PS_KEYS`."""
    for item in re.split(r"[,\s]+", value):
        key = item.split("=", 1)[0].split(":", 1)[0]
        if sort:
            key = key.lstrip("+-")
        if key and key not in PS_KEYS:
            raise Refuse(f"ps: format key {key[:30]!r} is not allowed (environ prints secrets)")
        # `pid=X,environ`: procps ends a header at the next comma or blank, so keep checking


def _unix_words(args: Sequence[Word], i: int) -> int:
    """How many words the dash option at ``args[i]`` spans (2 when its value is the next)."""
    text = args[i].text
    if text.startswith("--"):
        name = text[2:]
        return 2 if name in _PS_UNIX.long_required and i + 1 < len(args) else 1
    for k, letter in enumerate(text[1:], start=1):
        if letter in _PS_UNIX.required:
            return 2 if k == len(text) - 1 and i + 1 < len(args) else 1
    return 1


def _bsd_cluster(args: Sequence[Word], i: int) -> int:
    """Check the BSD cluster at ``args[i]``; return the index after it (and its value)."""
    text = args[i].text
    i += 1
    for k, letter in enumerate(text):
        if letter in _PS_BSD_ARGS and k == len(text) - 1 and i < len(args):
            if letter in "oOk":
                _ps_format(args[i].text, sort=letter == "k")
            return i + 1
        if letter not in _PS_BSD_FLAGS:
            reason = "e shows process environments" if letter == "e" else "is not allowed"
            raise Refuse(f"ps: BSD option {letter!r} {reason}")
    return i


def check_ps(verb: str, args: Sequence[Word]) -> None:
    """procps ps: Unix (-x), GNU (--x) and BSD (x) options, never the environment."""
    unix: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word.glob:
            raise Refuse("ps: globs are refused")
        if word.text.startswith("-"):
            span = _unix_words(args, i)
            unix.extend(args[i : i + span])
            i += span
        elif word.text.isdigit():
            unix.append(word)
            i += 1
        else:
            i = _bsd_cluster(args, i)
    parsed = parse(verb, unix, _PS_UNIX)
    for key, value in parsed.options:
        if value is not None and key in _PS_FORMATS:
            _ps_format(value)
        if value is not None and key == "--sort":
            _ps_format(value, sort=True)
    if any(not w.text.isdigit() for w in parsed.operands):
        raise Refuse("ps: operands must be process ids")


# --------------------------------------------------------------------------------------------
# lsof
# --------------------------------------------------------------------------------------------

_LSOF_FLAGS = set("ablnNPRtUVwhLXx")
_NUMERIC_HOST = re.compile(r"^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\])$")


def _lsof_address(value: str) -> None:
    """``-i [46][proto][@host][:port]``: a host name would be resolved, an address is not."""
    if "@" not in value:
        return
    host = value.split("@", 1)[1].rsplit(":", 1)[0] if "]" not in value else (
        value.split("@", 1)[1].split("]", 1)[0] + "]"
    )  # fmt: skip
    if not _NUMERIC_HOST.match(host):
        raise Refuse("lsof -i @HOST resolves a host name: give a numeric address")


def _lsof_value(
    args: Sequence[Word], i: int, attached: str, *, colon: bool = False
) -> tuple[str, int]:
    """An optional lsof value: attached, or the next word when it is not an option."""
    if attached:
        return attached, i
    if i < len(args) and not args[i].text.startswith(("-", "+")):
        if not colon or ":" in args[i].text:
            return args[i].text, i + 1
    return "", i


def check_lsof(verb: str, args: Sequence[Word]) -> None:
    """lsof: listing options only, and always ``-n`` (no reverse DNS of every peer)."""
    numeric = False
    i = 0
    while i < len(args):
        word, i = args[i], i + 1
        text = word.text
        if word.glob_in_name():
            raise Refuse("lsof: a glob could expand to any option")
        if not text.startswith(("-", "+")) or len(text) < 2:
            continue  # a file name: lsof lists who has it open, it reads nothing
        sign, letter, rest = text[0], text[1], text[2:]
        if sign == "-" and set(text[1:]) <= _LSOF_FLAGS:
            numeric = numeric or "n" in text
        elif sign == "-" and letter == "i":
            value, i = _lsof_value(args, i, rest)
            _lsof_address(value)
        elif sign == "-" and letter == "s":
            _value, i = _lsof_value(args, i, rest, colon=True)
        elif (sign == "-" and letter in "cdgpu") or (sign == "+" and letter in "Dd"):
            if not rest:
                # a value that looks like an option would be read as one by lsof (-g takes
                # its value only optionally): never skip such a word unchecked
                if i >= len(args) or args[i].text.startswith(("-", "+")):
                    raise Refuse(f"lsof {text} needs a value attached or as the next word")
                i += 1
        elif (sign == "-" and letter in "FT") or text in ("+L", "-L", "+c", "-o", "-O"):
            pass
        else:
            why = " repeats forever" if letter == "r" else " is not allowed"
            raise Refuse(f"lsof {text[:2]}{why}")
    if not numeric and [a.text for a in args] not in (["-v"], ["-h"]):
        raise Refuse("lsof without -n resolves host names: add -n")


# --------------------------------------------------------------------------------------------
# ss and netstat
# --------------------------------------------------------------------------------------------

_SS = spec(
    "hVnaloempTisbZz460tMSudwxHOf:A: --help --version --numeric --all --listening --options"
    " --extended --memory --processes --threads --info --tipcinfo --summary --tos --cgroup"
    " --bpf --context --contexts --ipv4 --ipv6 --packet --tcp --mptcp --sctp --udp --dccp --raw"
    " --unix --tipc --vsock --xdp --family= --no-header --oneline --inet-sockopt --query="
    " --socket=",
    abbrev=False,
)
_SS_WORDS = frozenset(
    "state exclude dst src dport sport and or not ! eq neq ne gt lt ge le = == != < > <= >= "
    "all connected synchronized bucket big established syn-sent syn-recv fin-wait-1 "
    "fin-wait-2 time-wait closed close-wait last-ack listening listen closing".split()
)
_SS_ADDRESS = re.compile(r"^(\*|\[[0-9a-fA-F:.*]+\]|[0-9.*]+)?(/\d+)?(:(\d+|\*))?$")


def check_ss(verb: str, args: Sequence[Word]) -> None:
    """ss: no -r (resolve), -K (kill), -E (forever), -D/-F (files), -N (namespace switch);
    filters made of keywords and numeric addresses only (a host name would be resolved)."""
    parsed = parse(verb, args, _SS)
    for word in parsed.operands:
        text = word.text
        if word.glob or not (text.lower() in _SS_WORDS or _SS_ADDRESS.match(text)):
            raise Refuse("ss filters may only use keywords and numeric addresses (no host names)")


_NETSTAT = spec(
    "rigsMvWnNepolaFCZtuUSx46A: --route --interfaces --groups --statistics --masquerade"
    " --verbose --wide --numeric --numeric-hosts --numeric-ports --numeric-users --symbolic"
    " --extend --programs --timers --listening --all --fib --cache --context --tcp --udp"
    " --udplite --sctp --unix" + _HV,
)  # no -w/--raw: BSD netstat -w N repeats every N seconds


def check_netstat(verb: str, args: Sequence[Word]) -> None:
    """netstat: no -c (continuous), and -n unless only interfaces or statistics are shown."""
    parsed = parse(verb, args, _NETSTAT)
    if parsed.operands:
        raise Refuse("netstat takes no operands")
    numeric = parsed.has("-n", "--numeric", "--numeric-hosts")
    addressless = parsed.has("-i", "--interfaces", "-s", "--statistics", "--help", "--version")
    if not (numeric or addressless):
        raise Refuse("netstat without -n resolves host names: add -n")


_HOSTNAME = spec("sIVh --short --all-ip-addresses" + _HV, abbrev=False)


def check_hostname(verb: str, args: Sequence[Word]) -> None:
    """Only the local name (``-s`` cuts it, ``-I`` lists interface addresses numerically).

    ``-f -A -a -d -i -y`` ask the resolver; an operand, ``-F`` or ``-b`` set the host name.
    """
    parsed = parse(verb, args, _HOSTNAME)
    if parsed.operands:
        raise Refuse("hostname NAME sets the host name")


# --------------------------------------------------------------------------------------------
# docker
# --------------------------------------------------------------------------------------------

_FMT = " --format= "
_LS = spec("aqslf:n: --all --quiet --size --filter= --no-trunc --last= --latest" + _FMT,
           abbrev=False)  # fmt: skip
_IMAGES = spec("aqf: --all --digests --filter= --no-trunc --quiet --tree" + _FMT, abbrev=False)
_LOGS = spec("tn: --details --since= --tail= --timestamps --until=", abbrev=False)
_STATS = spec("a --all --no-stream --no-trunc" + _FMT, abbrev=False)
_FORMAT_ONLY = spec("f:" + _FMT, abbrev=False)
_BARE = spec("", abbrev=False)
_HISTORY = spec("Hq --human=? --no-trunc --quiet" + _FMT, abbrev=False)
_NET_LS = spec("qf: --filter= --no-trunc --quiet" + _FMT, abbrev=False)
_VOL_LS = spec("qf: --filter= --quiet --cluster" + _FMT, abbrev=False)
_INSPECT = spec("vf: --verbose" + _FMT, abbrev=False)
_CTX = spec("q --quiet" + _FMT, abbrev=False)
_DF = spec("v --verbose" + _FMT, abbrev=False)
_COMPOSE_PS = spec("aq --all --quiet --services --status= --filter= --no-trunc --orphans"
                   + _FMT, abbrev=False)  # fmt: skip
_COMPOSE_LOGS = spec("tn: --no-color --no-log-prefix --since= --tail= --timestamps --until=",
                     abbrev=False)  # fmt: skip
_COMPOSE_LS = spec("aq --all --quiet --filter=" + _FMT, abbrev=False)

#: (subcommand, sub-subcommand) -> (options, most operands). ``inspect`` of containers and
#: images is absent: it prints the container's ``Env`` (and the image's baked-in one).
DOCKER: dict[tuple[str, str], tuple[Spec, int | None]] = {
    ("ps", ""): (_LS, 0),
    ("container", "ls"): (_LS, 0),
    ("container", "list"): (_LS, 0),
    ("images", ""): (_IMAGES, 1),
    ("image", "ls"): (_IMAGES, 1),
    ("image", "list"): (_IMAGES, 1),
    ("logs", ""): (_LOGS, 1),
    ("container", "logs"): (_LOGS, 1),
    ("stats", ""): (_STATS, None),
    ("container", "stats"): (_STATS, None),
    ("version", ""): (_FORMAT_ONLY, 0),
    ("info", ""): (_FORMAT_ONLY, 0),
    ("system", "info"): (_FORMAT_ONLY, 0),
    ("system", "df"): (_DF, 0),
    ("port", ""): (_BARE, 2),
    ("container", "port"): (_BARE, 2),
    ("top", ""): (_BARE, 1),  # extra operands are ps options (`docker top web e`)
    ("container", "top"): (_BARE, 1),
    ("diff", ""): (_BARE, 1),
    ("container", "diff"): (_BARE, 1),
    ("history", ""): (_HISTORY, 1),
    ("image", "history"): (_HISTORY, 1),
    ("network", "ls"): (_NET_LS, 0),
    ("network", "list"): (_NET_LS, 0),
    ("network", "inspect"): (_INSPECT, None),
    ("volume", "ls"): (_VOL_LS, 0),
    ("volume", "list"): (_VOL_LS, 0),
    ("volume", "inspect"): (_FORMAT_ONLY, None),
    ("context", "ls"): (_CTX, 0),
    ("context", "list"): (_CTX, 0),
    ("context", "show"): (_BARE, 0),
    ("compose", "ps"): (_COMPOSE_PS, None),
    ("compose", "ls"): (_COMPOSE_LS, 0),
    ("compose", "images"): (_CTX, None),
    ("compose", "top"): (_BARE, None),
    ("compose", "logs"): (_COMPOSE_LOGS, None),
}
_GROUPS = frozenset(sub for sub, subsub in DOCKER if subsub)


def check_docker(verb: str, args: Sequence[Word]) -> None:
    """docker: listing subcommands only; no global options (``-H``/``--host``/``--context``/
    ``--config``/``--tls*`` would point the client at another daemon or credentials)."""
    texts = [w.text for w in args]
    if texts in (["--version"], ["-v"]):
        return
    if not args or args[0].text.startswith("-"):
        raise Refuse("docker: global options (-H, --context, --config, --tls...) are refused")
    if any(w.glob for w in args[:2]):
        raise Refuse("docker: a glob as a subcommand is refused")
    sub, rest = args[0].text, list(args[1:])
    subsub = ""
    if sub in _GROUPS:
        if not rest or rest[0].text.startswith("-"):
            raise Refuse(f"docker {sub} needs a read-only subcommand (ls, ...)")
        subsub, rest = rest[0].text, rest[1:]
    entry = DOCKER.get((sub, subsub))
    if entry is None:
        what = f"{sub} {subsub}".strip()
        why = "prints the container's environment" if "inspect" in what else "is not read-only"
        raise Refuse(f"docker {what[:40]} {why}")
    rules, most = entry
    parsed = parse(f"docker {sub}", rest, rules)
    if (subsub or sub) == "stats" and not parsed.has("--no-stream"):
        raise Refuse("docker stats never returns without --no-stream")
    if any(w.lead_glob for w in parsed.operands):
        raise Refuse("docker: a glob starting with a wildcard could expand to an option")
    if most is not None and len(parsed.operands) > most:
        what = f"{sub} {subsub}".strip()
        raise Refuse(f"docker {what}: too many operands")


_WHO_TOOL = SYSTEM_TOOLS["who"]


def check_system_tool(verb: str, args: Sequence[Word]) -> None:
    """pgrep, pstree, w (and who via :func:`check_who`): the generic allow-list check."""
    if verb == "who":
        check_who(verb, args)
        return
    tool = SYSTEM_TOOLS[verb]
    parsed = parse(verb, args, tool.spec)
    check_operands(verb, tool, parsed.operands, recursive=False)
