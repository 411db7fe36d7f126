"""Credential values: know them, and hide them in everything flower writes or hands on.

An agent's accepted tool calls can print the API key (``env``, ``printenv``,
``cat ~/.config/flower/.env``, ``/proc/self/environ``). Without this module the key then
travels on: into the conversation (and the model provider's logs), into the CLI's own
transcript, into flower's session store, into spill files, handoffs and notes. So flower
knows the secret values of the run and replaces each occurrence with a marker naming the
variable, ``[已隐去 ANTHROPIC_API_KEY]``, and the password of a URL's userinfo with
``[已隐去]`` (``https://user:[已隐去]@host``).

Which values are secrets (:func:`collect`):

- every variable of the process environment whose name says so: the credential keys of
  :data:`flower.kernel.env.CREDENTIAL_KEYS` and any name containing KEY, TOKEN, SECRET,
  PASSWORD, PASSWD, CREDENTIAL or AUTH (``AWS_SECRET_ACCESS_KEY``, ``GITHUB_TOKEN``),
  minus names that only look like it (``GIT_AUTHOR_NAME``, ``SSH_AUTH_SOCK``);
- the same names in flower's ``.env`` files (:func:`flower.kernel.env.env_files`): a value
  there may differ from the one in the environment and still be a live key;
- the ``env`` of every session flower built (:func:`watch`), which the CLI gets on top of
  the process environment;
- the password of any URL-valued variable with userinfo.

Values shorter than 8 characters are ignored (they would redact ordinary words), and so
are obvious non-secrets: numbers, ``true``/``false`` and the like, URLs without userinfo,
paths that exist.

Where it is applied: the PostToolUse hook :func:`redact_guard` (every tool, main thread
and subagents: the key never enters the conversation), ``spill_guard`` (the spilled file
and the head left in the conversation), :func:`flower.records.workbench.atomic_write` (every
document flower writes), the trim spill, and the session store's append.

The set is cached (:func:`current`) and collected again only when what it is made of
changes: the environment, the working folder, a ``.env`` file's size or time, or a newly
watched session. Checking that costs a few microseconds a call; collecting (parsing the
``.env`` files) happens once per change, e.g. after ``flower setup`` saves a key.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from flower.kernel.env import CREDENTIAL_KEYS, env_files, parse_env_file

if TYPE_CHECKING:
    from claude_agent_sdk import HookMatcher

__all__ = [
    "MARK",
    "MIN_LENGTH",
    "URL_MARKER",
    "Redactor",
    "collect",
    "current",
    "forget_watched",
    "is_secret_name",
    "is_secret_value",
    "marker",
    "redact",
    "redact_guard",
    "watch",
]

#: The word in every marker: flower's model-facing words are Chinese.
MARK = "已隐去"
#: What a URL's password becomes.
URL_MARKER = f"[{MARK}]"
#: Shorter values are not treated as secrets: they would redact ordinary words.
MIN_LENGTH = 8
#: A run of this many characters of a known value is a piece of it (``grep -o``), hidden
#: in tool output like the whole value; values shorter than this plus 4 have no pieces.
FRAGMENT = 12
#: Replacement passes before a pathological set of values (one completing another across
#: a marker's edge) makes the whole string a marker instead.
_PASSES = 4

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
#: Names that match the pattern above and hold no secret: an author's name, a socket or
#: a file's path, a token *count* (``CLAUDE_CODE_MAX_OUTPUT_TOKENS``).
_NOT_SECRET_NAME = re.compile(
    r"AUTHOR|KEYBOARD|KEYMAP|KEYRING_PATH|_(?:SOCK|FILE|PATH|DIR|HOME|TOKENS)$", re.IGNORECASE
)
_PLAIN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://(?P<authority>[^/?#\s]*)")
#: ``scheme://user:password@`` -- the password is what goes. Neither part holds white
#: space, ``/``, ``@`` or the characters that end a URL in JSON, HTML or a shell string
#: (``"``, ``<``, ``>``, a backslash), so a match never runs from one field into the next.
_USERINFO = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s/@:\"<>\\]*:)(?P<password>[^\s/@\"<>\\]+)(?=@)"
)
#: The same, after a ``://`` found by ``str.find`` (checking is a hot path; this is not
#: run at every position of a long text).
_AUTHORITY = re.compile(r"[^\s/@:\"<>\\]*:[^\s/@\"<>\\]+@")
_NAME_CHARS = re.compile(r"[^\w.\-]")


def marker(name: str) -> str:
    """What a secret of variable ``name`` becomes: ``[已隐去 ANTHROPIC_API_KEY]``."""
    return f"[{MARK} {_NAME_CHARS.sub('_', name)}]"


def is_secret_name(name: str) -> bool:
    """Whether a variable of this name holds a secret (by its name alone)."""
    if name in CREDENTIAL_KEYS:
        return True
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET_NAME.search(name)


def is_secret_value(value: str) -> bool:
    """Whether ``value`` (of a secret-named variable) is worth redacting: long enough,
    and not an obvious non-secret (a number, a switch word, a URL without userinfo, a
    path that exists)."""
    if len(value) < MIN_LENGTH or not value.strip():
        return False
    if value.strip().lower() in _PLAIN_WORDS or _NUMBER.fullmatch(value.strip()):
        return False
    url = _URL.match(value)
    if url is not None and url.end() and "@" not in url.group("authority"):
        return False
    if value.startswith(("/", "~")) and "\n" not in value:
        try:
            return not os.path.exists(os.path.expanduser(value))
        except (OSError, ValueError):
            return True
    return True


def _url_password(value: str) -> str | None:
    """The password in a URL value's userinfo, when there is one."""
    found = _USERINFO.search(value)
    return found.group("password") if found else None


