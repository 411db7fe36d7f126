"""Files a glance must not read: secrets, the environment of processes, devices that never end.

A glance's output goes straight back to the model, so a read-only command that prints a secret
is as bad as one that writes: ``cat .env``, ``cat /proc/self/environ`` or ``grep KEY
~/.config/flower/.env`` would hand the API key to the model (and to every transcript). This
module answers one question for the words a checker knows to be *read as content*: could this
word name such a file?

Words may be globs, so the comparison is glob against glob: :func:`glob_intersects` decides
whether some file name matches both the word's component (``.en?``, ``*``) and a sensitive
name (``.env``, ``*.pem``). The comparison is case-insensitive (``nocaseglob`` and case-folding
file systems) and lets ``*`` match a leading dot (the session's shell snapshot may carry the
user's ``shopt -s dotglob``). A ``**`` component is judged like ``*`` (one directory level):
with ``globstar`` it may span several, but the last component must still match the last
pattern, and every basename rule applies to the last component wherever it sits.

The limits, stated honestly: symbolic links are not resolved (a link in the workspace that
points at a secret reads as its own harmless name), and a recursive search (``grep -r``,
``rg``) reads every file under the directories it is given, secrets included. Recursive roots
that contain the user's home dotfiles, ``/proc`` or ``/`` are refused (:func:`recursive_reason`);
a ``.env`` inside the workspace is not. flower's output redaction, a separate layer, replaces
known secret values in whatever a glance prints.
"""

from __future__ import annotations

import os
import posixpath
from functools import lru_cache

from .lexer import HOME_MARK, PWD_MARK, Word

__all__ = [
    "content_reason",
    "device_reason",
    "glob_intersects",
    "network_reason",
    "recursive_reason",
]

#: File names that hold secrets wherever they are (fnmatch patterns, compared case-insensitively).
SECRET_NAMES: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".yarnrc.yml",
    ".vault-token",
    ".credentials.json",
    ".claude.json",
    "credentials.tfrc.json",
    ".mcp.json",
    ".htpasswd",
    "credentials",
    "credentials.json",
    "credentials.db",
    "service-account*.json",
    "client_secret*.json",
    "*.tfstate",
    "*.tfstate.backup",
    "*.tfvars",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    ".*_history",
)

#: Directories holding secrets: (the directory's components, the file names inside that are
#: secret). ``"*"`` means every file at any depth.
SECRET_DIRS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    ((".ssh",), ("*",)),
    ((".aws",), ("*",)),
    ((".gnupg",), ("*",)),
    ((".password-store",), ("*",)),
    ((".azure",), ("*",)),
    ((".docker",), ("config.json",)),
    ((".kube",), ("config", "config.*", "*.yaml", "*.yml")),
    ((".config", "flower"), ("*",)),
    ((".claude",), ("settings.json", "settings.local.json")),
    ((".config", "gh"), ("hosts.yml",)),
    ((".config", "gcloud"), ("*",)),
    ((".cargo",), ("credentials", "credentials.toml")),
    ((".gem",), ("credentials",)),
    ((".m2",), ("settings.xml", "settings-security.xml")),
)

#: Inside ``.ssh``: the files that are not private keys.
_SSH_PUBLIC = ("known_hosts", "known_hosts.old", "config", "authorized_keys")

#: ``/proc`` files with nothing secret in them (everything else, ``environ``, ``cmdline``,
#: ``mem``, ``fd/``, ``root/``, ``cwd/`` of any process, is refused).
HARMLESS_PROC = frozenset(
    {"cpuinfo", "meminfo", "loadavg", "version", "uptime", "stat", "partitions", "filesystems",
     "swaps", "diskstats", "vmstat", "cgroups", "mounts"}
)  # fmt: skip

#: ``/dev`` files a read of which ends (``/dev/zero``, ``/dev/urandom`` never do; ``/dev/tty``
#: waits for a human).
HARMLESS_DEV = frozenset({"null", "stdin"})

#: Readable by root only, and then a secret.
SECRET_ABSOLUTE = (("etc", "shadow"), ("etc", "gshadow"), ("etc", "shadow-"), ("etc", "gshadow-"))
#: Directories of mounted secrets (Docker/Kubernetes: service-account tokens, secret files).
SECRET_MOUNTS = (("run", "secrets"), ("var", "run", "secrets"))


