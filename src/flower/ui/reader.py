"""The input line at the bottom of a run, and the same editor for one-off questions.

While a run works the human can always type: an answer to the pending question, a
remark for the agent, a side question. :class:`InputLine` reads the terminal byte by
byte in a thread, edits a line (UTF-8, CJK-width aware, Left/Right/Home/End, Backspace,
Ctrl-U, Ctrl-W; a bracketed paste of several lines is one line) and keeps it drawn at
the bottom through
:class:`flower.kernel.terminal.Terminal`, which redraws it after every printed line.

The terminal is put in a raw-ish mode: no line discipline (ICANON), no echo (flower
draws the line itself), and no signals (ISIG). The last one is the point: with ISIG on,
Ctrl-C makes the terminal send SIGINT to the whole foreground process group, and the
bundled Claude Code CLI, flower's child in that group, dies mid-turn with the words
the human wanted to say. With ISIG off Ctrl-C is just the byte ``\\x03`` and flower
decides what it means (``on_interrupt``). Output processing (OPOST) stays on, so
``\\n`` still starts a new row. The previous mode is restored on :meth:`InputLine.stop`,
at interpreter exit, and when the ``with`` block is left by an exception.

:func:`ask_line` is the blocking, thread-less form for a question outside a run (the
wake prompt, setup), with the same keys.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import os
import selectors
import sys
import threading
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from flower.kernel.sanitize import cells, clean, fit, graphemes
from flower.kernel.terminal import Terminal

__all__ = ["InputLine", "ask_line"]

#: Control keys (after ISIG/ICANON are off these arrive as bytes).
_CTRL = {
    "\x01": "home",  # Ctrl-A
    "\x02": "left",  # Ctrl-B
    "\x03": "interrupt",  # Ctrl-C
    "\x04": "eof",  # Ctrl-D
    "\x05": "end",  # Ctrl-E
    "\x06": "right",  # Ctrl-F
    "\x08": "backspace",  # Ctrl-H
    "\x0b": "kill_end",  # Ctrl-K
    "\x0a": "enter",
    "\x0d": "enter",
    "\x15": "kill_line",  # Ctrl-U
    "\x17": "kill_word",  # Ctrl-W
    "\x7f": "backspace",
}
#: Final bytes / parameters of the cursor keys' escape sequences (CSI and SS3 forms).
_CSI_KEYS = {
    "D": "left",
    "C": "right",
    "H": "home",
    "F": "end",
    "1~": "home",
    "7~": "home",
    "4~": "end",
    "8~": "end",
    "3~": "delete",
    "200~": "paste_start",  # bracketed paste (enabled while the line is read)
    "201~": "paste_end",
}
#: Ask the terminal to mark pasted text, and stop asking.
PASTE_ON, PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"


class _Keys:
    """Bytes in, key actions out; holds partial UTF-8 and escape sequences across reads.

    Every escape sequence is consumed whole; the cursor keys become actions, the
    bracketed-paste marks switch paste mode (newlines pasted are spaces, not Enters), and
    the rest (F-keys, Alt-x, mouse reports) are swallowed, never inserted as text.
    """

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._esc = ""  # an escape sequence in progress
        self._cr = False  # the last key was \r: a \n right after it is the same Enter
        self._paste = False  # inside a bracketed paste: newlines are text, not Enter

    def feed(self, data: bytes) -> Iterator[tuple[str, str]]:
        text: list[str] = []
        for ch in self._utf8.decode(data):
            if self._esc:
                done = self._escape(ch)
                if done in ("paste_start", "paste_end"):
                    self._paste = done == "paste_start"
                elif done:
                    yield from self._flush(text)
                    yield done, ""
                continue
            if ch == "\x1b":
                self._esc = ch
                continue
            cr, self._cr = self._cr, ch == "\r"
            if ch == "\n" and cr:  # \r\n is one line end
                continue
            if self._paste:  # one pasted paragraph is one line: never a run of Enters
                if ch in "\r\n\t":
                    text.append(" ")
                elif ch >= " " and not ("\x7f" <= ch <= "\x9f"):
                    text.append(ch)
                continue
            action = _CTRL.get(ch)
            if action is not None:
                yield from self._flush(text)
                yield action, ""
            elif ch >= " " and not ("\x7f" <= ch <= "\x9f"):
                text.append(ch)
            # any other control character is ignored
        yield from self._flush(text)

    @staticmethod
    def _flush(text: list[str]) -> Iterator[tuple[str, str]]:
        if text:
            yield "text", "".join(text)
            text.clear()

    def _escape(self, ch: str) -> str | None:
        """Add ``ch`` to the sequence in progress; ``None`` while it goes on, then the
        action (``""`` for a swallowed sequence)."""
        seq = self._esc + ch
        if len(seq) == 2:
            if ch in "[O":
                self._esc = seq
                return None
            self._esc = ""  # ESC x (Alt-x) or a lone ESC before a key: swallowed
            return ""
        if "\x30" <= ch <= "\x3f" or "\x20" <= ch <= "\x2f":  # parameters, intermediates
            if len(seq) > 32:  # not a key: give up on it
                self._esc = ""
                return ""
            self._esc = seq
            return None
        self._esc = ""
        return _CSI_KEYS.get(seq[2:], "")


class _Editor:
    """A line of clusters (a letter with its accents is one cluster) and a cursor."""

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.pos = 0

    @property
    def text(self) -> str:
        return "".join(self.chars)

    def apply(self, action: str, arg: str = "") -> None:
        chars, pos = self.chars, self.pos
        if action == "text":
            for cluster, size in graphemes(arg):
                if size == 0 and pos > 0:  # a combining mark joins the letter before it
                    chars[pos - 1] += cluster
                else:
                    chars.insert(pos, cluster)
                    pos += 1
        elif action == "backspace" and pos > 0:
            del chars[pos - 1]
            pos -= 1
        elif action == "delete" and pos < len(chars):
            del chars[pos]
        elif action == "left":
            pos = max(0, pos - 1)
        elif action == "right":
            pos = min(len(chars), pos + 1)
        elif action == "home":
            pos = 0
        elif action == "end":
            pos = len(chars)
        elif action == "kill_line":
            chars.clear()
            pos = 0
        elif action == "kill_end":
            del chars[pos:]
        elif action == "kill_word":
            start = pos
            while start > 0 and chars[start - 1].isspace():
                start -= 1
            while start > 0 and not chars[start - 1].isspace():
                start -= 1
            del chars[start:pos]
            pos = start
        self.pos = pos

    def take(self) -> str:
        text = self.text
        self.chars, self.pos = [], 0
        return text

    def view(self, prompt: str, width: int) -> tuple[str, str, int]:
        """The visible part: scrolled sideways so the cursor is always on screen."""
        if cells(prompt) > width // 2:
            prompt = fit(prompt, width // 2)
        room = max(1, width - cells(prompt))
        sizes = [cells(c) for c in self.chars]
        start = 0
        before = sum(sizes[: self.pos])
        while before > room - 1 and start < self.pos:  # keep one cell for the cursor
            before -= sizes[start]
            start += 1
        shown, used = [], 0
        for cluster, size in zip(self.chars[start:], sizes[start:], strict=True):
            if used + size > room:
                break
            shown.append(cluster)
            used += size
        return prompt, "".join(shown), cells(prompt) + before


class _RawMode:
    """The terminal's mode saved and changed once, restored exactly once."""

    def __init__(self, fd: int, terminal: Terminal) -> None:
        import termios

        self.fd = fd
        self.terminal = terminal
        try:
            self.saved: list[Any] | None = termios.tcgetattr(fd)
            mode = termios.tcgetattr(fd)
            mode[0] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON)
            mode[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG | termios.IEXTEN)
            mode[6][termios.VMIN] = 1
            mode[6][termios.VTIME] = 0
            termios.tcsetattr(fd, termios.TCSANOW, mode)
        except termios.error as exc:
            raise OSError(*exc.args) from None
        atexit.register(self.restore)
        with terminal._exclusive():
            terminal._write(PASTE_ON)

    def restore(self) -> None:
        import termios

        saved, self.saved = self.saved, None
        if saved is None:
            return
        atexit.unregister(self.restore)
        with self.terminal._exclusive():
            self.terminal._write(PASTE_OFF)
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)


