"""Issue 9 §5: what a newcomer trips over, one test each."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from flower.cli import main
from flower.commands.startup import startup_problem
from flower.records.manifest import Manifest
from flower.testing import ScriptedModel, conversation, text
from flower.ui.render import plural

FLOWER = str(Path(sys.executable).with_name("flower"))
SMALL = {"input_tokens": 500}


@pytest.fixture
def env(claude_env: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **{k: v for k, v in claude_env.items() if v}, "COLUMNS": "200"}


def once(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FLOWER, "once", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.e2e
def test_resuming_under_another_workspace_names_the_right_one(
    scripted_model: ScriptedModel,
    env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scripted_model.play([conversation("main", text("hello", usage=SMALL))])
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    first = once(["say hello", "-w", str(here), "-r", "runs"], env, tmp_path)
    assert first.returncode == 0, first.stderr
    assert "- 1 turn -" in first.stdout, first.stdout
    (sid,) = re.findall(r"^session: (\S+)$", first.stdout, re.MULTILINE)

    # refused before any session starts: in this process (a `flower` costs its imports)
    monkeypatch.chdir(tmp_path)
    wrong = CliRunner().invoke(
        main, ["once", "--resume", sid, "again", "-w", str(there), "-r", "runs"]
    )
    assert wrong.exit_code == 2, wrong.output
    (line,) = wrong.stderr.splitlines()
    assert f"belongs to the workspace {here}" in line and f"-w {here}" in line, line
    # an id no workspace knows: tests/runtime/test_once_cli.py::test_bad_input_is_one_clear_line


def test_a_run_folder_that_cannot_be_made_names_the_session_store(
    tmp_path: Path, workspace: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = subprocess.run(
        [FLOWER, "once", "hi", "-w", str(workspace), "-r", str(blocker / "runs")],
        env={**os.environ},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "session store" in line and str(blocker / "runs") in line and "-r/--run-dir" in line
    assert "Errno" not in line


def test_a_store_url_that_cannot_be_made_names_the_session_store(tmp_path: Path) -> None:
    exc = NotADirectoryError(20, "Not a directory", str(tmp_path / "file" / "x"))
    said = startup_problem(exc, tmp_path / "runs")
    assert said.startswith(f"cannot create the session store at {tmp_path / 'file' / 'x'}")
    assert startup_problem(RuntimeError("no credentials"), tmp_path) == "no credentials"


def test_plural() -> None:
    assert [plural(n, "turn") for n in (0, 1, 2)] == ["0 turns", "1 turn", "2 turns"]


# --- the manifest -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content", ['{"step": "a"}', '"text"', "42", '[{"step": "a"}, "not a row"]', "null"]
)
def test_valid_json_that_is_not_rows_is_kept_aside(
    tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "manifest.json").write_text(content)
    Manifest(tmp_path, "r").write([{"step": "b"}])
    assert [r["step"] for r in json.loads((tmp_path / "manifest.json").read_text())] == ["b"]
    (aside,) = tmp_path.glob("manifest.json.corrupt-*")
    assert aside.read_text() == content
    assert "not a list of rows" in capsys.readouterr().err


# --- flower.__dir__ --------------------------------------------------------------------------


def test_dir_of_flower_lists_only_public_names() -> None:
    import flower

    names = dir(flower)
    assert "Runtime" in names and "__version__" in names and "hookimpl" in names
    private = [n for n in names if n.startswith("_") and n != "__version__"]
    assert private == [], private
    assert not {"import_module", "TYPE_CHECKING", "Any", "annotations"} & set(names)
    assert sorted(names) == sorted(flower.__all__)


# --- scripted-model serve --------------------------------------------------------------------


def _serve(*args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [FLOWER, "scripted-model", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,  # type: ignore[call-overload]
    )


@pytest.mark.parametrize(
    "content", [None, "{not json", "[1, 2]", '{"conversations": [{"turns": 5}]}']
)
def test_serve_exits_2_on_a_bad_script(tmp_path: Path, content: str | None) -> None:
    script = tmp_path / "script.json"
    if content is not None:
        script.write_text(content)
    proc = _serve(str(script))
    out, err = proc.communicate(timeout=60)
    assert out == ""
    assert proc.returncode == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_serve_survives_a_client_hanging_up_and_cleans_its_home(tmp_path: Path) -> None:
    import socket

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"conversations": [{"name": "m", "turns": [{"text": "hi"}]}]}))
    proc = _serve(str(script), "--quiet")
    try:
        assert proc.stdout is not None
        exports = {}
        while len(exports) < 3 or "CLAUDE_CONFIG_DIR" not in exports:
            line = proc.stdout.readline()
            assert line, "serve printed no environment"
            name, _, value = line.strip().removeprefix("export ").partition("=")
            exports[name] = value.strip("'")
        home = Path(exports["HOME"])
        port = int(exports["ANTHROPIC_BASE_URL"].rsplit(":", 1)[1])
        assert home.is_dir()
        body = json.dumps({"model": "m", "stream": True, "messages": []}).encode()
        for _ in range(5):  # send a request, hang up before the reply is read
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(
                    b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(body) * 50}\r\n\r\n".encode()
                    + body
                )
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
        time.sleep(0.5)
        assert proc.poll() is None, "a hang-up must not stop the server"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "Error" not in err, err
    assert not home.exists(), "the temporary HOME is removed on exit"


def test_serve_keeps_a_home_it_was_given(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"conversations": []}))
    home = tmp_path / "given-home"
    proc = _serve(str(script), "--home", str(home), "--quiet")
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 0 and home.is_dir()


# --- hookspecs say which hooks have defaults ---------------------------------------------------


def test_every_hookspec_names_its_default_implementation() -> None:
    import importlib
    import inspect
    import re

    from flower import hookspecs
    from flower.plugins import DEFAULT_PLUGINS

    hooks = [
        n for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if n.startswith("flower_")
    ]
    assert len(hooks) >= 9
    for hook in hooks:
        doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
        (line,) = [ln for ln in doc.split("\n\n") if ln.startswith("Default:")]
        named = set(re.findall(r"``(flower_plugins\.\w+)``", line)) & set(DEFAULT_PLUGINS)
        actual = {m for m in DEFAULT_PLUGINS if hasattr(importlib.import_module(m), hook)}
        assert named == actual, f"{hook}: docs say {named or 'none'}, code has {actual or 'none'}"
        assert bool(actual) != line.startswith("Default: none"), hook