# --------------------------------------------------------------------------------------------
# glob against glob
# --------------------------------------------------------------------------------------------

_Tok = tuple[str, str]  # ("*", ""), ("?", ""), ("c", char), ("[", body) / ("!", body)


@lru_cache(maxsize=4096)
def _tokens(pattern: str) -> tuple[_Tok, ...]:
    out: list[_Tok] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c in "*?":
            if not (c == "*" and out and out[-1][0] == "*"):
                out.append((c, ""))
            i += 1
            continue
        if c == "[":
            close = _bracket_end(pattern, i)
            if close > 0:
                body = pattern[i + 1 : close]
                negated = body[:1] in ("!", "^")
                out.append(("!" if negated else "[", body[1:] if negated else body))
                i = close + 1
                continue
        out.append(("c", c))
        i += 1
    return tuple(out)


def _bracket_end(pattern: str, i: int) -> int:
    j = i + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    return pattern.find("]", j)


def _in_class(ch: str, body: str) -> bool:
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            if body[i] <= ch <= body[i + 2]:
                return True
            i += 3
            continue
        if body[i] == ch:
            return True
        i += 1
    return False


def _accepts(tok: _Tok, ch: str) -> bool:
    kind, value = tok
    if kind == "?":
        return True
    if kind == "c":
        return value == ch
    return _in_class(ch, value) != (kind == "!")


def _candidates(a: _Tok, b: _Tok) -> set[str]:
    """Characters that decide whether two one-character tokens can match the same character."""
    chars = {"\x01"}
    for _kind, value in (a, b):
        chars.update(value)
    return chars


def _one_char_overlap(a: _Tok, b: _Tok) -> bool:
    return any(_accepts(a, ch) and _accepts(b, ch) for ch in _candidates(a, b))


@lru_cache(maxsize=8192)
def glob_intersects(a: str, b: str) -> bool:
    """Is there a file name matched by both fnmatch patterns ``a`` and ``b`` (ignoring case)?

    ``meet[i][j]``: the suffixes ``a[i:]`` and ``b[j:]`` match a common string. A ``*`` matches
    the empty string or one more character (any, since components hold no ``/``); filled from
    the ends, so the table is built without recursion whatever the length of the patterns.
    """
    ta, tb = _tokens(a.lower()), _tokens(b.lower())
    n, m = len(ta), len(tb)
    meet = [[False] * (m + 1) for _ in range(n + 1)]
    meet[n][m] = True
    for i in range(n, -1, -1):
        for j in range(m, -1, -1):
            if i == n and j == m:
                continue
            if i < n and ta[i][0] == "*":
                meet[i][j] = meet[i + 1][j] or (j < m and meet[i][j + 1])
            elif j < m and tb[j][0] == "*":
                meet[i][j] = meet[i][j + 1] or (i < n and meet[i + 1][j])
            elif i < n and j < m:
                meet[i][j] = meet[i + 1][j + 1] and _one_char_overlap(ta[i], tb[j])
    return meet[0][0]


# --------------------------------------------------------------------------------------------
# paths
# --------------------------------------------------------------------------------------------


def _split(word: Word) -> tuple[str, list[str], bool]:
    """(root, components, climbs) of a word's pattern: root is "/", "~" or "" (relative).

    ``climbs``: a ``..`` survived normalisation (``../x``, ``~/../..``), so the path may end up
    anywhere; the caller then also judges the components as if they were absolute.
    """
    pattern = word.pattern.replace(PWD_MARK, ".")
    root = ""
    if pattern.startswith(HOME_MARK):
        root, pattern = "~", pattern[len(HOME_MARK) :]
    elif pattern.startswith("~"):  # `~`, `~/x`, `~user/x` (another user's home)
        root, pattern = "~", pattern.partition("/")[2]
    elif pattern.startswith("/"):
        root = "/"
    if root != "/":
        pattern = pattern.lstrip("/")
    if pattern:
        pattern = posixpath.normpath(pattern)
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    climbs = ".." in parts
    return root, [p for p in parts if p != ".."], climbs


