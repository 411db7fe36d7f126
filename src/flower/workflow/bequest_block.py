"""The bequest: a managed block flower leaves in a project's ``CLAUDE.md`` and ``AGENTS.md``.

A run ends, and the next tool that opens the project is often not flower: Claude Code
reads ``CLAUDE.md``, Codex and most other agents read ``AGENTS.md``. The block tells them
what this project is and what flower left behind, so they do not have to read the run.

Those files belong to the user, so flower owns only the text between two markers, each an
HTML comment alone on its line (whitespace around it tolerated)::

    <!-- flower:bequest:start -->
    <!-- managed by flower: ... -->
    body
    <!-- flower:bequest:end -->

* One start before one end: only the lines between them are replaced; every byte outside
  (undecodable bytes and CRLF line endings included) is kept, and a file whose bytes would
  not change is not written at all.
* Broken or duplicated markers: nothing is deleted or edited, since flower cannot know which
  text is the user's. A fresh block is appended and the warning asks the user to remove the
  stale markers; a file that already ends with that same block is left alone, so repeated
  runs do not grow it.
* A marker inside other text (a sentence, a code span) is not a marker, and a marker line
  in the body is escaped, so no model's text can break the block.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

START = "<!-- flower:bequest:start -->"
END = "<!-- flower:bequest:end -->"
NOTE = (
    "<!-- managed by flower: edits between these markers are replaced when a run ends;"
    " write your own notes outside them -->"
)
NAMES = ("CLAUDE.md", "AGENTS.md")

Action = Literal["created", "replaced", "appended", "unchanged", "failed"]


@dataclass(frozen=True)
class Placement:
    """What :func:`place_block` did to one file; ``warning`` is "" or one line for the user."""

    path: Path
    action: Action
    warning: str = ""


def normalise_body(body: str) -> str:
    """``body`` as it goes inside the block: LF line endings, no trailing whitespace, valid
    UTF-8, any line that would read as a marker escaped (``<!--`` -> ``&lt;!--``), and no
    known secret value (:mod:`flower.kernel.redact`: the body quotes the run's documents)."""
    from flower.kernel.redact import redact

    body = redact(body.encode("utf-8", "replace").decode("utf-8"))
    lines = body.replace("\r\n", "\n").replace("\r", "\n").rstrip().split("\n")
    return "\n".join(
        line.replace("<!--", "&lt;!--", 1) if line.strip() in (START, END) else line
        for line in lines
    )


def place_block(path: Path, body: str) -> Placement:
    """Put the block with ``body`` into ``path`` by the rules in the module docstring.

    A symlink is written through when its target stays in the same folder (``AGENTS.md ->
    CLAUDE.md`` is common); one leading elsewhere raises ``PermissionError`` rather than let
    a planted link carry the write outside the project.
    """
    path = Path(path)
    target = _target(path)
    try:
        raw: bytes | None = target.read_bytes()
    except FileNotFoundError:
        raw = None  # created below; a missing folder raises FileNotFoundError on the write
    text = "" if raw is None else raw.decode("utf-8", "surrogateescape")
    lines = _split(text)
    starts = [i for i, line in enumerate(lines) if line.strip() == START]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    warning = ""
    if len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]:
        head, tail = "".join(lines[: starts[0] + 1]), "".join(lines[ends[0] :])
        # Line endings are judged outside the block only, so a rerun sees the same ones.
        inner = _inner(normalise_body(body), _eol(head + tail))
        new = head + inner + tail
        action: Action = "replaced"
    else:
        eol = _eol(text)
        inner = _inner(normalise_body(body), eol)
        action, warning = "created" if raw is None else "appended", _problem(path, starts, ends)
        if warning and _ends_with_block(lines, starts, ends, inner):
            return Placement(path, "unchanged", warning)
        new = text
        if new and not new.endswith("\n"):
            new += eol
        if new and _split(new)[-1].strip():
            new += eol  # the blank line before the block
        new += START + eol + inner + END + eol
    data = new.encode("utf-8", "surrogateescape")
    if data == raw:
        return Placement(path, "unchanged", warning)
    _write(target, data, None if raw is None else stat.S_IMODE(target.stat().st_mode))
    return Placement(path, action, warning)


def place_everywhere(root: Path, body: str, names: tuple[str, ...] = NAMES) -> list[Placement]:
    """The same block in each of ``names`` under ``root``; a file that cannot be written is
    reported as ``"failed"`` with the error as its warning, and the others are still done."""
    out: list[Placement] = []
    for name in names:
        path = Path(root) / name
        try:
            out.append(place_block(path, body))
        except OSError as exc:
            out.append(Placement(path, "failed", f"{path}: {exc}"))
    return out


def _target(path: Path) -> Path:
    if not path.is_symlink():
        return path
    real = path.resolve()
    if real.parent != path.parent.resolve():
        raise PermissionError(f"{path} is a symlink out of its folder (to {real}); not written")
    return real


def _split(text: str) -> list[str]:
    """Lines ending at ``\\n`` only: ``splitlines`` would also cut at a lone ``\\r``, form
    feeds and other separators that a marker line check must not see as line ends."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _eol(text: str) -> str:
    """``\\r\\n`` when most of the file's line endings are, else ``\\n``."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def _inner(body: str, eol: str) -> str:
    """The lines between the markers, each ending in ``eol``."""
    lines = [NOTE, *body.split("\n")] if body else [NOTE]
    return "".join(line + eol for line in lines)


def _problem(path: Path, starts: list[int], ends: list[int]) -> str:
    """Why the markers in ``path`` cannot be used ("" when there are none at all)."""
    if not starts and not ends:
        return ""
    if len(starts) > 1 or len(ends) > 1:
        what = f"{len(starts)} start and {len(ends)} end markers (duplicated)"
    elif not ends:
        what = "a start marker without an end marker"
    elif not starts:
        what = "an end marker without a start marker"
    else:
        what = "the end marker before the start marker"
    return (
        f"{path} has {what}; flower appended a fresh block at the end and changed nothing"
        f" else: remove the stale {START} / {END} lines"
    )


def _ends_with_block(lines: list[str], starts: list[int], ends: list[int], inner: str) -> bool:
    """Whether the file ends (past trailing whitespace) with a start..end pair holding
    exactly ``inner``, line endings aside: then appending would only repeat it."""
    if not ends or any(line.strip() for line in lines[ends[-1] + 1 :]):
        return False
    before = [i for i in starts if i < ends[-1]]
    if not before or any(before[-1] < i < ends[-1] for i in ends):
        return False
    found = "".join(lines[before[-1] + 1 : ends[-1]])
    return found.replace("\r\n", "\n") == inner.replace("\r\n", "\n")


def _write(path: Path, data: bytes, mode: int | None) -> None:
    """Write ``data`` through a fresh sibling file and ``os.replace``, so no reader sees a
    half-written file. ``workbench.atomic_write`` takes ``str`` and encodes with
    ``surrogatepass``, which would not give back the undecodable bytes kept here. A new
    file gets the umask's mode (``mkstemp`` would make it 0600), an old one keeps its own."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