@dataclass(frozen=True)
class Redactor:
    """Replace known secret values, and URL passwords, in text and in JSON-like values.

    ``secrets`` maps each value to the variable it came from. Matching is plain substring
    search (``str.__contains__``, then ``str.replace`` for the few that hit), longest
    value first, so a value containing another is replaced whole. Each value is also
    looked for as JSON would escape it, so a JSON document or a stored transcript line
    is covered too.
    """

    secrets: Mapping[str, str] = field(default_factory=dict)
    _needles: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = {name for name in self.secrets.values()}
        marks = [marker(n) for n in names] + [URL_MARKER]
        needles: dict[str, str] = {}
        for value, name in self.secrets.items():
            if len(value) < MIN_LENGTH or MARK in value or any(value in m for m in marks):
                continue  # a value inside a marker would make redaction never settle
            for form in _forms(value):
                needles.setdefault(form, marker(name))
        ordered = sorted(needles.items(), key=lambda item: (-len(item[0]), item[0]))
        object.__setattr__(self, "_needles", tuple(ordered))

    def __len__(self) -> int:
        return len(self._needles)

    @property
    def values(self) -> list[str]:
        """Every string this redactor looks for (each value and its JSON-escaped forms)."""
        return [needle for needle, _ in self._needles]

    def holds(self, text: str) -> bool:
        """Whether :meth:`redact` would change ``text`` (cheap: substring checks)."""
        if any(needle in text for needle, _ in self._needles):
            return True
        return _has_userinfo(text)

    def redact(self, text: str) -> str:
        """``text`` with every known value replaced by its marker and every URL password
        by ``[已隐去]``; the same object when nothing changed.

        Repeated to a fixed point, so the result is idempotent and holds no known value
        even when a replacement completes one across a marker's edge; a set of values
        that keeps re-forming (only contrived ones do) makes the whole string a marker.
        """
        out = text
        for _ in range(_PASSES):
            new = self._once(out)
            if new == out:
                break
            out = new
        else:
            if self._once(out) != out:
                return URL_MARKER
        return text if out == text else out

    def _once(self, text: str) -> str:
        """One pass: each value that occurs, longest first, then the URL passwords."""
        out = text
        for needle, mark in self._needles:
            if needle in out:
                out = out.replace(needle, mark)
        if _has_userinfo(out):
            out = _USERINFO.sub(_hide_password, out)
        return out

    def redact_fragments(self, text: str) -> str:
        r"""``text`` with every run of :data:`FRAGMENT` or more characters of a known value
        replaced by that value's marker: what ``grep -o 'KEY=.\{20\}'`` or ``cut -c``
        print of a key is a piece of it, which whole-value matching never sees. For tool
        output only (a model asked for it); the same object when nothing changed.

        Each piece is looked for with ``str.find`` (C speed): a few milliseconds for a
        100 KB output and a handful of keys."""
        pieces = self._fragments()
        if not pieces or len(text) < FRAGMENT:
            return text
        found: list[tuple[int, int, str]] = []
        for piece, mark in pieces.items():  # str.find runs at C speed; pieces are few
            at = text.find(piece)
            while at >= 0:
                found.append((at, at + FRAGMENT, mark))
                at = text.find(piece, at + 1)
        spans: list[tuple[int, int, str]] = []
        for start, end, mark in sorted(found):  # overlapping pieces: one run
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(end, spans[-1][1]), spans[-1][2])
            else:
                spans.append((start, end, mark))
        if not spans:
            return text
        out, at = [], 0
        for start, end, mark in spans:
            out += [text[at:start], mark]
            at = end
        out.append(text[at:])
        return "".join(out)

    def _fragments(self) -> dict[str, str]:
        """Every :data:`FRAGMENT`-character piece of every value long enough to have
        pieces, with its value's marker (cached)."""
        cached = getattr(self, "_pieces", None)
        if cached is not None:
            return cached  # type: ignore[no-any-return]
        pieces: dict[str, str] = {}
        for value, name in self.secrets.items():
            if len(value) < FRAGMENT + 4 or MARK in value:
                continue
            for i in range(len(value) - FRAGMENT + 1):
                pieces.setdefault(value[i : i + FRAGMENT], marker(name))
        object.__setattr__(self, "_pieces", pieces)
        return pieces

    def tool_value(self, value: Any) -> Any:
        """A tool's output redacted whole (:meth:`redact_value`) and in pieces
        (:meth:`redact_fragments`), its structure kept."""
        clean = self.redact_value(value)
        return _map_strings(clean, self.redact_fragments)

    def redact_value(self, value: Any, keep: frozenset[str] = frozenset()) -> Any:
        """``value`` with every string inside it redacted; the structure is kept (dicts
        stay dicts with the same keys, lists keep their length) and the very same object
        comes back when nothing changed. Keys are never changed; the values of keys in
        ``keep`` (ids that link transcript lines) are left alone."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            out: dict[Any, Any] | None = None
            for key, item in value.items():
                if key in keep:
                    continue
                new = self.redact_value(item, keep)
                if new is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = new
            return value if out is None else out
        if isinstance(value, list):
            changed = [self.redact_value(item, keep) for item in value]
            if all(new is old for new, old in zip(changed, value, strict=True)):
                return value
            return changed
        return value


def _map_strings(value: Any, change: Any) -> Any:
    """``value`` with ``change`` applied to every string inside it; the same object back
    where nothing changed (dicts keep their keys, lists their length)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        out = {k: _map_strings(v, change) for k, v in value.items()}
        return value if all(out[k] is v for k, v in value.items()) else out
    if isinstance(value, list):
        items = [_map_strings(v, change) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def _forms(value: str) -> list[str]:
    """``value`` and its JSON-escaped forms (ASCII-escaped and not), without repeats."""
    forms = [value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
    return list(dict.fromkeys(f for f in forms if len(f) >= MIN_LENGTH))


def _has_userinfo(text: str) -> bool:
    """Whether ``text`` has a URL with a password; looks only after each ``://``."""
    if "@" not in text:
        return False
    at = text.find("://")
    while at != -1:
        if _AUTHORITY.match(text, at + 3):
            return True
        at = text.find("://", at + 3)
    return False


def _hide_password(found: re.Match[str]) -> str:
    return found.group("head") + URL_MARKER


# --- collecting ------------------------------------------------------------------------


def collect(
    environ: Mapping[str, str] | None = None,
    *,
    workspaces: Iterable[str | Path] = (),
    extra: Mapping[str, str] | Iterable[tuple[str, str]] = (),
) -> dict[str, str]:
    """The secret values flower knows, ``{value: variable name}``.

    From ``environ`` (default the process environment), then ``extra`` (a session's own
    ``env``: a mapping or ``(name, value)`` pairs), then the ``.env`` files flower reads
    for each of ``workspaces`` (and for no workspace: ``$FLOWER_ENV``, ``./.env``, the
    user config). The first name seen for a value names it. An unreadable ``.env`` is
    skipped.
    """
    environ = os.environ if environ is None else environ
    found: dict[str, str] = {}
    _add_all(found, environ.items())
    _add_all(found, extra.items() if isinstance(extra, Mapping) else extra)
    for path in _env_paths(environ, workspaces):
        try:
            values = parse_env_file(path)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        _add_all(found, values.items())
    return found


def _add_all(found: dict[str, str], items: Iterable[tuple[str, str]]) -> None:
    for name, value in items:
        if not isinstance(value, str):
            continue
        if is_secret_name(name):
            for form in dict.fromkeys((value, value.strip())):
                if is_secret_value(form):
                    found.setdefault(form, name)
        password = _url_password(value) if "://" in value and "@" in value else None
        if password is not None and is_secret_value(password):
            found.setdefault(password, name)


def _env_paths(environ: Mapping[str, str], workspaces: Iterable[str | Path]) -> list[Path]:
    """Every ``.env`` file flower would read, for any of ``workspaces`` or none."""
    paths: dict[str, Path] = {}
    for ws in (None, *workspaces):
        try:
            for _label, path in env_files(ws, environ):
                paths.setdefault(str(path.absolute()), path)
        except OSError:  # no current folder
            continue
    return list(paths.values())


# --- the process-wide set ---------------------------------------------------------------


@dataclass
class _State:
    env: dict[Any, Any]
    cwd: str
    version: int
    paths: list[Path]
    stats: tuple[tuple[int, int] | None, ...]
    redactor: Redactor


_lock = threading.Lock()
_watched: dict[str, str] = {}  # value -> name, from sessions' env
_workspaces: dict[str, None] = {}  # ordered set of workspace folders
_version = 0
_state: _State | None = None


def watch(*, env: Mapping[str, str] | None = None, workspace: str | Path | None = None) -> None:
    """Make :func:`current` know a session's ``env`` and a workspace's ``.env``.

    What is watched stays known for the life of the process: a value that was a secret
    once is still one when printed by a later run.
    """
    global _version
    new: dict[str, str] = {}
    if env:
        _add_all(new, env.items())
    folder = str(Path(workspace).expanduser().absolute()) if workspace is not None else None
    with _lock:
        grew = False
        for value, name in new.items():
            if value not in _watched:
                _watched[value] = name
                grew = True
        if folder is not None and folder not in _workspaces:
            _workspaces[folder] = None
            grew = True
        if grew:
            _version += 1


def forget_watched() -> None:
    """Drop what :func:`watch` added (for tests that must not leak decoys into others)."""
    global _version, _state
    with _lock:
        _watched.clear()
        _workspaces.clear()
        _version += 1
        _state = None


def current() -> Redactor:
    """The redactor for what flower knows now, collected again only after a change.

    A change is: another process environment, another current folder (``./.env``),
    another size or time of one of the ``.env`` files, or a newly watched session.
    """
    global _state
    env = _environ_data()
    cwd = _cwd()
    state = _state
    if state is not None and state.version == _version and state.cwd == cwd and state.env == env:
        if _stats(state.paths) == state.stats:
            return state.redactor
    with _lock:
        version, watched, workspaces = _version, dict(_watched), list(_workspaces)
    snapshot = dict(env)
    paths = _env_paths(os.environ, workspaces)
    stats = _stats(paths)
    pairs = [(name, value) for value, name in watched.items()]
    redactor = Redactor(collect(os.environ, workspaces=workspaces, extra=pairs))
    _state = _State(snapshot, cwd, version, paths, stats, redactor)
    return redactor


def redact(text: str) -> str:
    """``text`` redacted with :func:`current`."""
    return current().redact(text)


def _environ_data() -> Mapping[Any, Any]:
    """The process environment as cheaply comparable as possible: CPython keeps it as a
    dict of bytes (``os.environ._data``); comparing that costs about a microsecond."""
    data = getattr(os.environ, "_data", None)
    return data if isinstance(data, dict) else dict(os.environ)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return ""


def _stats(paths: list[Path]) -> tuple[tuple[int, int] | None, ...]:
    out: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_mtime_ns, st.st_size))
    return tuple(out)


