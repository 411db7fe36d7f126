"""How the language is chosen: ``--lang`` > ``FLOWER_LANG`` > ``flower setup``'s saved choice
> Chinese; the locale only suggests (setup's default); the step names' English gloss."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from flower.kernel import lang
from flower.kernel.lang import EN, ZH, current, from_locale, localized, normalize, step_label, using


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user config ``flower setup`` writes, under a fresh XDG_CONFIG_HOME."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "xdg" / "flower" / ".env"
    path.parent.mkdir(parents=True)
    return path


@pytest.mark.parametrize(
    ("value", "code"),
    [("en", EN), (" EN ", EN), ("English", EN), ("en_US.UTF-8", EN), ("en-GB", EN),
     ("zh", ZH), ("zh_CN.UTF-8", ZH), ("zh-Hant", ZH), ("中文", ZH), ("chinese", ZH),
     ("fr", None), ("", None), ("e", None), (None, None), (3, None)],
)  # fmt: skip
def test_normalize(value: object, code: str | None) -> None:
    assert normalize(value) == code


@pytest.mark.parametrize(
    ("environ", "suggested"),
    [
        ({"LANG": "zh_CN.UTF-8"}, ZH),
        ({"LANG": "de_DE.UTF-8"}, EN),
        ({"LANG": "C.UTF-8"}, None),
        ({"LANG": "POSIX"}, None),
        ({}, None),
        ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, EN),  # LC_ALL first
        ({"LC_ALL": "", "LC_MESSAGES": "zh_TW", "LANG": "en_US"}, ZH),
    ],
)
def test_the_locale_only_suggests(environ: dict[str, str], suggested: str | None) -> None:
    assert from_locale(environ) == suggested


def test_the_default_is_chinese_and_the_locale_does_not_change_it(
    monkeypatch: pytest.MonkeyPatch, config: Path
) -> None:
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    assert current() == ZH


def test_precedence_choice_then_env_then_saved_then_default(
    monkeypatch: pytest.MonkeyPatch, config: Path
) -> None:
    assert current() == ZH
    config.write_text("ANTHROPIC_API_KEY=x\nFLOWER_LANG=en\n")
    assert current() == EN  # saved by flower setup
    monkeypatch.setenv("FLOWER_LANG", "zh")
    assert current() == ZH  # the environment wins over the saved choice
    with using("en"):
        assert current() == EN  # the process's choice (--lang) wins over both
    assert current() == ZH
    monkeypatch.setenv("FLOWER_LANG", "klingon")
    assert current() == EN  # a value that names no language is not a choice here
    config.write_text("FLOWER_LANG=zh\n")
    assert current() == ZH  # the saved file is read again once it changed


def test_use_refuses_an_unknown_language() -> None:
    with pytest.raises(ValueError, match="use en or zh"):
        lang.use("fr")


def test_localized_translates_only_the_seeds_default() -> None:
    with using("en"):
        assert localized("中文默认", "中文默认", "the default") == "the default"
        assert localized("my own words", "中文默认", "the default") == "my own words"
    assert localized("中文默认", "中文默认", "the default") == "中文默认"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("确认需求", "确认需求 (clarify)"),
        ("设定目标", "设定目标 (set the goal)"),
        ("干活", "干活 (work)"),
        ("干活#round2", "干活#round2 (work, round 2)"),
        ("干活#retry1", "干活#retry1 (work, retry 1)"),
        ("干活·判定#3", "干活·判定#3 (work · judge #3)"),
        ("干活·判定", "干活·判定 (work · judge)"),
        ("收尾", "收尾 (bequest)"),
        ("my-step", "my-step"),
        ("my-step#round2", "my-step#round2"),
    ],
)
def test_step_labels_gloss_the_keys_in_english_only(name: str, shown: str) -> None:
    assert step_label(name, EN) == shown
    assert step_label(name, ZH) == name
    assert step_label(name) == name  # the default language shows the name as it is


# --- the command line --------------------------------------------------------------------


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``flower <args>`` in this process; the exit code, the output and the language the
    command settled on (it stays pinned after the command, until the test ends)."""
    from flower.cli import main

    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output, current()


@pytest.mark.parametrize(
    ("args", "env", "settled"),
    [
        (["status"], {}, ZH),
        (["--lang", "en", "status"], {}, EN),
        (["status", "--lang", "en"], {}, EN),
        (["--lang=en", "status"], {}, EN),
        (["status"], {"FLOWER_LANG": "en"}, EN),
        (["--lang", "zh", "status"], {"FLOWER_LANG": "en"}, ZH),  # the flag beats the env
        (["--lang", "en", "status", "--lang", "zh"], {}, ZH),  # after the command wins
        (["--lang", "en", "status"], {"FLOWER_LANG": "zh"}, EN),  # env never beats a flag
    ],
)
def test_the_command_settles_the_language_once(
    args: list[str], env: dict[str, str], settled: str, tmp_path: Path, config: Path
) -> None:
    code, _, chosen = invoke(*args, "-w", str(tmp_path), env=env)
    assert (code, chosen) == (0, settled)