def _stdin_fd() -> int | None:
    try:
        fd = sys.stdin.fileno() if sys.stdin is not None else None
    except (AttributeError, OSError, ValueError):
        return None
    return fd if fd is not None and os.isatty(fd) else None


class InputLine:
    """The bottom input line of a run: a reader thread and a small line editor.

    ``on_line(text)`` gets each line the human enters (the typed text, possibly empty)
    and ``on_interrupt()`` gets Ctrl-C, and Ctrl-D on an empty line. Both are called
    in the reader thread: hop to the event loop yourself
    (``loop.call_soon_threadsafe``). An exception from either is printed, never fatal.

    Only on a terminal (stdin and the output both): elsewhere :meth:`start` does
    nothing and ``active`` stays false, and the caller reads no keys.
    """

    def __init__(
        self,
        terminal: Terminal,
        *,
        on_line: Callable[[str], None],
        on_interrupt: Callable[[], None],
        prompt: str = "> ",
    ) -> None:
        self.terminal = terminal
        self.on_line = on_line
        self.on_interrupt = on_interrupt
        self._prompt = clean(prompt).replace("\n", " ")
        self._editor = _Editor()
        self._keys = _Keys()
        self._raw: _RawMode | None = None
        self._thread: threading.Thread | None = None
        self._wake: tuple[int, int] | None = None
        self._fd: int | None = None

    # --- what is shown ------------------------------------------------------------------

    @property
    def prompt(self) -> str:
        return self._prompt

    @prompt.setter
    def prompt(self, value: str) -> None:
        """E.g. ``"answer 1-3 > "`` while a question waits; redrawn at once."""
        self._prompt = clean(value).replace("\n", " ")
        self.redraw()

    @property
    def text(self) -> str:
        """What is typed so far."""
        return self._editor.text

    @property
    def active(self) -> bool:
        """True between a :meth:`start` that found a terminal and :meth:`stop`."""
        return self._raw is not None

    def view(self, width: int) -> tuple[str, str, int]:
        """For :class:`Terminal`: the prompt, the visible text and the cursor column."""
        return self._editor.view(self._prompt, width)

    def redraw(self) -> None:
        """Draw the line again (after the prompt or the text changed)."""
        if self.active:
            self.terminal.refresh()

    def erase(self) -> None:
        """Take the line off the screen until the next :meth:`start`."""
        self.terminal.attach(None)

    # --- life -----------------------------------------------------------------------------

    def start(self) -> None:
        """Switch the terminal to raw-ish mode, draw the line, start reading keys."""
        if self.active or not self.terminal.is_tty:
            return
        fd = _stdin_fd()
        if fd is None:
            return
        self._fd = fd
        try:
            self._raw = _RawMode(fd, self.terminal)
        except (OSError, ImportError) as exc:  # e.g. a background job may not set the mode
            self.terminal.line(f"! no input line: {exc}", "dim")
            return
        try:
            self._wake = os.pipe()
            self.terminal.attach(self)
            self._thread = threading.Thread(target=self._read, name="flower-input", daemon=True)
            self._thread.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop reading, take the line off the screen, restore the terminal's mode."""
        wake, self._wake = self._wake, None
        if wake is not None:
            with contextlib.suppress(OSError):
                os.write(wake[1], b"x")
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)
        if wake is not None:
            for end in wake:
                with contextlib.suppress(OSError):
                    os.close(end)
        raw, self._raw = self._raw, None
        if raw is not None:
            self.terminal.attach(None)
            raw.restore()

    def __enter__(self) -> InputLine:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- keys -----------------------------------------------------------------------------

    def _read(self) -> None:
        fd, wake = self._fd, self._wake
        if fd is None or wake is None:
            return
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            sel.register(wake[0], selectors.EVENT_READ)
            while self._wake is wake:  # stop() (maybe from a callback here) ends the loop
                try:
                    ready = [key.fd for key, _ in sel.select()]
                except (OSError, ValueError):  # the wake pipe was closed under us
                    return
                if wake[0] in ready:
                    return
                try:
                    data = os.read(fd, 1024)
                except OSError:
                    data = b""
                if not data:  # the terminal hung up
                    self._call(self.on_interrupt)
                    return
                self.feed(data)

    def feed(self, data: bytes) -> None:
        """Apply typed bytes: edit, redraw, and call ``on_line``/``on_interrupt``.

        Called by the reader thread; public so a test or another input source (a
        socket, a replay) can type without a terminal.
        """
        for action, arg in self._keys.feed(data):
            if action == "enter":
                with self.terminal._exclusive():
                    said = self._editor.take()
                    if said.strip():  # what was said stays on screen; a bare Enter does not
                        self.terminal.line(f"{self._prompt}{said}", "dim")
                    else:
                        self.redraw()
                self._call(partial(self.on_line, said))
            elif action == "interrupt" or (action == "eof" and not self._editor.chars):
                with self.terminal._exclusive():
                    self._editor.take()
                    self.redraw()
                self._call(self.on_interrupt)
            else:
                with self.terminal._exclusive():
                    self._editor.apply("delete" if action == "eof" else action, arg)
                    self.redraw()

    def _call(self, callback: Callable[[], None]) -> None:
        try:
            callback()
        except Exception as exc:  # the reader must outlive a broken callback
            self.terminal.line(f"x input handler failed: {type(exc).__name__}: {exc}", "red")


