"""Terminal: the one output path, on a real pseudo-terminal read by a real emulator."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flower.kernel.sanitize import cells
from flower.kernel.terminal import Terminal, default_lock_path

from .ptyio import Pty, rows

ESC = "\x1b"


@pytest.fixture
def pty() -> Iterator[Pty]:
    p = Pty(cols=60, rows=20)
    yield p
    p.close()


class FixedPrompt:
    """A stand-in for the input line: fixed text and cursor."""

    def __init__(self, prompt: str, text: str) -> None:
        self.prompt, self.text = prompt, text

    def view(self, width: int) -> tuple[str, str, int]:
        return self.prompt, self.text, cells(self.prompt) + cells(self.text)


def test_not_a_terminal_gets_plain_lines_at_width_100() -> None:
    out = io.StringIO()
    term = Terminal(out)
    assert not term.is_tty and term.width == 100 and not term.color
    term.line("x " * 80, "bold red")
    term.status("never shown")
    term.attach(FixedPrompt("> ", "never shown"))
    term.line("after")
    text = out.getvalue()
    assert ESC not in text and "never shown" not in text
    assert [len(r) for r in text.splitlines()] == [99, 59, 5]


@pytest.mark.parametrize(("cols", "width"), [(30, 40), (80, 80), (200, 110)])
def test_width_follows_the_terminal_within_40_to_110(cols: int, width: int) -> None:
    p = Pty(cols=cols)
    try:
        with p.stream() as stream:
            term = Terminal(stream)
            assert term.is_tty and term.columns == cols and term.width == width
    finally:
        p.close()


def test_text_cannot_inject_escape_sequences(pty: Pty) -> None:
    with pty.stream() as stream:
        term = Terminal(stream, color=False)
        term.line("ok \x1b]0;pwned\x07\x1b[2J\x1b[31mred\x9b1;1H \x1bP+q\x1b\\[bold]x[/]")
    out = pty.output()
    assert b"\x1b" not in out and b"\x9b" not in out.replace("\x9b".encode(), b"")
    assert out.decode() == "ok red [bold]x[/]\r\n"


def test_only_flowers_own_style_reaches_the_terminal(pty: Pty) -> None:
    with pty.stream() as stream:
        term = Terminal(stream, color=True)
        term.line("\x1b[5mblink\x1b[0m", "bold red")
    out = pty.output().decode()
    assert re.findall(r"\x1b\[[0-9;]*m", out) == ["\x1b[1;31m", "\x1b[0m"]
    assert "blink" in out


def test_no_color_is_honoured(monkeypatch: pytest.MonkeyPatch, pty: Pty) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    with pty.stream() as stream:
        assert not Terminal(stream).color
    monkeypatch.delenv("NO_COLOR")
    with pty.stream() as stream:
        assert Terminal(stream).color


def test_cjk_wraps_by_cells_on_screen(pty: Pty) -> None:
    pty.cols = 40
    from .ptyio import set_size

    set_size(pty.slave, 40, 20)
    with pty.stream() as stream:
        term = Terminal(stream, color=False)
        assert term.width == 40
        term.line("中文" * 25 + "end", indent=2)  # 100 cells + 3
    screen = rows(pty.screen())
    # 38 cells a row after the indent: 19 wide characters, never 18.5
    assert screen[:3] == [
        "  " + "中文" * 9 + "中",
        "  " + "文中" * 9 + "文",
        "  " + "中文" * 6 + "end",
    ]
    assert all(cells(r) <= 40 for r in screen)


def test_input_line_and_status_survive_output(pty: Pty) -> None:
    with pty.stream() as stream:
        term = Terminal(stream)
        prompt = FixedPrompt("answer 1-3 > ", "我想要 LF")
        term.attach(prompt)
        term.status("~ retrying in 3s")
        for n in range(30):  # more than a screen: the view scrolls
            term.line(f"line {n} " + "中" * (n % 7), "cyan")
        term.status("~ retrying in 2s")
        term.line("last")
        screen = pty.screen()
        shown = rows(screen)
        assert shown[-3:] == ["last", "~ retrying in 2s", "answer 1-3 > 我想要 LF"]
        assert shown[-4] == "line 29 " + "中"
        assert screen.cursor.y == 19 and screen.cursor.x == cells("answer 1-3 > 我想要 LF")
        assert not any("retrying in 3s" in r or "answer" in r for r in shown[:-2])
        term.close()  # the transient lines go; what was printed stays
        assert rows(pty.screen())[-4:] == ["line 29 中", "last", "", ""]


def test_a_closed_pipe_stops_printing_quietly() -> None:
    read, write = os.pipe()
    os.close(read)
    stream = os.fdopen(write, "w")
    term = Terminal(stream)
    term.line("nobody reads this")  # EPIPE: no exception, no more attempts
    term.line("nor this")


def test_the_lock_is_per_output_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    with open(tmp_path / "out", "w") as a, open(tmp_path / "out", "a") as b:
        assert default_lock_path(a) == default_lock_path(b) is not None
        assert default_lock_path(a).parent == tmp_path  # type: ignore[union-attr]
    with open(tmp_path / "other", "w") as c:
        assert default_lock_path(c) != default_lock_path(a)
    assert default_lock_path(io.StringIO()) is None


WRITER = textwrap.dedent(
    """
    import sys
    from flower.kernel.terminal import Terminal
    me, calls, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    term = Terminal(sys.stdout, color=False)
    for n in range(calls):
        body = " ".join(me * 9 for _ in range(size // 10))
        term.line(f"<{me}{n:03d}> {body} </{me}{n:03d}>")
    """
)


def check_not_torn(text: str, calls: int) -> None:
    """Each call's rows are contiguous and hold one writer's letters only."""
    current: str | None = None
    seen = 0
    for row in text.replace("\r\n", "\n").split("\n"):
        if not row:
            continue
        opened = re.match(r"<([AB])(\d{3})> ", row)
        if current is None:
            assert opened, f"a row outside any call: {row[:40]!r}"
            current = opened.group(1) + opened.group(2)
            seen += 1
        else:
            assert not opened, f"{row[:12]!r} starts inside call {current}: torn"
        assert set(re.sub(r"</?[AB]\d{3}>", "", row).replace(" ", "")) <= {current[0]}, row[:60]
        if row.endswith(f"</{current}>"):
            current = None
    assert current is None and seen == 2 * calls


def _writers(stdout: int, calls: int, size: int, env: dict[str, str]) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, me, str(calls), str(size)], stdout=stdout, env=env
        )
        for me in "AB"
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0


def test_two_processes_on_one_pty_never_tear_a_line(tmp_path: Path) -> None:
    p = Pty(cols=100, rows=50)
    try:
        env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}
        _writers(p.slave, calls=40, size=3000, env=env)
        check_not_torn(p.output().decode(), calls=40)
    finally:
        p.close()


def test_two_processes_on_one_pipe_never_tear_a_line(tmp_path: Path) -> None:
    """A pipe is where the lock matters most: the kernel keeps a write() to it whole only
    up to 4 KiB (PIPE_BUF), and these lines are 12 KiB."""
    read, write = os.pipe()
    chunks: list[bytes] = []
    import threading

    def drain() -> None:  # a slow reader: the pipe stays full and writers block mid-write
        while data := os.read(read, 4096):
            chunks.append(data)
            time.sleep(0.0005)

    reader = threading.Thread(target=drain)
    reader.start()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}
    try:
        _writers(write, calls=60, size=12000, env=env)
    finally:
        os.close(write)
        reader.join(timeout=30)
        os.close(read)
    check_not_torn(b"".join(chunks).decode(), calls=60)