def test_the_saved_choice_applies_when_nothing_else_says(tmp_path: Path, config: Path) -> None:
    config.write_text("FLOWER_LANG=en\n")
    assert invoke("status", "-w", str(tmp_path))[2] == EN


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--lang", "fr", "status"], {}, "--lang"),
        (["status", "--lang", "xx"], {}, "--lang"),
        (["status"], {"FLOWER_LANG": "fr"}, "FLOWER_LANG"),
    ],
)
def test_a_language_flower_does_not_speak_is_a_usage_error(
    args: list[str], env: dict[str, str], named: str, tmp_path: Path
) -> None:
    from flower.cli import main

    result = CliRunner().invoke(main, [*args, "-w", str(tmp_path)], env=env)
    assert result.exit_code == 2
    assert named in result.output and "use en or zh" in result.output


# --- flower setup ------------------------------------------------------------------------


class Typed:
    """A SetupIO answering from a list; what it was told is kept."""

    def __init__(self, *answers: str | None) -> None:
        self.answers, self.said = list(answers), list[str]()

    def say(self, text: str) -> None:
        self.said.append(text)

    def ask(self, prompt: str) -> str | None:
        return self.answers.pop(0)

    ask_secret = ask


@pytest.mark.parametrize(
    ("locale", "before", "typed", "saved"),
    [
        ("C.UTF-8", None, "", None),  # nothing suggested: Chinese, which needs no saving
        ("en_US.UTF-8", None, "", EN),  # the locale suggests English; Enter takes it
        ("en_US.UTF-8", None, "zh", None),  # Chinese applies anyway: nothing to save
        ("zh_CN.UTF-8", "en", "", None),  # Enter keeps what was saved
        ("zh_CN.UTF-8", "en", "中文", ZH),  # a change is saved
        ("C", None, "english", EN),
    ],
)
def test_setup_asks_the_language_the_locale_suggests(
    config: Path, locale: str, before: str | None, typed: str, saved: str | None
) -> None:
    from flower.commands.setup import setup_flow
    from flower.kernel.env import parse_env_file

    if before:
        config.write_text(f"FLOWER_LANG={before}\n")
    environ = {"LC_ALL": locale, "XDG_CONFIG_HOME": str(config.parent.parent)}
    io = Typed("sk-ant-api03-" + "k" * 40, "", "", typed)
    outcome = setup_flow(io, probe=False, environ=environ, path=config)
    suggested = normalize(before) or from_locale(environ) or ZH
    assert f"en or zh (Enter for {suggested}):" in " ".join(io.said)
    assert parse_env_file(config).get("FLOWER_LANG") == (saved or before)
    assert ("FLOWER_LANG" in outcome.saved) == (saved is not None)
    if saved:
        assert environ["FLOWER_LANG"] == saved  # applied to this process as well


def test_setup_asks_again_for_a_language_it_does_not_speak(config: Path) -> None:
    from flower.commands.setup import setup_flow

    io = Typed("sk-ant-api03-" + "k" * 40, "", "", "fr", "en")
    setup_flow(io, probe=False, environ={"LC_ALL": "C"}, path=config)
    assert "FLOWER_LANG=en" in config.read_text()
    assert any("en (English) or zh" in line for line in io.said)


def test_setup_lang_saves_the_language_alone(config: Path) -> None:
    from flower.cli import main

    result = CliRunner().invoke(main, ["setup", "--lang", "en"])
    assert result.exit_code == 0 and "saved FLOWER_LANG=en" in result.output
    assert config.read_text().splitlines()[-1] == "FLOWER_LANG=en"
    lang.use(None)  # the command pinned the language it started with; the next one:
    assert current() == EN
    result = CliRunner().invoke(main, ["setup", "--lang", "fr"])
    assert result.exit_code == 2 and "use en or zh" in result.output


@pytest.mark.parametrize(("given", "after"), [(None, EN), ("zh", ZH)])
def test_a_first_run_setup_sets_the_language_of_the_run_after_it(
    config: Path, monkeypatch: pytest.MonkeyPatch, given: str | None, after: str
) -> None:
    """``flower "make X"`` without a key runs setup first: the language chosen there is
    the run's, unless the command was given one (``--lang``, ``FLOWER_LANG``)."""
    from flower.commands.setup import setup_flow

    if given:
        lang.use(given)
    else:
        assert lang.settle() == ZH
    monkeypatch.setenv("LC_ALL", "C")
    setup_flow(Typed("sk-ant-api03-" + "k" * 40, "", "", "en"), probe=False, path=config)
    assert current() == after


@pytest.mark.parametrize("language", [ZH, EN])
def test_every_wall_text_is_a_refusal_in_either_language(language: str) -> None:
    """The Runtime tells a refused call from a failed tool by the wall's words; a run that
    switched language has refusals of both in one transcript."""
    from flower.roles import deny_texts as deny
    from flower.roles.walls import is_refusal

    with using(language):
        said = [
            deny.missing_text("裁判", "Write"),
            deny.dispatch_text("协调者", "Explore", ["coder"]),
            deny.remote_text("协调者", "remote"),
            deny.stranger_text("协调者", "x"),
            deny.delegate_text("Bash", artifacts="a/", glance=True, why="it writes"),
        ]
    assert all(is_refusal(text) for text in said), said
    assert not is_refusal(deny.glance_reason()) and not is_refusal("permission denied: x")
