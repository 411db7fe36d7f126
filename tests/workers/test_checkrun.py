"""The check runner against checks that try to do harm: nothing they do outlives them.

Real bubblewrap, no model: a check that deletes the workspace's files, writes outside it,
reads a home, opens a socket, leaves a daemon listening, or never ends. The workspace and
the home are hashed before and after; nothing may change and nothing may still listen.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from flower.workflow.check_run import run_checks
from flower.workflow.checks import parse_check

from ..guards.hostile import changes, snapshot


def checks(*lines: str) -> list:
    found = [parse_check(line, n) for n, line in enumerate(lines, 1)]
    assert all(found), lines
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_what_a_check_does_stays_in_its_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home, outside = tmp_path / "ws", tmp_path / "home", tmp_path / "outside"
    for folder in (ws / "src", home / ".ssh", outside):
        folder.mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print('hi')\n")
    (ws / "kept.txt").write_text("kept\n")
    (home / ".ssh" / "id_ed25519").write_text("SSH-KEY-IN-A-CHECK\n")
    monkeypatch.setenv("HOME", str(home))
    port = free_port()
    daemon = (
        f"nohup python3 -c \"import socket,time; s=socket.socket(); s.bind(('127.0.0.1', {port}));"
        f' s.listen(); time.sleep(600)" >/dev/null 2>&1 & sleep 0.5; echo started'
    )
    harmful = checks(
        "`rm -rf src kept.txt && touch planted.txt && ls` exits 0",
        f"`touch {outside}/escaped.txt {home}/planted.txt; echo $?` prints `0`",
        f"`cat {home}/.ssh/id_ed25519` exits 0",
        "`python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\"` exits 0",
        f"`{daemon}` prints `started`",
        "`sleep 600` exits 0",
        "`python3 src/a.py` prints `hi`",
    )
    before = snapshot(ws), snapshot(home), snapshot(outside)
    results = asyncio.run(run_checks(harmful, ws, check_timeout=5, total_timeout=60))
    after = snapshot(ws), snapshot(home), snapshot(outside)
    for old, new in zip(before, after, strict=True):
        assert changes(old, new) == []
    states = [r.state for r in results]
    assert states[0] == "passed"  # it did delete: in its own copy
    assert "SSH-KEY-IN-A-CHECK" not in results[2].tail and states[2] == "failed"
    assert states[3] == "failed"  # no network
    assert states[4] == "passed"
    with socket.socket() as probe:  # the daemon it left ended with it
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    assert states[5] == "failed" and "timed out after 5 s" in results[5].why
    assert states[6] == "passed" and "hi" in results[6].tail
    assert all(r.isolated for r in results)


def test_a_missing_command_could_not_run_and_never_passes(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    results = asyncio.run(
        run_checks(
            checks("`no-such-tool --version` exits 0", "file `x.txt` exists"), tmp_path / "ws"
        )
    )
    assert [r.state for r in results] == ["cannot_run", "failed"]
    assert "does not exist here" in results[0].why


def test_the_rounds_time_runs_out_for_the_checks_after_it(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    many = checks("`sleep 3` exits 0", "`true` exits 0")
    results = asyncio.run(run_checks(many, tmp_path / "ws", check_timeout=10, total_timeout=1))
    assert results[0].state == "failed" and "timed out after 1 s" in results[0].why
    assert results[1].state == "cannot_run" and "ran out" in results[1].why


def test_output_is_capped_redacted_and_ends_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-api03-a-check-prints-the-key-0000"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "k.txt").write_text(key + "\n")
    noisy = checks(
        "`yes x | head -c 2000000; cat k.txt; echo $ANTHROPIC_API_KEY; echo END` prints `END`"
    )
    (result,) = asyncio.run(run_checks(noisy, tmp_path / "ws"))
    assert key not in result.tail and "[已隐去 ANTHROPIC_API_KEY]" in result.tail
    assert len(result.tail) <= 2000 and result.tail.rstrip().endswith("END")


def test_a_tool_that_lives_under_tmp_is_still_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check's /tmp is fresh, but a virtualenv or a tool made under /tmp (a CI clone's
    .venv) is bound back: the interpreter on PATH runs (found on a fresh clone in /tmp)."""
    tool = tmp_path / "bin" / "say-hi"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho hi-from-tmp\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:{os.environ['PATH']}")
    (tmp_path / "ws").mkdir()
    (result,) = asyncio.run(run_checks(checks("`say-hi` prints `hi-from-tmp`"), tmp_path / "ws"))
    assert result.passed, (result.why, result.tail)