def ask_line(terminal: Terminal, prompt: str = "> ") -> str | None:
    """Ask one line, blocking: the typed text, or ``None`` on Ctrl-C or end of input.

    On a terminal it is the :class:`InputLine` editor without a thread; otherwise (input
    piped in) it reads one line of stdin, showing the prompt only when the output is a
    terminal. Not for use while an :class:`InputLine` is reading.
    """
    fd = _stdin_fd()
    if fd is None or not terminal.is_tty:
        return _read_plain(terminal, prompt, tty_in=fd is not None)
    answer: list[str | None] = []
    editor = InputLine(
        terminal,
        on_line=answer.append,
        on_interrupt=lambda: answer.append(None),
        prompt=prompt,
    )
    try:
        editor._raw = _RawMode(fd, terminal)
    except (OSError, ImportError):  # the mode cannot be set: read it as a plain line
        return _read_plain(terminal, prompt, tty_in=True)
    try:
        terminal.attach(editor)
        while not answer:
            try:
                data = os.read(fd, 1024)
            except InterruptedError:  # pragma: no cover - a signal handler ran
                continue
            if not data:
                answer.append(None)
                break
            editor.feed(data)
    finally:
        editor.stop()
    return answer[0]


def _read_plain(terminal: Terminal, prompt: str, *, tty_in: bool) -> str | None:
    if sys.stdin is None:
        return None
    if terminal.is_tty or tty_in:
        stream = terminal.stream if terminal.is_tty else sys.stderr
        with contextlib.suppress(OSError, ValueError):
            stream.write(clean(prompt))
            stream.flush()
    try:
        line = sys.stdin.readline()
    except (KeyboardInterrupt, OSError, ValueError):
        return None
    if not line:
        return None
    return line.rstrip("\r\n")
