"""Everyday words alone on the command line never start a model request (issue 22).

``flower help`` in an empty folder used to clarify "help" with the model, and ``flower
continue`` in a finished run appended "continue" to the frozen brief. Each word, and a
near-miss of each, is walked here with the CLI pointed at the scripted model, which must
receive nothing. The walk runs in-process (click's runner: quick, in the fast lane); the
real processes, a finished run and a terminal are in the e2e tests at the end.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flower import __version__
from flower.cli import main
from flower.commands.typo import allowed, distance
from flower.commands.words import TYPO_WORDS, WORDS
from flower.testing import ScriptedModel, text

#: A near-miss of each word (a typo or a transposition away).
NEAR = {
    "help": "hlep",
    "version": "verison",
    "status": "stauts",
    "setup": "setpu",
    "login": "logni",
    "continue": "contineu",
    "resume": "resmue",
    "new": "nwe",
    "init": "inti",
    "undo": "unod",
}


def invoke(*args: str) -> tuple[int, str]:
    """``flower *args`` in this process, in the current folder, with nothing on stdin."""
    result = CliRunner().invoke(main, list(args), input="")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, result.output


def test_every_word_has_a_near_miss_within_the_typo_distance() -> None:
    assert set(NEAR) == set(TYPO_WORDS) and TYPO_WORDS <= set(WORDS)
    for word, typo in NEAR.items():
        assert 0 < distance(word, typo) <= allowed(word), (word, typo)


@pytest.mark.parametrize("word", sorted(WORDS))
def test_a_word_alone_does_what_it_says_and_asks_the_model_nothing(
    word: str,
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scripted_model.play([])  # any request at all would be recorded
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    code, output = invoke(word)
    expected: dict[str, tuple[int, str]] = {
        "help": (0, "Run a long-horizon coding agent in this folder."),
        "version": (0, f"flower {__version__}"),
        "status": (0, "nothing has run in"),
        "setup": (2, "flower setup: needs a terminal"),  # no terminal here: it says so
        "login": (2, "flower setup: needs a terminal"),
        # a bare flower without a terminal reads the ask from stdin: empty here
        "continue": (2, "say what to do"),
        "resume": (2, "say what to do"),
        "new": (2, "say what to do"),
        "init": (2, 'flower has no init: a folder needs none. Give it the work: flower "make X"'),
        "config": (2, "flower setup: needs a terminal"),
        "doctor": (2, "flower setup: needs a terminal"),
        "start": (2, "say what to do"),
        "list": (0, "no runs in the session store yet"),
        "ls": (0, "no runs in the session store yet"),
        "show": (0, "nothing has run in"),
        "info": (0, "nothing has run in"),
        "log": (0, "nothing has run in"),
        "logs": (0, "nothing has run in"),
        "quit": (2, "nothing to quit: no flower runs between two commands"),
        "exit": (2, "nothing to exit: no flower runs between two commands"),
        "stop": (2, "nothing to stop: no flower runs between two commands"),
        "rewind": (2, "no run in"),  # `flower rewind`: no run here to go back in
        "undo": (2, "flower has no undo: `flower rewind` lists the checkpoints"),
    }
    assert (code, expected[word][1] in output) == (expected[word][0], True), output
    assert "Traceback" not in output
    assert scripted_model.requests == []


@pytest.mark.parametrize("word", sorted(TYPO_WORDS))
def test_a_near_miss_of_a_word_says_what_to_type(
    word: str,
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, output = invoke(NEAR[word])
    assert code == 2, output
    line, hint = output.splitlines()
    assert f"did you mean `flower {word}`?" in line
    assert hint.strip() == f"To send it as a request, write `flower go {NEAR[word]}`"
    assert scripted_model.requests == []
    assert list(tmp_path.iterdir()) == []  # nothing made: no runs/, no .flower/


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What the main job was asked to do, instead of doing it."""
    import flower.commands.launch as launch

    calls: list[dict[str, Any]] = []

    def fake(ask: str, g: Any, settings: dict[str, Any], **kw: Any) -> int:
        calls.append({"ask": ask, "new": kw["new"], "timeout": settings["timeout_s"]})
        return 0

    monkeypatch.setattr(launch, "launch_starter", fake)
    return calls