#: Realistic names behind the dotted secret patterns. A component starting with a wildcard
#: (``*.log``, ``?env``) only reaches a dotfile when the user's shell has ``dotglob`` on, and
#: then it is compared with these names rather than with the whole pattern: ``*.log`` is not
#: refused because a file called ``.env.log`` could exist, but ``*`` and ``*.local`` are.
DOT_SAMPLES: dict[str, tuple[str, ...]] = {
    ".env.*": (".env.local", ".env.development", ".env.production", ".env.test", ".env.prod",
               ".env.dev", ".env.staging", ".env.example", ".env.sample", ".env.backup"),
    ".*_history": (".bash_history", ".zsh_history", ".python_history", ".psql_history",
                   ".mysql_history", ".node_repl_history", ".sqlite_history"),
}  # fmt: skip

#: What a wildcard-led child component is compared with inside a secret directory reached
#: only through ``dotglob`` (``src/*/*.py`` may walk into ``src/.ssh/``, but only key-like
#: names there are secrets).
DIR_SAMPLES: dict[str, tuple[str, ...]] = {
    ".ssh": ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "identity"),
    ".aws": ("credentials", "config"),
    ".gnupg": ("secring.gpg", "pubring.kbx", "trustdb.gpg", "private-keys-v1.d"),
    ".password-store": (".gpg-id",),
    ".azure": ("accessTokens.json", "msal_token_cache.json", "msal_token_cache.bin"),
    "flower": (".env", "config.toml"),
    "gcloud": ("credentials.db", "access_tokens.db", "application_default_credentials.json"),
    ".docker": ("config.json",),
    ".claude": ("settings.json", "settings.local.json"),
    ".kube": ("config",),
    "gh": ("hosts.yml",),
    ".cargo": ("credentials", "credentials.toml"),
    ".gem": ("credentials",),
    ".m2": ("settings.xml", "settings-security.xml"),
}


def _wild_first(component: str) -> bool:
    return component[:1] in ("*", "?") or (component[:1] == "[" and component[:3] != "[[]")


def _samples_match(component: str, samples: tuple[str, ...]) -> bool:
    return any(glob_intersects(component, sample) for sample in samples)


def matches(component: str, secret: str) -> bool:
    """Could a file matching the word's ``component`` be named like ``secret``?"""
    if secret.startswith(".") and _wild_first(component):
        return _samples_match(component, DOT_SAMPLES.get(secret, (secret,)))
    return glob_intersects(component, secret)


def _secret_name(component: str) -> bool:
    return any(matches(component, name) for name in SECRET_NAMES)


def _ssh_public(component: str) -> bool:
    if component.endswith(".pub"):  # `id_rsa.pub`, `*.pub`: every match is a public key
        return True
    return not any(c in component for c in "*?[") and component in _SSH_PUBLIC


def _child_hit(
    dirs: tuple[str, ...], children: tuple[str, ...], rest: list[str], dotglob: bool
) -> bool:
    if not rest:
        return not dotglob  # the directory itself: diff, grep -r... read what is inside
    if dirs == (".ssh",) and len(rest) == 1 and _ssh_public(rest[0]):
        return False
    if dotglob and _wild_first(rest[-1]):
        return _samples_match(rest[-1], DIR_SAMPLES[dirs[-1]])
    if children == ("*",):
        return True
    return len(rest) == 1 and any(matches(rest[0], c) for c in children)


def _dir_rule_hit(parts: list[str]) -> str | None:
    for dirs, children in SECRET_DIRS:
        k = len(dirs)
        for i in range(len(parts) - k + 1):
            window = parts[i : i + k]
            if not all(map(matches, window, dirs)):
                continue
            dotglob = any(_wild_first(c) for c in window)
            if _child_hit(dirs, children, parts[i + k :], dotglob):
                return "/".join(dirs)
    return None


def _system_reason(root: str, parts: list[str]) -> str | None:
    """``/proc``, ``/dev`` and root-only secrets (absolute paths or ``../`` climbing to them)."""
    if root != "/" or not parts:
        return None
    tail = parts
    head, rest = tail[0], tail[1:]
    if glob_intersects(head, "proc") and not (len(rest) == 1 and rest[0] in HARMLESS_PROC):
        return "/proc holds process environments and memory"
    if glob_intersects(head, "dev") and not (len(rest) == 1 and rest[0] in HARMLESS_DEV):
        return "device files may never end or wait for input"
    for secret in SECRET_ABSOLUTE:
        if len(tail) == len(secret) and all(map(glob_intersects, tail, secret)):
            return f"/{'/'.join(secret)} holds password hashes"
    for mount in SECRET_MOUNTS:
        if len(tail) >= len(mount) and all(map(glob_intersects, tail, mount)):
            return f"/{'/'.join(mount)} holds mounted secrets (service-account tokens)"
    return None


