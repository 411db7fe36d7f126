"""container/flower-box for real: the image, the engine, the CLI inside, the scripted model
outside on loopback (``--network host``).

Needs a container engine that answers and the image built from this checkout
(``docker build -f container/Dockerfile -t flower-box .``; ``FLOWER_TEST_IMAGE`` names
another tag). Without either the tests skip and say why: no CI machine of this project
runs an engine, so these run where one does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flower.testing import ScriptedModel, load_script
from tests.commands.terminal import Flower

REPO = Path(__file__).resolve().parents[2]
BOX = REPO / "container" / "flower-box"
DEMO = REPO / "examples" / "starter-demo.json"
IMAGE = os.environ.get("FLOWER_TEST_IMAGE", "flower-box")
ENGINE = os.environ.get("FLOWER_ENGINE") or shutil.which("docker") or shutil.which("podman")

pytestmark = pytest.mark.e2e


def _why_not() -> str:
    if sys.platform != "linux":
        return "the box tests reach the scripted model through --network host: Linux only"
    if not ENGINE:
        return "no container engine (docker or podman) on this machine"
    if subprocess.run([ENGINE, "info"], capture_output=True, timeout=30).returncode:
        return f"{ENGINE} does not answer: start its engine to run the box tests"
    inspect = [ENGINE, "image", "inspect", IMAGE]
    if subprocess.run(inspect, capture_output=True, timeout=30).returncode:
        return f"no image {IMAGE}: docker build -f container/Dockerfile -t {IMAGE} ."
    return ""


@pytest.fixture(scope="module")
def engine() -> str:
    why = _why_not()
    if why:
        pytest.skip(why)
    assert ENGINE
    return ENGINE


@pytest.fixture
def box_env(
    engine: str, scripted_model: ScriptedModel, claude_env: dict[str, str], tmp_path: Path
) -> dict[str, str]:
    """The wrapper's environment: the model's offline variables, a HOME of its own (the
    project below is outside it, so the wrapper's mount probe runs too)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, **claude_env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    env.update(FLOWER_ENGINE=engine, FLOWER_IMAGE=IMAGE, FLOWER_BOX_ARGS="--network host")
    env.pop("FLOWER_BOX_PRINT", None)
    return env


@pytest.fixture
def project(scripted_model: ScriptedModel, tmp_path: Path) -> Path:
    """An empty project, the model playing the starter demo (examples/starter-demo.json)."""
    scripted_model.play(load_script(DEMO))
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


def box(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BOX), *args], cwd=cwd, env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=300,
    )  # fmt: skip


def test_a_run_in_the_box_writes_the_project_as_you_and_the_host_continues_it(
    scripted_model: ScriptedModel, box_env: dict[str, str], project: Path
) -> None:
    done = box(box_env, project, "--timeout", "0", "写个 hello.txt")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "* done - total $" in done.stdout and "Traceback" not in done.stderr

    hello = project / "hello.txt"
    assert hello.read_text(encoding="utf-8") == "hi"
    written = [hello, project / "runs" / "manifest.json", project / "CLAUDE.md"]
    assert {(p.stat().st_uid, p.stat().st_gid) for p in written} == {(os.getuid(), os.getgid())}
    assert not list(project.glob(".flower-box-probe.*"))  # the mount probe cleaned up
    first = next(r for r in scripted_model.requests if r.turn == 0)
    assert f"{project}" in str(first.body)  # the CLI inside worked in the same path

    # The same path inside and out: the host's flower reads the box's run as its own.
    status = subprocess.run(
        [str(Path(sys.executable).with_name("flower")), "status", "-w", str(project)],
        env=box_env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert status.returncode == 0 and "judge: 2 round(s)" in status.stdout, status
    again = box(box_env, project, "status")
    assert again.returncode == 0 and "judge: 2 round(s)" in again.stdout, again


def test_ctrl_c_twice_in_a_terminal_quits_the_box_with_130(
    box_env: dict[str, str], project: Path
) -> None:
    run = Flower("写个 hello.txt", cwd=project, env=box_env, program=str(BOX))
    run.expect("CRLF", timeout=180)  # the clarifier's question, asked inside the box
    run.ctrl_c()
    run.expect("what should the agent hear")
    run.ctrl_c()
    assert run.finish() == 130, run.text[-3000:]
    assert "quit (Ctrl-C)" in run.text and "Traceback" not in run.text
    rows = (project / "runs" / "manifest.json").read_text(encoding="utf-8")
    assert "interrupted before it finished" in rows  # the rescue ran inside the box