@pytest.mark.parametrize(
    ("args", "ask", "new"),
    [
        (["continue"], "", False),
        (["Resume"], "", False),  # case does not matter
        (["-w", "{ws}", "continue"], "", False),
        (["--timeout", "0", "continue"], "", False),  # go's flags first: the ask callback
        (["new"], "", True),
        (["--timeout", "0", "new"], "", True),
        (["go", "help"], "help", False),  # the main job by name takes the word literally
        (["go", "continue"], "continue", False),
        (["help", "me", "write", "tests"], "help me write tests", False),  # not alone
        (["continue the work"], "continue the work", False),  # a sentence
        (["refactor"], "refactor", False),  # one word that is none of them
        (["lint"], "lint", False),  # two edits from "init", one from "list": a request
        (["--timeout", "0", "go", "help"], "help", False),  # `go` after go's flags
    ],
)
def test_where_each_form_goes(
    args: list[str],
    ask: str,
    new: bool,
    asked: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    args = [a.replace("{ws}", str(tmp_path / "ws")) for a in args]
    code, output = invoke(*args)
    assert code == 0, output
    assert [(c["ask"], c["new"]) for c in asked] == [(ask, new)]


@pytest.mark.parametrize(
    "word", ["help", "version", "status", "setup", "login", "init", "undo", "rewind"]
)
def test_a_word_after_go_flags_says_what_to_type(
    word: str, asked: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, output = invoke("--timeout", "0", word)
    assert code == 2 and asked == []
    line, hint = output.splitlines()
    assert line == f"flower: {word!r} alone is not sent as a request: type `{WORDS[word]}`"
    assert hint.strip() == f"To send it as a request, write `flower go {word}`"
    assert list(tmp_path.iterdir()) == []  # refused while parsing: not even the workspace


def test_undo_and_rewind_alone_never_change_a_run_nor_ask_the_model(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a folder with checkpoints, ``flower undo`` goes back nowhere (it says which
    command does which undo) and ``flower Rewind`` only lists them, as ``flower rewind``."""
    import json

    from flower.records.checkpoints import Checkpoint, Checkpoints

    scripted_model.play([])
    monkeypatch.delenv("FLOWER_STORE_URL", raising=False)
    ws = tmp_path / "ws"
    (ws / "runs").mkdir(parents=True)
    (ws / "runs" / "lineage.json").write_text(json.dumps({"workspace": str(ws), "run": "r1"}))
    store = Checkpoints(ws, ws / "runs", "r1")
    (ws / "a.txt").write_text("round 1")
    store.take(Checkpoint(n=0, kind="round", step="干活", round=1, exclude=["runs"]))
    (ws / "a.txt").write_text("round 2")
    store.take(Checkpoint(n=0, kind="round", step="干活", round=2, exclude=["runs"]))
    monkeypatch.chdir(ws)
    for word in ("undo", "Undo", "UNDO"):
        code, output = invoke(word)
        assert code == 2 and "`flower rewind --undo` returns to where" in output, output
        assert "`flower rewind N` goes back" in output and len(output.splitlines()) == 1
    for word in ("rewind", "Rewind"):
        code, output = invoke(word)
        assert code == 0 and "round 1" in output and "round 2" in output, output
    code, output = invoke("unod")
    assert code == 2 and "did you mean `flower undo`?" in output, output
    assert (ws / "a.txt").read_text() == "round 2"  # nothing went back
    assert [c.kind for c in store.all()] == ["round", "round"]  # nor was a rewind taken
    assert not (ws / "runs" / "rewind.json").exists()
    assert scripted_model.requests == []


def test_the_help_text_is_the_same_as_dash_dash_help(tmp_path: Path) -> None:
    assert invoke("help") == invoke("--help")
    assert invoke("-v", "help") == invoke("--help")


# --- real processes: a finished run, a terminal --------------------------------------------


@pytest.mark.e2e
def test_words_in_a_finished_run_spend_nothing_and_leave_the_brief_alone(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    from ..workflow import scripts as S
    from .terminal import FLOWER, Flower

    ws = tmp_path / "ws"
    scripted_model.play(S.one_round(S.ACHIEVED, S.DISPATCH, text(S.ROUND1)))
    first = Flower("-w", str(ws), "写个 hello.txt", "--timeout", "0", cwd=tmp_path)
    assert first.finish() == 0, first.text[-3000:]
    brief = ws / ".flower" / "notes" / "需求.md"
    before = brief.read_bytes()
    spent = len(scripted_model.requests)

    env = {**os.environ, "COLUMNS": "200"}
    for word in ("help", "version", "status", "resume", "continue", "init", "hlep", "contineu"):
        done = subprocess.run(
            [FLOWER, "-w", str(ws), word],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert "Traceback" not in done.stderr, done.stderr
        if word in ("resume", "continue"):  # as a bare flower: it finished, left as it is
            assert done.returncode == 0 and "left as it is" in done.stdout, done.stdout
    assert len(scripted_model.requests) == spent
    assert brief.read_bytes() == before

    # on a terminal, `continue` is a bare flower's wake: Enter leaves it as it is
    woken = Flower("-w", str(ws), "continue", cwd=tmp_path)
    woken.expect("It finished. Enter = leave it as it is")
    woken.type("")
    assert woken.finish() == 0, woken.text[-3000:]
    # `new` asks what the new work is (as --new does); Ctrl-C there quits, nothing archived
    fresh = Flower("-w", str(ws), "new", cwd=tmp_path)
    fresh.expect("What should it do")
    fresh.ctrl_c()
    assert fresh.finish() == 130, fresh.text[-3000:]
    assert not (ws / ".flower" / "notes" / "archive").exists()
    assert len(scripted_model.requests) == spent
    assert brief.read_bytes() == before