# --- the hook ---------------------------------------------------------------------------


def redact_guard(*, skip: str = "") -> HookMatcher:
    """A PostToolUse hook that hides secret values in every tool's output.

    Every string field of the result is redacted in place, so the result keeps the
    tool's own structure (the CLI ignores an ``updatedToolOutput`` of another shape).
    Main thread and subagents alike.

    ``skip`` names tools (``"Bash|Read"``) whose output another hook already redacts and
    replaces: ``spill_guard`` does, for the tools it spills. Measured with the bundled
    CLI: when two PostToolUse hooks of one tool both return ``updatedToolOutput``, the
    last one wins and each saw the original output (they do not chain); when only one
    returns an update and the other ``{}``, the update holds, in either order. So for any
    one call exactly one of the two may answer.

    The CLI gives a *failed* tool (a Bash exit code other than 0) no way to replace its
    output (PostToolUseFailure takes only ``additionalContext``): that text reaches the
    model as it is, and only what flower writes (store, files) is redacted.
    """
    from claude_agent_sdk import HookMatcher

    skipped = frozenset(name for name in skip.split("|") if name)

    async def redact_output(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if data.get("tool_name") in skipped or "tool_response" not in data:
            return {}
        response = data.get("tool_response")
        try:
            clean = current().tool_value(response)
        except Exception as exc:  # a broken redactor must not fail the tool
            print(f"flower: could not redact a tool result: {exc!r}", file=sys.stderr)
            return {}
        if clean is response:
            return {}
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": clean}}

    return HookMatcher(matcher=None, hooks=[cast(Any, redact_output)])
