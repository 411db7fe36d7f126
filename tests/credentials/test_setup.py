"""``flower setup``: the questions, the saved file (merged, mode 0600), the probe, the exits."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from flower.commands.setup import SetupOutcome, needs_setup, save_env, setup_flow
from flower.kernel.env import parse_env_file
from flower.testing import ScriptedModel, Turn, conversation, text

from .terminal import Terminal

FLOWER = str(Path(sys.executable).with_name("flower"))
API_KEY = "sk-ant-api03-" + "k" * 30 + "9876"
GW_TOKEN = "gw-" + "t" * 24 + "5432"


class Answers:
    """A SetupIO that answers from a list (None = the human cancels)."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.said: list[str] = []
        self.prompts: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    def ask(self, prompt: str) -> str | None:
        self.prompts.append(prompt)
        return self.answers.pop(0) if self.answers else ""  # then Enter (the language's)

    ask_secret = ask

    @property
    def transcript(self) -> str:
        return "\n".join(self.said)


def user_env(root: Path) -> Path:
    return root / "xdg" / "flower" / ".env"


def test_a_key_is_saved_private_and_applied(bare: Path) -> None:
    io = Answers(API_KEY, "", "")
    outcome = setup_flow(io, probe=False)
    path = user_env(bare)
    assert outcome == SetupOutcome(saved=["ANTHROPIC_API_KEY"], verdict=None)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert parse_env_file(path) == {"ANTHROPIC_API_KEY": API_KEY}
    assert os.environ["ANTHROPIC_API_KEY"] == API_KEY and not needs_setup()
    assert API_KEY not in io.transcript and "sk-ant-...9876" in io.transcript
    assert not list(path.parent.glob("*.tmp"))


