"""The setup ``flower "..."`` starts when there are no credentials (issue 22).

Ctrl-C there is a quit: exit 130 and setup's one line, not exit 2 with the long "no
credentials" paragraph after it. An empty key ends setup at once, in one line, without
asking for a gateway URL and a model that would be saved for nothing. The terminal
cases start a real ``flower`` in a pty (marked e2e); the same flow's logic is also
checked in-process, in the fast lane.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from flower.commands.setup import setup_flow

from .terminal import Terminal
from .test_setup import Answers, user_env

FLOWER = str(Path(sys.executable).with_name("flower"))
GREETING = "No credentials for the Claude API yet: let's set them up."


@pytest.fixture
def child_env(bare: Path) -> dict[str, str]:
    # a dead loopback port: nothing this test starts may reach a real endpoint
    return {
        **os.environ,
        "COLUMNS": "100",
        "TERM": "xterm",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "FLOWER_NO_PROBE": "1",
    }


def _after_the_key_prompt(term: Terminal) -> list[str]:
    """The lines printed after the key prompt, escape sequences (the line editor's) removed."""
    tail = re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", term.text.split("key> ", 1)[1])
    return [line.strip() for line in tail.replace("\r", "").split("\n") if line.strip()]


def _go(child_env: dict[str, str], bare: Path) -> Terminal:
    ws = bare / "ws"
    ws.mkdir()
    term = Terminal([FLOWER, "-w", str(ws), "make x"], child_env, bare)
    term.expect(GREETING)
    term.expect(r"key> ")
    return term


@pytest.mark.e2e  # a real flower in a pty: seconds, not milliseconds
def test_ctrl_c_at_the_key_prompt_quits_with_130_and_one_line(
    bare: Path, child_env: dict[str, str]
) -> None:
    term = _go(child_env, bare)
    try:
        term.send("half-typed")
        term.send(b"\x03")
        assert term.wait() == 130
    finally:
        term.close()
    assert _after_the_key_prompt(term) == ["cancelled; nothing saved"]
    assert not user_env(bare).exists()
    assert sorted(p.name for p in (bare / "ws").iterdir()) == []  # no runs/, no .flower/


@pytest.mark.e2e  # a real flower in a pty: seconds, not milliseconds
def test_ctrl_c_at_the_url_prompt_quits_with_130_and_one_line(
    bare: Path, child_env: dict[str, str]
) -> None:
    term = _go(child_env, bare)
    try:
        term.send("sk-ant-api03-" + "k" * 30 + "\r")
        term.expect(r"url> ")
        term.send(b"\x03")
        assert term.wait() == 130
    finally:
        term.close()
    *_, last = _after_the_key_prompt(term)
    assert last.endswith("cancelled; nothing saved") and "no credentials" not in term.text
    assert not user_env(bare).exists()


@pytest.mark.e2e  # a real flower in a pty: seconds, not milliseconds
def test_an_empty_key_ends_setup_in_one_line(bare: Path, child_env: dict[str, str]) -> None:
    term = _go(child_env, bare)
    try:
        term.send("\r")
        assert term.wait() == 2
    finally:
        term.close()
    assert _after_the_key_prompt(term) == ["no key given; nothing saved (flower setup asks again)"]
    assert "Gateway URL" not in term.text and "url> " not in term.text
    assert not user_env(bare).exists()


def test_an_empty_key_asks_nothing_more(bare: Path) -> None:
    io = Answers("")
    outcome = setup_flow(io, probe=False)
    assert io.prompts == ["key> "] and outcome.saved == [] and outcome.exit_code == 1
    assert io.said[-1] == "no key given; nothing saved (flower setup asks again)"


def test_ctrl_c_while_the_key_is_tried_is_a_cancel(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flower.runtime.probe as probe

    def interrupted(*_: object, **__: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(probe, "probe", interrupted)
    io = Answers("sk-ant-api03-" + "k" * 30, "", "")
    outcome = setup_flow(io, probe=True)
    assert outcome.cancelled and outcome.exit_code == 130
    assert io.said[-1] == "cancelled while trying the key; it is saved, not tried"
