"""Running a goal's runnable checks, flower itself, where no check can change anything.

The judge reads; flower runs. After each work round, before the judge rules, every
runnable check of the goal (:mod:`flower.workflow.checks`) runs in a throwaway view of the
workspace: a copy of it (flower's own state left out), mounted by bubblewrap at the
workspace's own path, so a check that deletes files, writes elsewhere or leaves a daemon
behind changes nothing that outlives it. Inside:

- the root file system read-only, ``/tmp`` and ``$HOME`` fresh and empty, the homes and
  the system's secrets hidden as the workers' sandbox hides them (the toolchain folders
  shown again, :func:`flower.roles.sandbox.read_roots`), secret-named variables unset;
- no network (a namespace of its own) and a process namespace of its own: when the
  check ends, or is killed at its timeout, everything it started ends with it;
- the held-out scripts, read-only, at ``$FLOWER_HELD_OUT`` (:mod:`flower.workflow.held_out`).

Each check has a timeout (``check_timeout``) and all of a round's checks one more
(``total_timeout``); its output (stdout and stderr together) is capped and redacted, and
its last lines kept. A check that could not run here (a command that does not exist,
the sandbox that would not start) is ``cannot_run``, never passed. Where bubblewrap is
not there (``Sandbox(enabled=False)``) the checks run in the copy as their own process
group with a fresh ``HOME``, and say so (``isolated=False``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.kernel.redact import current as current_redactor
from flower.kernel.redact import is_secret_name
from flower.workflow.checks import HELD_OUT_VAR, Runnable

__all__ = ["CheckResult", "run_checks"]

#: Seconds one check may run, and all of a round's checks together.
CHECK_TIMEOUT = 120.0
TOTAL_TIMEOUT = 600.0
#: Characters of a check's output read at most, and kept for the judge and the ledger.
MAX_OUTPUT = 256_000
TAIL = 2_000
#: Where a check finds the held-out scripts and its ``HOME``, inside its sandbox.
HELD_OUT_MOUNT = "/tmp/flower-held-out"
CHECK_HOME = "/tmp/flower-check-home"
#: Where the middle of an over-long output was dropped.
_CUT = b"\n[... flower dropped the middle of a long output ...]\n"
#: Exit statuses that mean the command could not be found or run (bash's).
_CANNOT = {126: "the command could not be run", 127: "the command does not exist here"}


@dataclass(frozen=True)
class CheckResult:
    """What one runnable check showed.

    ``state``: ``passed``, ``failed`` or ``cannot_run``; ``status``: the exit status
    (``None`` for a file check, a timeout or a check that never started); ``seconds``:
    how long it took; ``tail``: the end of its output, redacted; ``why``: one line, why
    it failed or could not run ("" when it passed); ``isolated``: it ran in bubblewrap.
    """

    index: int
    text: str
    command: str
    state: str
    status: int | None
    seconds: float
    tail: str = ""
    why: str = ""
    isolated: bool = True

    @property
    def passed(self) -> bool:
        return self.state == "passed"

    def payload(self) -> dict[str, Any]:
        return {
            "index": self.index, "check": self.text, "command": self.command,
            "state": self.state, "status": self.status, "seconds": round(self.seconds, 3),
            "tail": self.tail, "why": self.why, "isolated": self.isolated,
        }  # fmt: skip


async def run_checks(
    checks: Iterable[Runnable],
    workspace: Path,
    *,
    leave_out: Iterable[Path] = (),
    held_out: Path | None = None,
    sandboxed: bool = True,
    check_timeout: float = CHECK_TIMEOUT,
    total_timeout: float = TOTAL_TIMEOUT,
    environ: Mapping[str, str] | None = None,
) -> list[CheckResult]:
    """Run ``checks`` one after another, each in its own copy of ``workspace`` (without
    ``leave_out``: flower's state), and say what each showed."""
    env = dict(os.environ if environ is None else environ)
    results: list[CheckResult] = []
    deadline = time.monotonic() + total_timeout
    for check in checks:
        left = deadline - time.monotonic()
        if left <= 0:
            results.append(_cannot(check, "the round's time for checks ran out", sandboxed))
            continue
        if check.path:
            results.append(_file_check(check, workspace))
            continue
        wait = min(check_timeout, left)
        ran = await _run_one(check, workspace, list(leave_out), held_out, sandboxed, wait, env)
        results.append(ran)
    return results


def _cannot(check: Runnable, why: str, isolated: bool) -> CheckResult:
    return CheckResult(
        check.index, check.text, check.command, "cannot_run", None, 0.0, "", why, isolated
    )


def _file_check(check: Runnable, workspace: Path) -> CheckResult:
    path = Path(check.path)
    there = (path if path.is_absolute() else workspace / path).exists()
    why = "" if there else f"{check.path} does not exist"
    state = "passed" if there else "failed"
    return CheckResult(check.index, check.text, "", state, None, 0.0, "", why)


async def _run_one(
    check: Runnable,
    workspace: Path,
    leave_out: list[Path],
    held_out: Path | None,
    sandboxed: bool,
    timeout: float,
    env: dict[str, str],
) -> CheckResult:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="flower-check-") as scratch:
        view = Path(scratch) / "view"
        try:
            _copy(workspace, view, leave_out)
        except OSError as exc:
            return _cannot(check, f"the workspace could not be copied: {exc}", sandboxed)
        if sandboxed:
            argv, child_env = _bwrap(check, workspace, view, held_out, env)
        else:
            argv = ["bash", "-c", check.command]
            child_env = _plain_env(held_out, env, scratch)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(view) if not sandboxed else None,
                env=child_env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return _cannot(check, f"could not start ({exc})", sandboxed)
        kept = bytearray()
        reader = asyncio.create_task(_read(proc, kept))
        status: int | None = None
        try:
            await asyncio.wait_for(asyncio.shield(reader), timeout)
            status = await proc.wait()
        except TimeoutError:
            _kill(proc)
            await proc.wait()
            reader.cancel()
    text = current_redactor().redact(bytes(kept).decode("utf-8", "replace"))
    state, why = _judged(check, status, text, timeout, sandboxed)
    return CheckResult(
        check.index, check.text, check.command, state, status,
        time.monotonic() - started, text[-TAIL:], why, sandboxed,
    )  # fmt: skip


