"""Bad input is one line, the right exit code, and nothing made or left behind (issue 22).

Each case lists (hashes) the folders involved before and after: a refusal creates no
workspace, no run folder, no ``run.lock``, no stray SQLite file and no folder a store URL
names. Refusals that happen while parsing or before a Runtime opens run in-process
(click's runner); the read-only workspace needs a real process (its permissions), so it
is marked e2e.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from flower.cli import main
from flower.testing import ScriptedModel

from .terminal import FLOWER


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file and folder under ``roots``: path -> content hash (``"dir"`` for folders)."""
    seen: dict[str, str] = {}
    for root in roots:
        if not root.exists():
            seen[str(root)] = "absent"
            continue
        for path in sorted([root, *root.rglob("*")]):
            if path.is_dir():
                seen[str(path)] = "dir"
            else:
                seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, list(args), env=env, input="")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, result.output.splitlines()


# --- usage errors: one line naming the option and what it accepts --------------------------


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--timeout", "-5", "x"], "flower: --timeout: -5: give a number of seconds, 0 or more"),
        (["x", "--timeout", "-0.5"], "flower: --timeout: -0.5: give a number of seconds"),
        (["--timeout", "abc", "x"], "flower: --timeout: 'abc' is not a valid float"),
        (["--rounds", "0", "x"], "flower: --rounds: 0: the total number of work rounds is 1"),
        (["--rouns", "2", "x"], "flower: no such option '--rouns'. (Did you mean one of: '--roun"),
        (["go", "--rouns", "2"], "flower go: no such option '--rouns'"),
        (["once", "-p", "x", "hi"], "flower once: -p/--permission-mode: 'x' is not one of 'def"),
        (["run"], "flower run: missing argument 'TARGET'."),
        (["status", "--jsn"], "flower status: no such option '--jsn'. Did you mean '--json'?"),
        (["x", "--asks"], "flower: option '--asks' requires an argument."),
        (["-w"], "flower: option '-w' requires an argument."),
    ],
)  # fmt: skip
def test_a_usage_error_is_one_line_naming_the_option(
    args: list[str], line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    code, lines = invoke(*args)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(line), lines[0]
    assert snapshot(tmp_path) == before


def test_the_typo_guard_keeps_its_did_you_mean_in_two_lines_at_most(tmp_path: Path) -> None:
    code, lines = invoke("onec", "hi")
    assert code == 2 and lines == [
        "flower: 'onec' looks like a misspelt command: did you mean `flower once`?",
        "  To send it as a request, write `flower go onec hi`",
    ]


def test_help_is_unchanged() -> None:
    code, lines = invoke("--help")
    assert code == 0 and lines[0].startswith("Usage: ") and "Commands:" in lines
    code, lines = invoke("go", "--help")
    assert code == 0 and lines[0].startswith("Usage: ") and "Options:" in lines
    code, lines = invoke("db")  # a group without its subcommand still shows its help
    assert lines[0].startswith("Usage: ") and "Commands:" in lines


def test_no_help_page_shows_docstring_markup() -> None:
    """Help is read in a terminal: reStructuredText's double backticks are noise there."""
    import click

    def pages(cmd: click.Command, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        found = [path]
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                if not sub.hidden:
                    found += pages(sub, (*path, name))
        return found

    for path in pages(main, ()):
        code, lines = invoke(*path, "--help")
        assert code == 0, path
        assert not any("``" in line for line in lines), (path, [ln for ln in lines if "``" in ln])


def test_status_offers_only_the_options_that_mean_something_there() -> None:
    """``flower status`` reads: it makes no folder, runs no agent, trims nothing."""
    code, lines = invoke("status", "--help")
    text = "\n".join(lines)
    assert code == 0 and "--workspace" in text and "--run-dir" in text and "--json" in text
    for meaningless in ("--trim", "--workbench", "--verbose", "created if missing"):
        assert meaningless not in text, meaningless
    code, lines = invoke("status", "--trim")
    assert code == 2 and lines == ["flower status: no such option '--trim'."]


def test_a_workspace_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, lines = invoke("-w", str(blocker), "x")
    assert code == 2 and lines == [f"flower: -w/--workspace: Directory '{blocker}' is a file."]


# --- FLOWER_STORE_URL: checked before anything is created ----------------------------------


def _bad_urls(tmp: Path) -> list[tuple[str, str]]:
    afile = tmp / "afile"
    afile.write_text("")
    return [
        ("garbage", "is neither a database URL nor a path to a file"),
        ("sessions.db", "or ./sessions.db for a file here"),
        (f"sqlite:///{tmp}/missing/dir/x.db", f"{tmp}/missing/dir does not exist"),
        (f"{tmp}/missing/x.db", f"{tmp}/missing does not exist"),
        (f"{afile}/x.db", f"{afile} is not a folder"),
        (str(tmp), f"names the folder {tmp}, not a database file"),
        ("redis://cache:6379/0", "unknown session store URL 'redis://cache:6379/0'"),
        ("postgresql://", "names no database"),  # once: the server's default database
        ("postgresql://localhost:5432", "names no database"),
    ]


COMMANDS = [
    ["-w", "{ws}", "--timeout", "0", "make x"],
    ["-w", "{ws}", "continue"],
    ["status", "-w", "{ws}"],
    ["status", "--all"],
    ["once", "-w", "{ws}", "hi"],
    ["db", "current"],
    ["db", "upgrade"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c).replace("{ws}", "WS"))
def test_a_bad_store_url_is_one_line_and_creates_nothing(
    command: list[str],
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    args = [a.replace("{ws}", str(tmp_path / "ws")) for a in command]
    (tmp_path / "t").mkdir()
    for value, said in _bad_urls(tmp_path / "t"):
        before = snapshot(tmp_path)
        code, lines = invoke(*args, env={"FLOWER_STORE_URL": value})
        assert code == 2 and len(lines) == 1, (value, lines)
        assert "FLOWER_STORE_URL" in lines[0] and said in lines[0], (value, lines[0])
        assert snapshot(tmp_path) == before, value  # not even the workspace
    assert scripted_model.requests == []


#: Refusals that come after the run folder (and its store) were opened.
LATE_REFUSALS = [
    [""],
    ["go", "   "],
    ["-w", "{ws}/new/deeper", ""],  # the folders -w made go too
    ["once", "--resume", "no-such-session", "hi"],
]


@pytest.mark.parametrize("command", LATE_REFUSALS, ids=lambda c: " ".join(c) or "empty")
def test_a_refusal_after_the_store_opened_leaves_nothing_behind(
    command: list[str],
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    before = snapshot(tmp_path)
    code, lines = invoke(*[a.replace("{ws}", str(tmp_path)) for a in command])
    assert code == 2 and len(lines) == 1, lines
    assert snapshot(tmp_path) == before  # no runs/sessions.db, no run.lock, no folders


def test_a_refusal_in_a_folder_that_has_a_run_leaves_it_as_it_was(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """Only what this process made is taken away: an existing run folder stays, even
    an empty store (someone else's, or one a later step will fill)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "keep.txt").write_text("mine")
    before = snapshot(tmp_path)
    code, _ = invoke("-w", str(tmp_path), "")
    assert code == 2
    after = snapshot(tmp_path)
    assert (runs / "keep.txt").read_text() == "mine"
    assert {k: v for k, v in after.items() if k in before} == before


def test_status_with_a_shared_store_that_does_not_answer_says_so(tmp_path: Path) -> None:
    """Not "nothing has run": the store that would know cannot be asked."""
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"postgresql://127.0.0.1:{port}/test"
    for args in (["status", "-w", str(tmp_path)], ["status", "--all"]):
        code, lines = invoke(*args, env={"FLOWER_STORE_URL": url})
        assert code == 2 and len(lines) == 1, lines
        assert "cannot reach the session database" in lines[0], lines
        assert "nothing has run" not in lines[0]


def test_the_literal_nonexistent_folder_is_not_created(tmp_path: Path) -> None:
    root = Path("/nonexistent")
    if root.exists():
        pytest.skip("/nonexistent exists on this machine")
    code, lines = invoke(
        "status", "-w", str(tmp_path), env={"FLOWER_STORE_URL": "sqlite:////nonexistent/dir/x.db"}
    )
    assert code == 2 and lines == [
        "flower status: FLOWER_STORE_URL='sqlite:////nonexistent/dir/x.db': /nonexistent/dir"
        " does not exist (flower creates no folder for it): create it, or use e.g."
        " FLOWER_STORE_URL=sqlite:////srv/flower/sessions.db"
    ]
    assert not root.exists()


def test_good_store_urls_still_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for value in (f"sqlite:///{tmp_path}/a.db", "./b.db", f"{tmp_path}/c.db", "sqlite://"):
        code, lines = invoke("status", "--all", env={"FLOWER_STORE_URL": value})
        assert (code, lines) == (0, ["no runs in the session store yet"]), value


def test_a_store_url_from_a_workspace_env_file_is_refused_by_the_store_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line checks the environment; a value read later (from the workspace's
    ``.env``, or a Runtime made from Python) is refused by the store plugin, before the
    engine creates the file."""
    from flower.runtime.runner import Runtime
    from flower.stores.errors import StoreError

    monkeypatch.setenv("FLOWER_STORE_URL", "")  # a gap the workspace's .env fills
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("FLOWER_STORE_URL=garbage\n")
    monkeypatch.chdir(ws)
    with pytest.raises(StoreError, match="FLOWER_STORE_URL='garbage' is neither"):
        Runtime(workspace=ws, run_dir=tmp_path / "runs")
    assert sorted(p.name for p in ws.iterdir()) == [".env"]


# --- status never creates the folder it is asked about -------------------------------------


def test_status_of_a_missing_folder_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    before = snapshot(tmp_path)
    typo = tmp_path / "porj"
    for args in (["status", "-w", str(typo)], ["-w", str(typo), "status", "--json"]):
        code, lines = invoke(*args)
        assert code == 2 and lines == [
            f"flower status: -w/--workspace: no folder {typo}: check the path"
        ]
    assert snapshot(tmp_path) == before


# --- a workspace flower cannot write: refused before the run folder is touched -------------


def _without_write_permission() -> list[str]:
    """A command prefix under which this user cannot write a 0555 folder: nothing for a
    plain user; for root, ``setpriv`` dropping the capability that overrides permissions."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only folder cannot be made")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"]


@pytest.mark.e2e  # a real flower process (permissions are the process's)
def test_a_read_only_workspace_is_one_line_and_leaves_no_lock_or_store(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    prefix = _without_write_permission()
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    ro.mkdir()
    rw.mkdir()
    (ro / "app.py").write_text("print('hi')\n")
    ro.chmod(0o555)
    before = snapshot(ro, rw)
    try:
        done = subprocess.run(
            [*prefix, FLOWER, "-w", str(ro), "-r", str(rw), "--timeout", "0", "make x"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "200"},
        )
    finally:
        ro.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"flower: cannot write in {ro}: the main job keeps its brief, goal and notes in"
        f" {ro / '.flower'} and works in the folder; make it writable, or pass another"
        " -w/--workspace"
    ]
    assert snapshot(ro, rw) == before  # no run.lock, no sessions.db in the writable -r
    assert scripted_model.requests == []


def test_a_request_too_big_for_a_prompt_is_one_line_and_creates_nothing(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """A 5 MB request was taken whole (and filled the first context before a word was
    said): one line says to put it in a file, before anything exists."""
    from flower.commands.asking import MAX_ASK

    ws = tmp_path / "ws"
    ws.mkdir()
    code, lines = invoke("-w", str(ws), "--timeout", "0", "x" * (MAX_ASK + 1))
    assert code == 2 and len(lines) == 1 and "put the long part in a file" in lines[0], lines
    assert list(ws.iterdir()) == [] and scripted_model.requests == []


def test_a_dead_endpoint_is_one_line_in_seconds_and_creates_nothing(tmp_path: Path) -> None:
    """The CLI retries a refused connection ten times over three and a half minutes
    before it says so; flower shakes hands once first."""
    import time

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "sk-ant-x" * 3}
    started = time.monotonic()
    code, lines = invoke("-w", str(ws), "--timeout", "0", "make x", env=env)
    assert code == 2 and len(lines) == 1, lines
    assert f"nothing answers at 127.0.0.1:{port}" in lines[0], lines
    assert time.monotonic() - started < 30
    assert list(ws.iterdir()) == []


@pytest.mark.e2e
def test_a_key_the_api_refuses_exits_2(
    scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> None:
    """A refused key is bad input, as a missing one is (README: credentials exit 2)."""
    from flower.testing import conversation, text

    refused = text("never", fail_always=401)
    scripted_model.play([conversation("any", refused)])
    ws = tmp_path / "ws"
    ws.mkdir()
    code, lines = invoke("-w", str(ws), "--timeout", "0", "make x")
    assert code == 2, lines
