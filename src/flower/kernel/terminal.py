"""The one output path of a run: clean, wrap, style, lock, and keep the input line alive.

Everything flower prints while it works goes through :meth:`Terminal.line`, because each
of these must hold for every line or it holds for none:

- nothing from the model or a tool reaches the terminal as an escape sequence
  (:func:`flower.kernel.sanitize.clean`); flower's own styling is added here, after
  cleaning, so text can never smuggle styling or markup in;
- lines are wrapped by display cells (CJK counts two), so the screen layout flower
  assumes is the one the terminal shows;
- two flower processes on one terminal never tear each other's lines: each write holds
  an ``fcntl.flock`` on a lock file named after the output device;
- the input line at the bottom (:class:`flower.ui.reader.InputLine`) and the transient
  status line above it are erased before a line is printed and redrawn after it, in
  the same single write, so typed text survives any amount of output.

Not a terminal (a pipe, a file, CI, ``TERM=dumb``): plain lines, width 100, no colour,
no status line, no prompt.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Protocol

from flower.kernel.redact import redact
from flower.kernel.sanitize import clean, fit, wrap

__all__ = ["Prompt", "Terminal", "default_lock_path"]

#: Cells used on a terminal: never narrower (layouts below it are unreadable anyway),
#: never wider (long lines are hard to read).
MIN_WIDTH, MAX_WIDTH = 40, 110
#: Cells used when the output is not a terminal.
PLAIN_WIDTH = 100

_SGR = {
    "bold": "1",
    "dim": "2",
    "italic": "3",
    "underline": "4",
    "reverse": "7",
    "black": "30",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
    "white": "37",
    "grey": "90",
    "gray": "90",
}
RESET = "\x1b[0m"
#: Erase from the cursor to the end of the screen.
_CLEAR_DOWN = "\x1b[J"


class Prompt(Protocol):
    """What a terminal needs from the input line it keeps alive."""

    def view(self, width: int) -> tuple[str, str, int]:
        """``(prompt, text, cursor)``: clean text fitting ``width`` cells, and the cell
        column of the cursor."""


def default_lock_path(stream: IO[str]) -> Path | None:
    """The lock file shared by every flower process writing to the same device.

    Named after the output's device and inode, so two processes on one terminal (or
    appending to one file) meet on the same lock whatever path they opened it by; per
    user, in ``$XDG_RUNTIME_DIR`` or the temp folder. ``None`` when the stream has no
    file descriptor (an in-memory buffer needs no lock between processes).
    """
    try:
        st = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return None
    base = os.environ.get("XDG_RUNTIME_DIR") or ""
    folder = Path(base) if base and os.path.isdir(base) else Path(tempfile.gettempdir())
    return folder / f"flower-{os.getuid()}-{st.st_dev:x}-{st.st_ino:x}.lock"


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, OSError, ValueError):
        return False


class Terminal:
    """The ONE output path. Everything flower prints in a run goes through it.

    Thread-safe: lines may come from the event loop and the input reader at once.
    """

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        color: bool | None = None,
        lock_path: Path | None = None,
    ) -> None:
        self.stream: IO[str] = stream if stream is not None else sys.stdout
        #: A terminal that can move its cursor: ``TERM=dumb`` (an editor's shell buffer)
        #: gets what a pipe gets.
        self.is_tty = _isatty(self.stream) and os.environ.get("TERM", "") != "dumb"
        if color is None:
            color = self.is_tty and not os.environ.get("NO_COLOR")
        self.color = bool(color)
        self._lock_path = lock_path if lock_path is not None else default_lock_path(self.stream)
        self._lock_fd: int | None = None
        self._lock_opened = False
        self._mutex = threading.RLock()
        self._depth = 0
        self._prompt: Prompt | None = None
        self._status: str | None = None
        self._shown = 0  # transient rows on screen; the cursor rests on the last one
        self._dead = False
        self._styles: dict[str, str] = {}

    # --- size ---------------------------------------------------------------------------

    @property
    def columns(self) -> int:
        """The terminal's real width in cells (``width`` on a non-terminal)."""
        if not self.is_tty:
            return PLAIN_WIDTH
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (AttributeError, OSError, ValueError):
            return 80

    @property
    def width(self) -> int:
        """Cells a line is wrapped to: ``max(40, min(columns, 110))`` on a terminal,
        100 otherwise. Read on every line, so a resized window is followed."""
        if not self.is_tty:
            return PLAIN_WIDTH
        return max(MIN_WIDTH, min(self.columns, MAX_WIDTH))

    # --- output -------------------------------------------------------------------------

    def line(self, text: str, style: str = "", *, indent: int = 0) -> None:
        """Print ``text`` (any length, any origin) as one or more whole rows.

        ``text`` is redacted (:mod:`flower.kernel.redact`), cleaned, wrapped to the width
        (continuation rows keep the ``indent``) and styled with ``style`` (space-separated
        words: ``bold``, ``dim``, ``red``, ``cyan``...; unknown words are ignored, and
        markup inside ``text`` is never interpreted).
        """
        # no known secret on screen (a failed command's output reaches flower unredacted:
        # the CLI lets no hook replace it), then a trailing newline is no extra blank row
        text = clean(redact(text)).rstrip("\n")
        width = self.width
        indent = max(0, min(indent, width // 2))
        pad = " " * indent
        if not text.isascii() or "\t" in text or len(text) > width - indent or "\n" in text:
            rows = wrap(text, width - indent)
        else:
            rows = [text.rstrip()]
        if style and self.color:
            on = self._sgr(style)
            body = "".join(f"{pad}{on}{row}{RESET}\n" if row else "\n" for row in rows)
        else:
            body = "".join(f"{pad}{row}\n" if row else "\n" for row in rows)
        with self._exclusive():
            self._write(self._erase() + body + self._draw())

    def status(self, text: str | None) -> None:
        """Show ``text`` on a transient line above the input line (a countdown), or
        remove it with ``None``. Only on a terminal; cut to one row."""
        if not self.is_tty:
            return
        text = clean(text).replace("\n", " ") if text else None
        with self._exclusive():
            if text == self._status:
                return
            erase = self._erase()
            self._status = text
            self._write(erase + self._draw())

    def attach(self, prompt: Prompt | None) -> None:
        """Keep ``prompt`` (the reader's line) at the bottom: erased before every line,
        redrawn after it. ``None`` removes it from the screen. Ignored off a terminal."""
        if not self.is_tty:
            return
        with self._exclusive():
            erase = self._erase()
            self._prompt = prompt
            self._write(erase + self._draw())

    def refresh(self) -> None:
        """Redraw the status and input lines (the reader calls this after each key)."""
        if not self.is_tty:
            return
        with self._exclusive():
            self._write(self._erase() + self._draw())

    def close(self) -> None:
        """Take the transient lines off the screen and release the lock file."""
        with self._mutex:
            if self.is_tty and self._shown:
                self._status, self._prompt = None, None
                with self._exclusive():
                    self._write(self._erase())
            if self._lock_fd is not None:
                with suppress(OSError):
                    os.close(self._lock_fd)
                self._lock_fd = None

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- painting -----------------------------------------------------------------------

    def _sgr(self, style: str) -> str:
        code = self._styles.get(style)
        if code is None:
            parts = [_SGR[w] for w in style.split() if w in _SGR]
            code = f"\x1b[{';'.join(parts)}m" if parts else ""
            self._styles[style] = code
        return code

    def paint(self, text: str, style: str) -> str:
        """``text`` (already clean) wrapped in ``style``'s colour codes when colour is on."""
        if not style or not self.color:
            return text
        on = self._sgr(style)
        return f"{on}{text}{RESET}" if on else text

    def _erase(self) -> str:
        """Move to the first transient row and clear to the end of the screen."""
        if not self._shown:
            return ""
        up = f"\x1b[{self._shown - 1}A" if self._shown > 1 else ""
        self._shown = 0
        return "\r" + up + _CLEAR_DOWN

    def _draw(self) -> str:
        if not self.is_tty or (self._status is None and self._prompt is None):
            return ""
        room = max(1, self.columns - 1)  # never the last column: no pending wrap
        out = ""
        if self._status is not None:
            out += self.paint(fit(self._status, room), "dim")
            self._shown = 1
        if self._prompt is not None:
            try:
                prompt, text, cursor = self._prompt.view(room)
            except Exception:  # a broken prompt must not stop the output
                prompt, text, cursor = "> ", "", 2
            if self._shown:
                out += "\n"
            out += self.paint(prompt, "bold") + text + "\r"
            if cursor > 0:
                out += f"\x1b[{cursor}C"
            self._shown += 1
        return out

    def _write(self, data: str) -> None:
        if self._dead or not data:
            return
        try:
            buffer = getattr(self.stream, "buffer", None)
            if buffer is not None:
                self.stream.flush()  # what others printed first stays first
                buffer.write(
                    data.encode(getattr(self.stream, "encoding", None) or "utf-8", "replace")
                )
                buffer.flush()
            else:
                self.stream.write(data)
                self.stream.flush()
        except (OSError, ValueError):  # a closed pipe (flower ... | head): stop printing
            self._dead = True

    # --- the cross-process lock ---------------------------------------------------------

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        """This thread, and no other flower process on this device, writes now.

        Re-entrant (a reader callback may print while the reader holds the lock): the
        file lock is taken by the outermost holder only.
        """
        with self._mutex:
            fd = self._lock_file() if self._depth == 0 else None
            if fd is not None:
                try:
                    import fcntl

                    fcntl.flock(fd, fcntl.LOCK_EX)
                except OSError:
                    fd = None
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if fd is not None:
                    import fcntl

                    with suppress(OSError):
                        fcntl.flock(fd, fcntl.LOCK_UN)

    def _lock_file(self) -> int | None:
        if not self._lock_opened:
            self._lock_opened = True
            if self._lock_path is not None:
                flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                flags |= getattr(os, "O_CLOEXEC", 0)
                try:
                    self._lock_fd = os.open(self._lock_path, flags, 0o600)
                except OSError:  # no lock beats no output
                    self._lock_fd = None
        return self._lock_fd
