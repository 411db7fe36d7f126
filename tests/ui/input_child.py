"""A tiny program using the input line, driven by test_reader.py through a real pty.

python input_child.py edit   # InputLine while other threads print; "quit" ends
python input_child.py ask    # ask_line once, prints what it got
python input_child.py raise  # InputLine started, then an uncaught exception
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from flower.kernel.terminal import Terminal
from flower.ui.reader import InputLine, ask_line


def edit() -> None:
    term = Terminal()
    done = threading.Event()
    noisy = threading.Event()

    def heard(text: str) -> None:
        term.line(f"GOT {text!r}")
        if text == "noise":
            noisy.set()
        if text == "quit":
            done.set()

    # a child in our process group, as the bundled CLI is: Ctrl-C must not reach it
    sleeper = subprocess.Popen(["sleep", "60"])

    def interrupted() -> None:
        term.line(f"INTERRUPT child={'alive' if sleeper.poll() is None else 'dead'}")

    def noise() -> None:
        n = 0
        while not done.is_set() and n < 300:
            if noisy.is_set():
                term.line(f"noise {n} 中文输出 \x1b[2J\x1b]0;t\x07", "dim")
                n += 1
            time.sleep(0.01)

    reader = InputLine(term, on_line=heard, on_interrupt=interrupted, prompt="说 > ")
    threading.Thread(target=noise, daemon=True).start()
    with reader:
        term.line(f"READY active={reader.active}")
        done.wait(60)
        reader.prompt = "bye > "
    sleeper.kill()
    term.line("STOPPED")


def ask() -> None:
    term = Terminal()
    answer = ask_line(term, "name? ")
    term.line(f"ANSWER {answer!r}")


def stop_inside() -> None:
    """stop() called from on_line, in the reader thread itself."""
    term = Terminal()
    done = threading.Event()
    reader: InputLine

    def heard(text: str) -> None:
        reader.stop()
        term.line(f"GOT {text!r} active={reader.active}")
        done.set()

    reader = InputLine(term, on_line=heard, on_interrupt=lambda: None)
    reader.start()
    term.line(f"READY active={reader.active}")
    done.wait(30)
    term.line("STOPPED")
    # the next line is ours, not a stale reader thread's
    term.line(f"MAIN READ {sys.stdin.readline()!r}")


def explode() -> None:
    term = Terminal()
    reader = InputLine(term, on_line=print, on_interrupt=lambda: None)
    reader.start()
    term.line(f"READY active={reader.active}")
    raise RuntimeError("boom in the middle of a run")


if __name__ == "__main__":
    {"edit": edit, "ask": ask, "raise": explode, "stop-inside": stop_inside}[sys.argv[1]]()