def _judged(
    check: Runnable, status: int | None, output: str, timeout: float, sandboxed: bool
) -> tuple[str, str]:
    """``(state, why)`` for a check that ended with ``status`` (``None``: killed at its
    timeout) and printed ``output``."""
    if status is None:
        return "failed", f"timed out after {timeout:.3g} s and was killed"
    if sandboxed and status in (1, 125) and output.startswith("bwrap:"):
        return "cannot_run", f"the check's sandbox would not start: {output.strip()[:200]}"
    if status in _CANNOT and check.status != status:
        return "cannot_run", _CANNOT[status]
    why = _mismatch(check, status, output)
    return ("failed" if why else "passed"), why


def _mismatch(check: Runnable, status: int | None, output: str) -> str:
    if check.status is not None and status != check.status:
        return f"exited {status}, the check wants {check.status}"
    missing = [text for text in check.prints if text not in output]
    if missing:
        return "its output lacks " + ", ".join(f"`{text}`" for text in missing)
    return ""


async def _read(proc: asyncio.subprocess.Process, kept: bytearray) -> None:
    """The output into ``kept`` as it comes (what a killed check printed stays): its first
    quarter of :data:`MAX_OUTPUT` and its last three quarters, the middle of a longer one
    dropped (marked), so neither a test run's summary at the end nor its first lines are
    lost, and the check never blocks on a full pipe."""
    assert proc.stdout is not None
    head = MAX_OUTPUT // 4
    dropped = False
    while chunk := await proc.stdout.read(65536):
        kept += chunk
        if len(kept) > MAX_OUTPUT:
            if not dropped:
                kept[head:head] = _CUT
                dropped = True
            start = head + len(_CUT)
            del kept[start : start + len(kept) - MAX_OUTPUT]


def _kill(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _copy(workspace: Path, view: Path, leave_out: list[Path]) -> None:
    """The throwaway view: the workspace copied whole (links kept as links), but flower's
    state (the run folder, the spill folder), which no check needs and none may read."""
    left = {p.resolve() for p in leave_out if p.exists()}

    def ignore(folder: str, names: list[str]) -> set[str]:
        base = Path(folder)
        return {n for n in names if (base / n).resolve() in left}

    shutil.copytree(workspace, view, symlinks=True, ignore=ignore, dirs_exist_ok=False)


def _scrubbed(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not is_secret_name(k)}


def _plain_env(
    view: Path, held_out: Path | None, env: Mapping[str, str], scratch: str
) -> dict[str, str]:
    home = Path(scratch) / "home"
    home.mkdir()
    out = {**_scrubbed(env), "HOME": str(home), "TMPDIR": scratch}
    if held_out is not None:
        out[HELD_OUT_VAR] = str(held_out)
    return out


def _bwrap(
    check: Runnable, workspace: Path, view: Path, held_out: Path | None, env: Mapping[str, str]
) -> tuple[list[str], dict[str, str]]:
    """bubblewrap's argv for one check, and the environment it starts with."""
    from flower.roles.sandbox import read_roots

    ws = workspace.resolve()
    hidden, shown = read_roots(ws, [], env)
    argv = [
        "bwrap", "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid",
        "--unshare-ipc", "--unshare-uts", "--ro-bind", "/", "/", "--dev", "/dev",
        "--proc", "/proc", "--tmpfs", "/tmp",
    ]  # fmt: skip
    for root in hidden:
        if root.is_dir():
            argv += ["--tmpfs", str(root)]
        elif root.exists():
            argv += ["--ro-bind", "/dev/null", str(root)]
    covered = [*hidden, Path("/tmp")]  # /tmp is a fresh tmpfs too
    path_dirs = [Path(p) for p in env.get("PATH", "").split(os.pathsep) if p]
    for place in dict.fromkeys([*shown, *path_dirs]):  # what a command needs, shown again
        if place != ws and place.exists() and any(_inside(place, c) for c in covered):
            argv += ["--ro-bind", str(place), str(place)]
    argv += ["--bind", str(view), str(ws), "--dir", CHECK_HOME]
    if held_out is not None and held_out.is_dir():
        argv += ["--ro-bind", str(held_out), HELD_OUT_MOUNT]
    argv += ["--chdir", str(ws), "bash", "-c", check.command]
    child = {**_scrubbed(env), "HOME": CHECK_HOME, "TMPDIR": "/tmp", HELD_OUT_VAR: HELD_OUT_MOUNT}
    return argv, child


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
