"""A Claude Code CLI never outlives the flower that started it, however that flower ends.

A flower ended by SIGKILL (``kill -9``, the OOM killer, a supervisor's last resort) runs
no code on the way out, and its CLI is a separate process: it goes on with its turn on
its own, its commands run and its requests reach the model, while nothing of it reaches
the session store (the flower that mirrored it is gone). Worse, the run's retry resumes
the same session in a new flower while the orphan still drives it. The chaos harness
(benchmarks/chaos) caught an orphan CLI running a whole worker after its flower's kill.

So each flower process has a lifeline: a small watcher process (plain Python, no site
packages) reading a pipe from the flower. The flower tells it each CLI it starts; when
the pipe ends, which the kernel does when the flower ends, however it ends, the watcher
freezes those CLIs still running (SIGSTOP: not one more request; a SIGTERM left the
CLI time to send one, the harness saw it), kills them (SIGKILL), and sends the commands
they were running SIGTERM (SIGKILL five seconds later). Each pid's start time is checked
first so a reused pid is never hit. A flower leaving on a signal it caught takes the same
way at once (:func:`end_clis_now`): a CLI sent SIGTERM while a tool of flower's own was
waiting (a question to the human) heard the call end "interrupted" and sent the model one
more request before it stopped; the web page's squatting test caught it on a loaded
machine. POSIX; the commands are found through ``/proc``
(Linux), elsewhere only the CLI is stopped. No watcher where one cannot be started (the
CLIs then live as before).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import Any

__all__ = ["end_clis_now", "watch_new_clis"]

#: Where the SDK keeps its running CLI processes (a private name: looked up, never
#: imported, so a later SDK without it only loses the lifeline).
_SDK_TRANSPORT = "claude_agent_sdk._internal.transport.subprocess_cli"

_WATCHER = r"""
import os, signal, sys, time
for name in ("SIGINT", "SIGHUP", "SIGTERM"):  # only the pipe's end ends the watch
    signal.signal(getattr(signal, name), signal.SIG_IGN)

def started(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None

def alive(pid, when):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return when is None or started(pid) == when

watched = {}
for line in sys.stdin:
    for word in line.split():
        if word.isdigit():
            watched[int(word)] = started(int(word))
left = [p for p, w in watched.items() if alive(p, w)]
for pid in left:  # frozen first: from now on it sends nothing and runs nothing
    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        pass

def descendants(roots):
    parent = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parent[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        for child, ppid in parent.items():
            if ppid == pid and child not in found:
                found.add(child)
                todo.append(child)
    return {p: started(p) for p in found}

children = descendants(left)
for pid in left:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
for pid in children:  # its commands get the polite stop a CLI would have given them
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
deadline = time.monotonic() + 5
rest = list(children)
while rest and time.monotonic() < deadline:
    time.sleep(0.1)
    rest = [p for p in rest if alive(p, children[p])]
for pid in rest:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_watcher: subprocess.Popen[str] | None = None
_owner = 0  # the pid that started the watcher (a forked child needs its own)
_told: set[int] = set()


def _running_clis() -> list[int]:
    """The pids of the CLIs the SDK has started and not yet seen end."""
    children = getattr(sys.modules.get(_SDK_TRANSPORT), "_ACTIVE_CHILDREN", None) or ()
    running = (p for p in list(children) if getattr(p, "returncode", None) is None)
    return [pid for pid in (getattr(p, "pid", None) for p in running) if pid]


def watch_new_clis() -> None:
    """Tell this process's watcher about every CLI the SDK has started since the last
    call (started with the watcher on first use). Cheap; never raises."""
    pids = _running_clis()
    if not pids:
        return
    with _lock:
        fresh = [pid for pid in pids if pid not in _told]
        if not fresh:
            return
        watcher = _start()
        if watcher is None or watcher.stdin is None:
            return
        try:
            watcher.stdin.write("".join(f"{pid}\n" for pid in fresh))
            watcher.stdin.flush()
        except (OSError, ValueError):
            return
        _told.update(fresh)


def end_clis_now() -> None:
    """End every CLI this flower has running, now, the way the watcher ends them when
    the flower dies: frozen here first (SIGSTOP: from this instant it sends nothing),
    then the watcher's pipe is closed, so it kills them and stops their commands.

    Called from a signal handler: it never blocks on the lock a ``watch_new_clis`` it
    interrupted may hold, and never raises. With no watcher of this process's own, the
    CLIs are killed here (their commands then live on, as they did before the lifeline).
    """
    global _watcher
    pids = _running_clis()
    stop: int | None = getattr(signal, "SIGSTOP", None)
    for pid in pids:
        if stop is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, stop)
    told = _lock.acquire(timeout=0.2)
    try:
        watcher = _watcher if _owner == os.getpid() else None
        pipe = watcher.stdin if watcher is not None and watcher.poll() is None else None
        handed = pipe is not None
        if pipe is not None:
            try:
                fresh = [pid for pid in pids if pid not in _told]
                if fresh:
                    pipe.write("".join(f"{pid}\n" for pid in fresh))
                pipe.close()  # the pipe's end: the watcher's cue
            except (OSError, ValueError):
                handed = False
            _watcher = None
        if not handed:
            kill = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows has no SIGKILL
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, kill)
    finally:
        if told:
            _lock.release()


def _start() -> subprocess.Popen[str] | None:
    global _watcher, _owner
    if _watcher is not None and _owner == os.getpid() and _watcher.poll() is None:
        return _watcher
    _told.clear()
    kwargs: dict[str, Any] = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True  # a Ctrl-C or a group's SIGTERM spares it
    try:
        _watcher = subprocess.Popen(
            [sys.executable, "-S", "-c", _WATCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            close_fds=True,
            **kwargs,
        )
    except OSError:
        _watcher = None
        return None
    _owner = os.getpid()
    with contextlib.suppress(AttributeError):  # not waited for: it outlives us on purpose
        _watcher._child_created = False  # type: ignore[attr-defined]
    return _watcher
