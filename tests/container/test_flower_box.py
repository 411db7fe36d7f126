"""container/flower-box: the engine command it builds, and what it refuses.

``FLOWER_BOX_PRINT=1`` is the wrapper's own dry run (it prints the command, shell-quoted,
instead of running it); bash reads that back into words here, so each test sees exactly
the argv the engine would get. test_flower_box_e2e.py runs the image for real.
"""

from __future__ import annotations

import os
import pty
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.ptys import default_signals

BOX = Path(__file__).resolve().parents[2] / "container" / "flower-box"
#: Runs the wrapper in print mode and writes the words of its command, NUL-separated.
READ_BACK = 'eval "words=($("$0" "$@"))"; printf "%s\\0" "${words[@]}"'


def box_env(home: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "FLOWER_BOX_PRINT": "1"}
    env.update(extra)
    return env


def words(cwd: Path, env: dict[str, str], *args: str) -> list[str]:
    done = subprocess.run(
        ["bash", "-c", READ_BACK, str(BOX), *args],
        cwd=cwd, env=env, capture_output=True, timeout=30, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().split("\0")[:-1]


def pairs(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == flag]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / "my proj"
    folder.mkdir(parents=True)
    return folder


def test_the_folder_is_mounted_at_its_own_path_and_flowers_words_pass_unchanged(
    project: Path,
) -> None:
    home = project.parent
    ask = '写个 hello.txt, "quoted" $HOME `and` back\\slash'
    argv = words(project, box_env(home), "--timeout", "0", ask)
    assert argv[:6] == ["docker", "run", "--rm", "--init", "--interactive", "--workdir"]
    here = str(project.resolve())
    assert argv[6] == here and f"{here}:{here}" in pairs(argv, "--volume")
    assert "--tty" not in argv  # a pipe: the engine would refuse --tty
    assert pairs(argv, "--user") == [f"{os.getuid()}:{os.getgid()}"]
    assert argv[-4:] == ["flower-box", "--timeout", "0", ask]


def test_a_terminal_gets_a_tty(project: Path) -> None:
    env = box_env(project.parent)
    pid, fd = pty.fork()
    if pid == 0:  # the child, in a new session with the pty as its terminal
        default_signals()
        os.chdir(project)
        os.execve(str(BOX), [str(BOX), "x"], env)  # stdin and stdout: the terminal
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    printed = out.decode().split()
    assert printed[:2] == ["docker", "run"] and "--tty" in printed, out


def test_credentials_travel_by_name_and_nothing_else_leaks(project: Path) -> None:
    env = box_env(
        project.parent,
        ANTHROPIC_API_KEY="sk-ant-very-secret",
        ANTHROPIC_BASE_URL="https://gateway.example",
        CLAUDE_CODE_USE_BEDROCK="1",
        AWS_REGION="eu-west-1",
        FLOWER_STORE_URL="postgresql://db/runs",
        HTTPS_PROXY="http://proxy:3128",
        DISABLE_TELEMETRY="1",
        FLOWER_IMAGE="my/flower:1",
        FLOWER_ENGINE="podman",
        FLOWER_BOX_ARGS="--network host  --memory 4g",
        SECRET_OF_ANOTHER_TOOL="do-not-pass",
    )
    argv = words(project, env)
    passed = set(pairs(argv, "--env"))
    assert passed >= {
        "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_USE_BEDROCK", "AWS_REGION",
        "FLOWER_STORE_URL", "HTTPS_PROXY", "DISABLE_TELEMETRY",
    }  # fmt: skip
    assert not passed & {"FLOWER_IMAGE", "FLOWER_ENGINE", "FLOWER_BOX_ARGS", "FLOWER_BOX_PRINT"}
    assert "SECRET_OF_ANOTHER_TOOL" not in passed
    assert not [w for w in argv if "very-secret" in w or "do-not-pass" in w]  # names only
    assert argv[0] == "podman" and "--userns=keep-id" in argv and "--user" not in argv
    assert argv[-1] == "my/flower:1"
    assert argv[argv.index("--network") + 1] == "host" and "--memory" in argv


def test_flower_setups_folder_is_shared_and_created_private_when_missing(
    project: Path, tmp_path: Path
) -> None:
    config_home = tmp_path / "xdg"
    argv = words(project, box_env(project.parent, XDG_CONFIG_HOME=str(config_home)))
    folder = config_home / "flower"
    assert f"{folder}:/home/flower/.config/flower" in pairs(argv, "--volume")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o755)  # the user's own choice is left alone
    words(project, box_env(project.parent, XDG_CONFIG_HOME=str(config_home)))
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_a_flower_env_file_is_mounted_read_only_where_the_variable_points(
    project: Path, tmp_path: Path
) -> None:
    keys = tmp_path / "keys.env"
    keys.write_text("ANTHROPIC_API_KEY=x\n", encoding="utf-8")
    argv = words(project, box_env(project.parent, FLOWER_ENV=str(keys)))
    assert f"{keys}:/run/flower.env:ro" in pairs(argv, "--volume")
    assert "FLOWER_ENV=/run/flower.env" in pairs(argv, "--env")
    assert "FLOWER_ENV" not in pairs(argv, "--env")  # the host's path would mean nothing inside


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"FLOWER_ENV": "/nowhere/keys.env"}, "FLOWER_ENV=/nowhere/keys.env is not a file"),
        ({"FLOWER_BOX_PRINT": "", "FLOWER_ENGINE": "no-such-engine"},
         "FLOWER_ENGINE=no-such-engine is not a command here"),
        ({"FLOWER_BOX_PRINT": "", "PATH": "<tools only>"}, "no container engine found"),
    ],
)  # fmt: skip
def test_what_it_cannot_do_is_one_line_and_exit_2(
    project: Path, extra: dict[str, str], message: str
) -> None:
    if extra.get("PATH") == "<tools only>":  # what the wrapper uses, and no engine
        tools = project.parent / "bin"
        tools.mkdir()
        for tool in ("id", "basename", "mkdir", "mktemp", "rm"):
            (tools / tool).symlink_to(shutil.which(tool) or tool)
        extra = {**extra, "PATH": str(tools)}
    env = box_env(project.parent, **extra)
    done = subprocess.run(
        ["/bin/bash", str(BOX), "x"], cwd=project, env=env, capture_output=True, text=True,
        timeout=30,
    )  # fmt: skip
    assert done.returncode == 2, done
    assert done.stderr.startswith("flower-box: ") and message in done.stderr
    assert done.stderr.count("\n") == 1 and not done.stdout


def test_the_shell_scripts_pass_shellcheck() -> None:
    import sys

    shellcheck = Path(sys.executable).with_name("shellcheck")  # from the dev extra
    scripts = [BOX, BOX.parents[1] / ".ci" / "run"]
    done = subprocess.run([str(shellcheck), *map(str, scripts)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
