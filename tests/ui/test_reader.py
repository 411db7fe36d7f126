"""The input line in a real pseudo-terminal with real keystrokes (pexpect)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pyte
import pytest

from flower.kernel.terminal import Terminal
from flower.ui.reader import InputLine, _Editor, _Keys
from tests.ptys import default_signals

CHILD = str(Path(__file__).with_name("input_child.py"))
LEFT, RIGHT, HOME, END, DEL = "\x1b[D", "\x1b[C", "\x1b[H", "\x1b[F", "\x1b[3~"


def spawn(mode: str, *, after: str = "", env: dict[str, str] | None = None) -> pexpect.spawn:
    cmd = f"{sys.executable} {CHILD} {mode}" + (f"; {after}" if after else "")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TERM": "xterm", "LANG": "C.UTF-8", **(env or {})}
    return pexpect.spawn(
        "/bin/sh",
        ["-c", cmd],
        env=env,
        dimensions=(24, 80),
        encoding="utf-8",
        timeout=20,
        preexec_fn=default_signals,
    )


@pytest.fixture
def child() -> Iterator[pexpect.spawn]:
    proc = spawn("edit")
    proc.expect("READY active=True")
    yield proc
    proc.close(force=True)


def type_slowly(proc: pexpect.spawn, keys: str, pause: float = 0.02) -> None:
    for key in keys:
        proc.send(key)
        time.sleep(pause)


def test_keys_edit_the_line(child: pexpect.spawn) -> None:
    child.send("hello wrld")
    child.send(LEFT * 3 + "o")  # hello world
    child.send(HOME + ">> " + END + "!")
    child.send("\r")
    child.expect_exact("GOT '>> hello world!'")
    child.send("中文字" + "\x7f" + "符\r")  # Backspace removes a whole wide character
    child.expect_exact("GOT '中文符'")
    child.send("one two three" + "\x17" + "\x17" + "four\r")  # Ctrl-W twice
    child.expect_exact("GOT 'one four'")
    child.send("junk" + "\x15" + "kept\r")  # Ctrl-U clears
    child.expect_exact("GOT 'kept'")
    child.send("ab" + HOME + DEL + "\x1b[15~" + "\x1bOP" + "\x1bx" + "c\r")  # F5, F1, Alt-x
    child.expect_exact("GOT 'cb'")
    child.send("e\u0301" + LEFT + "x\r")  # é is one character for the cursor
    child.expect_exact("GOT 'xe\u0301'")
    child.send("quit\r")
    child.expect_exact("STOPPED")
    child.expect(pexpect.EOF)


def test_ctrl_c_and_ctrl_d_reach_on_interrupt_not_a_signal(child: pexpect.spawn) -> None:
    child.send("half typed")
    child.send("\x03")  # the byte a terminal sends for Ctrl-C
    child.expect_exact("INTERRUPT child=alive")  # no SIGINT to the process group
    child.send("\x03")  # a second Ctrl-C is the caller's to judge: no KeyboardInterrupt
    child.expect_exact("INTERRUPT child=alive")
    child.send("\x04")  # Ctrl-D on an empty line
    child.expect_exact("INTERRUPT")
    child.send("ab" + LEFT + "\x04" + "\r")  # Ctrl-D on a non-empty line deletes forward
    child.expect_exact("GOT 'a'")
    child.send("still alive\r")
    child.expect_exact("GOT 'still alive'")
    child.send("quit\r")
    child.expect_exact("STOPPED")
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.before
    child.close()
    assert child.exitstatus == 0 and child.signalstatus is None


def test_a_paste_is_one_line_and_full_width_marks_arrive_intact(child: pexpect.spawn) -> None:
    assert "\x1b[?2004h" in child.before  # bracketed paste asked for while reading
    child.send("\x1b[200~first line\r\nsecond\tline\x1b[201~" + " ok\r")
    child.expect_exact("GOT 'first line second line ok'")
    child.send("？为什么用 LF\r")  # a full-width question mark (REFERENCE C.2)
    child.expect_exact("GOT '？为什么用 LF'")
    child.send("quit\r")
    child.expect_exact("\x1b[?2004l")  # and turned off again
    child.expect_exact("STOPPED")


def test_the_typed_line_survives_output(child: pexpect.spawn) -> None:
    child.send("noise\r")
    child.expect_exact("GOT 'noise'")
    child.expect("noise 5 ")
    typed = "我想让它用 LF, not CRLF"
    type_slowly(child, typed[:12])
    child.expect("noise 40 ")
    screen = pyte.Screen(80, 24)
    stream = pyte.ByteStream(screen)
    seen = child.before + child.after
    type_slowly(child, typed[12:])
    child.expect("noise 60 ")  # more output after the last key
    seen += child.before + child.after
    child.expect("noise 299 ")  # the noise ends by itself
    seen += child.before + child.after
    child.expect(pexpect.TIMEOUT, timeout=0.5)  # and the redraw after it
    seen += child.before
    assert "\x1b]0;" not in seen and "\x1b[2J" not in seen  # the noise's own escapes
    stream.feed(seen.encode())
    bottom = "".join(screen.buffer[screen.cursor.y][x].data for x in range(80)).rstrip()
    assert bottom == "说 > " + typed
    assert screen.cursor.x == 5 + len(typed) + 5  # 说 and 9 wide characters count two
    child.send("\r")
    child.expect_exact(f"GOT {typed!r}")
    child.send("quit\r")
    child.expect_exact("STOPPED")


def stty(proc: pexpect.spawn) -> set[str]:
    proc.expect(pexpect.EOF)
    return set(proc.before.split("speed", 1)[1].replace(";", " ").split())


def test_the_terminal_mode_is_restored_after_stop() -> None:
    proc = spawn("edit", after="stty -a")
    proc.expect("READY active=True")
    proc.send("quit\r")
    proc.expect_exact("STOPPED")
    flags = stty(proc)
    assert {"icanon", "echo", "isig", "icrnl", "ixon", "opost"} <= flags


def test_the_terminal_mode_is_restored_after_an_exception() -> None:
    proc = spawn("raise", after="stty -a")
    proc.expect("READY active=True")
    proc.expect_exact("RuntimeError: boom in the middle of a run")
    flags = stty(proc)
    assert {"icanon", "echo", "isig", "icrnl", "ixon"} <= flags


def test_a_callback_may_stop_the_reader_it_runs_in() -> None:
    proc = spawn("stop-inside", after="stty -a")
    proc.expect("READY active=True")
    proc.send("bye\r")
    proc.expect_exact("GOT 'bye' active=False")
    proc.expect_exact("STOPPED")
    proc.send("after\r")
    proc.expect_exact("MAIN READ 'after\\n'")
    assert "GOT 'after'" not in proc.before
    assert "Traceback" not in proc.before and "Exception" not in proc.before
    assert {"icanon", "echo", "isig"} <= stty(proc)


def test_ask_line_edits_and_returns() -> None:
    proc = spawn("ask")
    proc.expect_exact("name? ")
    proc.send("Ada" + LEFT * 3 + "Lady " + "\r")
    proc.expect_exact("ANSWER 'Lady Ada'")
    proc.expect(pexpect.EOF)
    proc = spawn("ask")
    proc.expect_exact("name? ")
    proc.send("abc\x03")
    proc.expect_exact("ANSWER None")


def test_ask_line_reads_a_pipe(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, CHILD, "ask"], input="piped answer\n", capture_output=True, text=True,
        timeout=30,
    )  # fmt: skip
    assert done.stdout == "ANSWER 'piped answer'\n"  # no prompt, no escape codes
    done = subprocess.run(
        [sys.executable, CHILD, "ask"], input="", capture_output=True, text=True, timeout=30
    )
    assert done.stdout == "ANSWER None\n"


def test_a_dumb_terminal_is_treated_as_a_pipe() -> None:
    proc = spawn("edit", env={"TERM": "dumb"})
    proc.expect("READY active=False")
    proc.close(force=True)
    assert "\x1b" not in proc.before


def test_off_a_terminal_the_input_line_stays_inert(tmp_path: Path) -> None:
    import io

    reader = InputLine(Terminal(io.StringIO()), on_line=print, on_interrupt=print)
    reader.start()
    assert not reader.active
    reader.stop()


def test_keys_decoder_across_reads() -> None:
    keys = _Keys()
    data = "a中\x1b[D\r\nb".encode()
    got = [a for chunk in (data[:2], data[2:4], data[4:7], data[7:]) for a in keys.feed(chunk)]
    assert got == [("text", "a"), ("text", "中"), ("left", ""), ("enter", ""), ("text", "b")]


def test_editor_view_scrolls_to_keep_the_cursor_visible() -> None:
    ed = _Editor()
    ed.apply("text", "中" * 30)
    _, text, cursor = ed.view("> ", 20)
    assert cursor <= 20 and text.endswith("中") and len(text) * 2 <= 18
    ed.apply("home")
    _, text, cursor = ed.view("> ", 20)
    assert cursor == 2 and text.startswith("中")