def test_a_gateway_token_merges_with_the_file(bare: Path) -> None:
    path = user_env(bare)
    path.parent.mkdir(parents=True)
    path.write_text("# mine\nOTHER=keep me  # note\nANTHROPIC_API_KEY=sk-ant-old\n")
    path.chmod(0o644)
    io = Answers(GW_TOKEN, "http://127.0.0.1:9/gw/", "gw-model")
    setup_flow(io, probe=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().startswith("# mine\nOTHER=keep me  # note\n")
    assert parse_env_file(path) == {
        "OTHER": "keep me",
        "ANTHROPIC_AUTH_TOKEN": GW_TOKEN,
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/gw",
        "ANTHROPIC_MODEL": "gw-model",
    }
    assert "sk-ant-old" not in path.read_text(), "one credential, not two that disagree"


def test_enter_keeps_and_dash_clears(bare: Path) -> None:
    path = user_env(bare)
    save_env(path, {"ANTHROPIC_AUTH_TOKEN": GW_TOKEN, "ANTHROPIC_BASE_URL": "http://h:1"})
    io = Answers("", "-", "")
    outcome = setup_flow(io, probe=False)
    assert parse_env_file(path) == {"ANTHROPIC_AUTH_TOKEN": GW_TOKEN}
    assert outcome.saved == [] and "now: ANTHROPIC_AUTH_TOKEN=gw-...5432" in io.transcript
    assert "Gateway URL (Enter keeps http://h:1; - clears it):" in io.said
    assert io.prompts == ["key> ", "url> ", "model> ", "lang> "]


def test_a_bad_url_is_asked_again(bare: Path) -> None:
    io = Answers(GW_TOKEN, "gw.example.com", "https://gw.example.com", "")
    setup_flow(io, probe=False)
    assert "starts with http:// or https://" in io.transcript
    assert parse_env_file(user_env(bare))["ANTHROPIC_BASE_URL"] == "https://gw.example.com"


@pytest.mark.parametrize("answers", [(None,), (API_KEY, None), (API_KEY, "", None)])
def test_cancelling_saves_nothing(bare: Path, answers: tuple[str | None, ...]) -> None:
    outcome = setup_flow(Answers(*answers), probe=False)
    assert outcome.cancelled and outcome.exit_code == 130 and not outcome.usable
    assert not user_env(bare).exists()


def test_no_key_saves_nothing(bare: Path) -> None:
    outcome = setup_flow(Answers("", "", ""), probe=False)
    assert outcome.saved == [] and outcome.exit_code == 1 and not user_env(bare).exists()


def test_a_key_set_higher_up_is_named(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-shell")
    io = Answers(API_KEY, "", "")
    setup_flow(io, probe=False)
    assert "ANTHROPIC_API_KEY is also set in the environment, which wins" in io.transcript
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-from-the-shell"


def test_the_probe_tries_what_was_typed(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedModel([conversation("probe", text("pong"))]) as model:
        io = Answers(GW_TOKEN, model.base_url, "")
        outcome = setup_flow(io)
        (request,) = model.requests
    assert outcome.verdict == "ok" and outcome.exit_code == 0 and outcome.usable
    assert request.headers["authorization"] == f"Bearer {GW_TOKEN}"
    assert io.said[-1].startswith("ok: ")


def test_a_refused_key_is_auth_and_not_usable(bare: Path) -> None:
    with ScriptedModel([conversation("probe", Turn(text="x", fail_always=401))]) as model:
        outcome = setup_flow(Answers(GW_TOKEN, model.base_url, ""))
    assert outcome.verdict == "auth" and outcome.exit_code == 1 and not outcome.usable


def test_flower_no_probe_skips_it(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLOWER_NO_PROBE", "1")
    outcome = setup_flow(Answers(API_KEY, "http://127.0.0.1:9", ""))
    assert outcome.verdict is None and outcome.exit_code == 0


@pytest.mark.parametrize(
    "value", ["plain", "with space", "has#hash", "it's", 'q"uote', "back\\slash", "$HOME", ""]
)
def test_saved_values_read_back_unchanged(tmp_path: Path, value: str) -> None:
    path = tmp_path / ".env"
    save_env(path, {"K": value or "x", "L": "other"})
    save_env(path, {"K": value or "x"})
    assert parse_env_file(path)["K"] == (value or "x")
    assert parse_env_file(path)["L"] == "other"


def test_the_mode_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = tmp_path / "cfg" / ".env"
        (tmp_path / "cfg").mkdir()
        (tmp_path / "cfg" / ".env.tmp").write_text("stale")
        (tmp_path / "cfg" / ".env.tmp").chmod(0o666)
        save_env(path, {"K": "v"})
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --- the command in a real terminal ---------------------------------------------------------


@pytest.fixture
def child_env(bare: Path) -> dict[str, str]:
    # LC_ALL=C: a locale that suggests no language, so the default (zh) is offered
    return {**os.environ, "COLUMNS": "100", "TERM": "xterm", "LC_ALL": "C.UTF-8"}


def test_flower_setup_in_a_terminal(bare: Path, child_env: dict[str, str]) -> None:
    """Typed keys; the key never echoes; the file is 0600; the probe says ok."""
    with ScriptedModel([conversation("probe", text("pong"))]) as model:
        term = Terminal([FLOWER, "setup"], child_env, bare)
        try:
            term.expect(r"API key or token \(typed hidden\):")
            term.expect(r"key> ")
            term.send(GW_TOKEN + "\r")
            term.expect(r"key: gw-\.\.\.5432")
            term.expect(r"Gateway URL \(Enter for https://api.anthropic.com\):")
            term.expect(r"url> ")
            term.send(model.base_url + "\r")
            term.expect(r"Model \(Enter for the CLI's default\):")
            term.expect(r"model> ")
            term.send("\r")
            term.expect(r"en or zh \(Enter for zh\):")  # the locale here suggests nothing
            term.expect(r"lang> ")
            term.send("en\r")
            term.expect(r"saved ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, FLOWER_LANG to\s")
            term.expect(r"ok: http://127\.0\.0\.1:\d+ answered")
            assert term.wait() == 0
        finally:
            term.close()
        assert model.requests[-1].headers["authorization"] == f"Bearer {GW_TOKEN}"
    assert GW_TOKEN not in term.text, "the key must not echo"
    path = user_env(bare)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert parse_env_file(path)["ANTHROPIC_AUTH_TOKEN"] == GW_TOKEN
    assert parse_env_file(path)["FLOWER_LANG"] == "en"


def test_ctrl_c_at_the_key_prompt_cancels(bare: Path, child_env: dict[str, str]) -> None:
    term = Terminal([FLOWER, "setup"], child_env, bare)
    try:
        term.expect(r"key> ")
        term.send("half-typed")
        term.send(b"\x03")
        term.expect(r"cancelled; nothing saved")
        assert term.wait() == 130
    finally:
        term.close()
    assert "Traceback" not in term.text
    assert not user_env(bare).exists()


def test_a_refused_key_in_a_terminal_exits_1(bare: Path, child_env: dict[str, str]) -> None:
    with ScriptedModel([conversation("probe", Turn(text="x", fail_always=401))]) as model:
        term = Terminal([FLOWER, "setup"], child_env, bare)
        try:
            term.expect(r"key> ")
            term.send(API_KEY + "\r")
            term.expect(r"url> ")
            term.send(model.base_url + "\r")
            term.expect(r"model> ")
            term.send("\r")
            term.expect(r"lang> ")
            term.send("\r")
            term.expect(r"auth: .* refused the key \(HTTP 401")
            assert term.wait() == 1
        finally:
            term.close()


def test_without_a_terminal_one_line_and_exit_2(bare: Path, child_env: dict[str, str]) -> None:
    """REFERENCE §C.1 too: ``setup`` is the subcommand, not an ask."""
    done = subprocess.run(
        [FLOWER, "setup"],
        env=child_env,
        cwd=bare,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("flower setup: needs a terminal") and "ANTHROPIC_API_KEY" in line
    assert not user_env(bare).exists()


def test_setup_talks_through_flower_s_terminal(bare: Path) -> None:
    """A Terminal (what `flower "..."` holds on a first run) is wrapped, not required to
    speak SetupIO; what setup says goes through its one cleaned output path."""
    import io as stdio

    from flower.commands.setup import TerminalIO, as_setup_io
    from flower.kernel.terminal import Terminal

    answers = Answers()
    assert as_setup_io(answers) is answers
    out = stdio.StringIO()
    wrapped = as_setup_io(Terminal(out))
    assert isinstance(wrapped, TerminalIO)
    wrapped.say("saved \x1b]0;title\x07to \x1b[2Jthere")
    assert out.getvalue() == "saved to there\n"