def _xdg_flower(root: str, parts: list[str]) -> bool:
    """flower's user config under ``$XDG_CONFIG_HOME`` when that is set (read at call time)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not base.startswith("/") or root != "/":
        return False
    prefix = [p for p in base.split("/") if p] + ["flower"]
    return len(parts) > len(prefix) and all(map(glob_intersects, parts, prefix))


#: No file name is longer (ext4, APFS, NTFS...); a longer component only costs checking time.
MAX_COMPONENT = 255


def content_reason(word: Word) -> str | None:
    """Why reading ``word`` as a file could print a secret or never end (``None``: fine)."""
    root, parts, climbs = _split(word)
    if any(len(part) > MAX_COMPONENT for part in parts):
        return f"a path component longer than {MAX_COMPONENT} characters"
    reason = _system_reason("/" if climbs else root, parts)
    if reason is not None:
        return reason
    if parts and _secret_name(parts[-1]):
        return f"{_short(word)} may hold secrets"
    hit = _dir_rule_hit(parts)
    if hit is not None or _xdg_flower(root, parts):
        return f"{_short(word)} reaches {hit or 'flower config'}/, which holds secrets"
    return None


#: Automounted network file systems: naming ``/net/HOST`` (macOS mounts it by default, autofs
#: ``-hosts`` on Linux) resolves HOST and mounts from it.
NETWORK_ROOTS = ("net", "network", "afs")


def network_reason(text: str) -> str | None:
    """Why a word (or the value after ``=`` in ``--opt=PATH``) is a network path (or None)."""
    for candidate in (text, text.partition("=")[2]):
        if not candidate.startswith("/"):
            continue
        head = next((p for p in candidate.split("/") if p), "")
        if any(glob_intersects(head, root) for root in NETWORK_ROOTS):
            return f"/{head[:20]}/... is an automounted network path (it resolves and mounts)"
    return None


def device_reason(word: Word) -> str | None:
    """Why *opening* ``word`` may never end (``/dev/zero``, ``/dev/tty``), for tools that read
    without printing (``wc``, ``md5sum``); ``None``: fine."""
    root, parts, climbs = _split(word)
    if (root == "/" or climbs) and parts and glob_intersects(parts[0], "dev"):
        if not (len(parts) == 2 and parts[1] in HARMLESS_DEV):
            return "device files may never end or wait for input"
    return None


_HOME_ROOTS = ("home", "root", "Users")


def recursive_reason(word: Word) -> str | None:
    """Why searching ``word`` recursively would walk into secrets (``None``: fine).

    Refused roots: ``/``, ``/proc``, ``/dev``, anything above a home directory, a home
    directory itself or one of its dotfiles (``~/.config``), and any ``..`` climb (it may
    reach the home directory). A plain project directory may still hold a ``.env``: the
    redaction layer, not this check, covers that.
    """
    root, parts, climbs = _split(word)
    if climbs:
        return "a recursive search above the working directory may reach secrets"
    if root == "~":
        if not parts or parts[0].startswith(".") or word.lead_glob or parts[0][:1] in "*?[":
            return "a recursive search of the home directory or its dotfiles reaches secrets"
        return content_reason(word)
    if root == "/":
        if not parts or parts[0] in ("proc", "dev", "sys") or word.glob:
            return "a recursive search of / , /proc or /dev reaches secrets"
        home = [p for p in os.path.expanduser("~").split("/") if p]
        if parts[0] in _HOME_ROOTS and len(parts) <= 2:
            return "a recursive search of a home directory reaches secrets"
        if len(parts) <= len(home) and parts == home[: len(parts)]:
            return "a recursive search above the home directory reaches secrets"
        if len(parts) > len(home) and parts[: len(home)] == home and parts[len(home)][:1] == ".":
            return "a recursive search of the home directory's dotfiles reaches secrets"
    return content_reason(word)


def _short(word: Word) -> str:
    text = word.text.replace(HOME_MARK, "$HOME").replace(PWD_MARK, "$PWD")
    return text if len(text) <= 60 else text[:57] + "..."
