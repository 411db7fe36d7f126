"""The sandbox settings flower gives the CLI: what each session may write, read and reach."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from flower.records.workbench import Workbench
from flower.roles.agent import AgentSpec
from flower.roles.factory import coordinator, judge, worker
from flower.roles.sandbox import (
    Sandbox,
    SandboxUnavailable,
    checkout_entries,
    hosts,
    protected_paths,
    session_sandbox,
)
from flower.roles.walls import wall_for


def settings_for(tmp_path: Path, **kw: object) -> dict:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin", "ANTHROPIC_API_KEY": "sk-x" * 4}
    (tmp_path / "home").mkdir(exist_ok=True)
    found = Sandbox().settings(workspace=ws, environ=env, **kw)  # type: ignore[arg-type]
    assert found is not None
    return found


def test_the_sandbox_has_no_way_out_and_no_network_by_default(tmp_path: Path) -> None:
    got = settings_for(tmp_path)
    assert got["enabled"] and got["failIfUnavailable"] and got["autoAllowBashIfSandboxed"]
    assert got["allowUnsandboxedCommands"] is False  # dangerouslyDisableSandbox is ignored
    assert got["excludedCommands"] == []
    assert got["network"]["allowedDomains"] == []


def test_homes_are_hidden_and_the_workspace_and_interpreter_shown(tmp_path: Path) -> None:
    got = settings_for(tmp_path)
    home = str((tmp_path / "home").resolve())
    assert home in got["filesystem"]["denyRead"]
    shown = got["filesystem"]["allowRead"]
    assert str((tmp_path / "ws").resolve()) in shown
    assert str(Path(sys.base_prefix).resolve()) in shown  # python keeps working
    assert not [p for p in shown if p == home]


def test_toolchain_folders_of_a_home_are_shown_but_not_its_credentials(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name in (".pyenv", ".cache/pip", ".ssh", ".aws", ".gitconfig"):
        target = home / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.mkdir() if not name.startswith(".git") else target.write_text("[user]\n")
    shown = settings_for(tmp_path)["filesystem"]["allowRead"]
    assert str(home.resolve() / ".pyenv") in shown
    assert str(home.resolve() / ".cache/pip") in shown
    assert str(home.resolve() / ".gitconfig") in shown
    assert not [p for p in shown if p.endswith((".ssh", ".aws"))]


def test_a_workspace_that_holds_a_home_does_not_uncover_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "home").mkdir(parents=True)
    env = {"HOME": str(ws / "home"), "PATH": "/usr/bin"}
    got = Sandbox().settings(workspace=ws, environ=env)
    assert got is not None
    assert str(ws.resolve()) not in got["filesystem"]["allowRead"]
    assert str((ws / "home").resolve()) in got["filesystem"]["denyRead"]


def test_secret_variables_are_unset_for_commands(tmp_path: Path) -> None:
    denied = {e["name"] for e in settings_for(tmp_path)["credentials"]["envVars"]}
    assert "ANTHROPIC_API_KEY" in denied and "PATH" not in denied and "HOME" not in denied


def test_protected_paths_are_not_writable_and_a_read_only_role_writes_nothing(
    tmp_path: Path,
) -> None:
    state = tmp_path / "ws" / "runs"
    state.mkdir(parents=True)
    got = settings_for(tmp_path, protected=[state])
    assert str(state.resolve()) in got["filesystem"]["denyWrite"]
    assert str((tmp_path / "ws").resolve()) not in got["filesystem"]["denyWrite"]
    extra = tmp_path / "bench"
    judged = settings_for(tmp_path, protected=[state], writable=[extra], read_only=True)
    assert str((tmp_path / "ws").resolve()) in judged["filesystem"]["denyWrite"]
    assert judged["filesystem"]["allowWrite"] == []


def test_the_run_folder_is_protected_whole_or_around_a_workbench_inside_it(
    tmp_path: Path,
) -> None:
    ws, run = tmp_path / "ws", tmp_path / "ws" / "runs"
    run.mkdir(parents=True)
    wb = Workbench(ws)
    found = protected_paths(run, wb, [ws / ".flower" / "notes" / "目标.md"])
    assert run.resolve() in found
    assert ws.resolve() / ".flower" / "spill" in found
    assert ws.resolve() / ".flower" / "run.json" in found
    assert ws.resolve() / ".flower" / "notes" / "目标.md" in found
    inner = Workbench(ws, home=run / "workbench")
    (run / "manifest.json").write_text("[]")
    (run / "workbench").mkdir()
    around = protected_paths(run, inner)
    assert run.resolve() not in around  # the workbench inside it stays writable
    assert run.resolve() / "manifest.json" in around and run.resolve() / "sessions.db" in around
    assert not [p for p in around if p == run.resolve() / "workbench"]


def test_an_isolated_session_keeps_the_checkout_read_only_but_git_and_the_worktrees(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    for name in (".git/objects", ".claude/worktrees", ".claude/agents", "src"):
        (ws / name).mkdir(parents=True)
    (ws / "README.md").write_text("x")
    names = {p.relative_to(ws).as_posix() for p in checkout_entries(ws)}
    assert names == {".claude/agents", "README.md", "src"}


def test_which_sessions_get_a_sandbox(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    common = {"workspace": ws, "protected": [], "writable": [], "environ": {"PATH": "/usr/bin"}}
    crew = coordinator("c", "", {"coder": worker("w", "p")})
    assert session_sandbox(Sandbox(), wall_for(crew).builtin_tools(), **common) is not None
    reader = judge("j", None)
    assert session_sandbox(Sandbox(), wall_for(reader).builtin_tools(), **common) is None
    assert session_sandbox(Sandbox(False), ["Bash"], **common) is None
    runner = judge("j", None, can_run=True)
    assert runner.read_only
    got = session_sandbox(Sandbox(), wall_for(runner).builtin_tools(), read_only=True, **common)
    assert got is not None and str(ws.resolve()) in got["filesystem"]["denyWrite"]
    plain = AgentSpec(name="a", instructions="", allowed_tools=["Bash"])
    mine = session_sandbox(Sandbox(), wall_for(plain).builtin_tools(), **common)
    assert mine is not None and str(ws.resolve()) not in mine["filesystem"]["denyWrite"]


def test_a_sandbox_that_cannot_start_is_refused_never_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flower.roles import sandbox

    sandbox.missing.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap, no socat
    try:
        with pytest.raises(SandboxUnavailable, match=r"bubblewrap.*--no-sandbox"):
            session_sandbox(
                Sandbox(), ["Bash"], workspace=tmp_path, protected=[], writable=[], environ={}
            )
    finally:
        sandbox.missing.cache_clear()


@pytest.mark.parametrize("word", ["0", "false", "off", "NO"])
def test_flower_sandbox_off_words(word: str) -> None:
    assert not Sandbox.resolve(None, environ={"FLOWER_SANDBOX": word}).enabled
    assert not Sandbox.resolve(True, environ={"FLOWER_SANDBOX": word}).enabled


def test_the_sandbox_is_on_unless_turned_off() -> None:
    assert Sandbox.resolve(None, environ={}).enabled
    assert Sandbox.resolve(None, environ={"FLOWER_SANDBOX": "1"}).enabled
    assert not Sandbox.resolve(False, environ={}).enabled


def test_allowed_hosts_from_flags_and_the_environment() -> None:
    got = Sandbox.resolve(
        None,
        allow_net=["pypi.org"],
        environ={"FLOWER_ALLOW_NET": "files.pythonhosted.org, *.npmjs.org"},
    )
    assert got.allow_net == ("pypi.org", "files.pythonhosted.org", "*.npmjs.org")


@pytest.mark.parametrize("bad", ["https://pypi.org", "pypi.org/simple", "*", "."])
def test_an_allowed_host_is_a_host_name(bad: str) -> None:
    with pytest.raises(ValueError, match="host name"):
        hosts([bad])


FLOWER = str(Path(sys.executable).with_name("flower"))


def test_flower_stops_in_one_line_where_the_sandbox_cannot_start(tmp_path: Path) -> None:
    """No bubblewrap on PATH: one line with the fix and the opt-out, exit 2, nothing made."""
    import os
    import socket
    import subprocess

    ws = tmp_path / "proj"
    ws.mkdir()
    # something answers at the API's address (flower checks that first): a listener
    with socket.create_server(("127.0.0.1", 0)) as listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        env = {**os.environ, "PATH": str(tmp_path / "empty-bin"), "ANTHROPIC_BASE_URL": url}
        done = subprocess.run(
            [FLOWER, "-w", str(ws), "make x", "--timeout", "0"],
            capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert (
        "bubblewrap" in lines[0] and "--no-sandbox" in lines[0] and "FLOWER_SANDBOX=0" in lines[0]
    )
    assert list(ws.iterdir()) == []  # no run folder, no store, no workbench
