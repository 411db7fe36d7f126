"""The Runtime's extras without the CLI: rescue bookkeeping, the signal handlers (in real
child processes, with real signals), the cross-thread interrupt switch, add_dirs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import anyio
import pytest

from flower.kernel.result import KILLED, StepResult
from flower.records.workbench import Workbench
from flower.roles.agent import AgentSpec
from flower.runtime.attempt import Live, extra_dirs
from flower.runtime.runner import Runtime
from flower.runtime.signals import rescue_on_signals


def rows(rt: Runtime) -> list[dict]:
    return json.loads(rt.manifest_path.read_text()) if rt.manifest_path.exists() else []


def test_rescue_writes_the_step_in_flight_once(workspace: Path, tmp_path: Path) -> None:
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        rt.rescue()  # nothing in flight: nothing written, nothing raised
        assert not rt.manifest_path.exists()
        done = StepResult("确认需求", session_id="s0", ok=True, started_at=1.0, ended_at=2.0)
        rt.results.append(done)
        flying = StepResult("干活", session_id="s1", started_at=time.time(), error="HTTP 529")
        rt._current = flying  # what run() records when a step starts

        rt.rescue()
        rt.rescue()  # idempotent
        first = rows(rt)
        assert [r["step"] for r in first] == ["确认需求", "干活"]
        row = first[1]
        assert (row["ok"], row["error"], row["session_id"]) == (False, KILLED, "s1")
        assert row["errors"] == ["HTTP 529", KILLED] and row["ended_at"] >= row["started_at"]
        assert row["run"] == rt.run_id

        rt._finish(flying, None)  # the run unwinding after the signal: no second row
        assert [r["step"] for r in rows(rt)] == ["确认需求", "干活"]
        assert rows(rt)[1]["error"] == KILLED

        # A step that had ended, its row not yet written, keeps its own outcome.
        ended = StepResult("设定目标", session_id="s2", ok=True, started_at=3.0, ended_at=4.0)
        rt._current = ended
        rt.rescue()
        (row,) = [r for r in rows(rt) if r["step"] == "设定目标"]
        assert (row["ok"], row["error"], len(rows(rt))) == (True, None, 3)


def test_rescue_never_raises(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("where the run dir should be")
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        rt._current = StepResult("干活")
        rt.manifest.run_dir = blocker / "sub"  # cannot be made
        rt.manifest.path = blocker / "sub" / "manifest.json"
        rt.rescue()
    assert "could not rescue '干活'" in capsys.readouterr().err


def test_total_cost_sums_the_results(workspace: Path, tmp_path: Path) -> None:
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        rt.results += [StepResult("a", cost_usd=0.25), StepResult("b", cost_usd=1.5)]
        assert rt.total_cost() == 1.75


def test_context_of_a_store_that_keeps_no_levels_is_zero(workspace: Path, tmp_path: Path) -> None:
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        real = rt.store
        rt.store = object()  # type: ignore[assignment]
        try:
            assert rt.context_of("any") == 0
        finally:
            rt.store = real


def test_add_dirs_only_for_an_external_workbench_the_agent_uses(
    workspace: Path, tmp_path: Path
) -> None:
    uses = AgentSpec(name="w", instructions="")
    ignores = AgentSpec(name="j", instructions="", workbench=False)
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs", workbench=True) as rt:
        assert rt.workbench is not None
        assert extra_dirs(rt, uses) == [str(tmp_path / "runs" / "workbench")]
        assert extra_dirs(rt, ignores) is None
        rt.workbench = Workbench(workspace)  # <ws>/.flower: inside, nothing to grant
        assert extra_dirs(rt, uses) is None
        rt.workbench = None
        assert extra_dirs(rt, uses) is None


async def _wait_set(event: anyio.Event) -> bool:
    with anyio.move_on_after(10):
        await event.wait()
        return True
    return False


def test_live_interrupt_from_another_thread_wakes_the_sleeping_loop() -> None:
    async def main() -> tuple[bool, bool, float, str | None, bool]:
        live = Live()
        stop = anyio.Event()
        assert not live.interrupt("too early") and not live.running
        live.open(stop)
        answers: list[bool] = []

        def human() -> None:
            time.sleep(0.5)  # the loop is asleep in its selector by now
            answers.append(live.interrupt("stop please"))

        other = threading.Thread(target=human)
        started = time.monotonic()
        other.start()
        was_set = await _wait_set(stop)
        took = time.monotonic() - started
        other.join()
        said = live.close()
        return answers[0], was_set, took, said, live.interrupt("after the turn")

    returned, was_set, took, said, late = anyio.run(main)
    assert (returned, was_set, said, late) == (True, True, "stop please", False)
    assert took < 3, "set from the other thread without waking the loop"


def test_live_interrupt_after_the_loop_closed_is_refused() -> None:
    live = Live()

    async def open_only() -> None:
        live.open(anyio.Event())

    anyio.run(open_only)  # the loop is gone, the turn was never closed
    answers: list[bool] = []
    other = threading.Thread(target=lambda: answers.append(live.interrupt("anyone?")))
    other.start()
    other.join()
    assert answers == [False]


HANDLER_CHILD = textwrap.dedent(
    """
    import signal, sys, time, anyio
    from flower.runtime.attempt import Live

    async def main():
        live, stop, got = Live(), anyio.Event(), []
        live.open(stop)
        signal.signal(signal.SIGALRM, lambda *_: got.append(live.interrupt("from a handler")))
        if sys.argv[1] == "inside":
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            with live._lock:  # the loop's thread is inside open()/close() when it lands
                time.sleep(0.3)
        else:  # the loop asleep in its selector, nothing else due for 10 s
            signal.setitimer(signal.ITIMER_REAL, 0.3)
        started = time.monotonic()
        with anyio.move_on_after(10):
            await stop.wait()
        print(got, stop.is_set(), time.monotonic() - started < 3, live.close(), flush=True)

    anyio.run(main)
    """
)


@pytest.mark.parametrize("where", ["inside", "asleep"])
def test_live_interrupt_from_a_signal_handler_in_the_loops_thread(where: str) -> None:
    # signal.signal handlers run in the loop's thread between two bytecodes: one landing
    # while that thread holds the lock must not wait for it, and one landing while the
    # loop sleeps must wake it (a plain set() would wait for the CLI's next output).
    out = subprocess.run(
        [sys.executable, "-c", HANDLER_CHILD, where], capture_output=True, text=True, timeout=20
    )
    assert out.stdout.split() == ["[True]", "True", "True", "from", "a", "handler"], out.stderr


def test_rescue_on_signals_restores_handlers_and_needs_the_main_thread() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGHUP, signal.SIGTERM)}
    with rescue_on_signals(lambda: None):
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before

    errors: list[BaseException] = []

    def enter() -> None:
        try:
            with rescue_on_signals(lambda: None):
                pass
        except RuntimeError as exc:
            errors.append(exc)

    t = threading.Thread(target=enter)
    t.start()
    t.join()
    assert len(errors) == 1 and "main thread" in str(errors[0])


SIGNAL_CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from flower.runtime.signals import rescue_on_signals

    mode, grace = sys.argv[1], float(sys.argv[2])
    # the disposition under test is the child's own: a suite started under nohup hands
    # every child an ignored SIGHUP, which rescue_on_signals rightly leaves ignored
    signal.signal(signal.SIGHUP, signal.SIG_IGN if mode == "nohup" else signal.SIG_DFL)

    def rescue():
        print("RESCUED", flush=True)
        if mode == "failing":
            raise OSError("disk gone")

    with rescue_on_signals(rescue, grace=grace):
        try:
            print("READY", flush=True)
            time.sleep(30)
        finally:
            print("UNWOUND", flush=True)
            if mode == "stuck":
                time.sleep(30)  # cleanup that never ends: the watchdog must end it
    print("AFTER", flush=True)
    """
)


def run_child(
    mode: str, *signals: int, grace: float = 1.0, between: tuple[str, ...] = ()
) -> tuple[int, list[str], float]:
    """Send ``signals`` to a child in ``mode``, 0.3 s apart; with ``between``, each next
    signal only once the child printed those lines after the first (two signals of one
    kind that reach a process before it runs its handler are one signal: on a loaded
    machine 0.3 s was not always enough for the child to run the first)."""
    child = subprocess.Popen(
        [sys.executable, "-c", SIGNAL_CHILD, mode, str(grace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "READY"
    started = time.monotonic()
    seen: list[str] = []
    for n, sig in enumerate(signals):
        child.send_signal(sig)
        if n == 0 and between:
            seen = [child.stdout.readline().strip() for _ in between]
            assert seen == list(between)
        time.sleep(0.3)
    code = child.wait(timeout=30)
    return code, seen + child.stdout.read().split(), time.monotonic() - started


def test_sigterm_rescues_unwinds_and_exits_143() -> None:
    code, out, _ = run_child("plain", signal.SIGTERM)
    assert code == 143 and out == ["RESCUED", "UNWOUND"]


def test_a_failing_rescue_still_exits() -> None:
    code, out, _ = run_child("failing", signal.SIGTERM)
    assert code == 143 and out == ["RESCUED", "UNWOUND"]


def test_a_stuck_cleanup_is_ended_by_the_watchdog() -> None:
    code, out, took = run_child("stuck", signal.SIGTERM)
    assert code == 143 and out == ["RESCUED", "UNWOUND"] and took < 10


def test_a_second_signal_while_unwinding_exits_at_once() -> None:
    code, out, took = run_child(
        "stuck", signal.SIGHUP, signal.SIGHUP, grace=30.0, between=("RESCUED", "UNWOUND")
    )
    assert code == 129 and out == ["RESCUED", "UNWOUND"] and took < 5


def test_an_ignored_hangup_stays_ignored() -> None:
    code, out, _ = run_child("nohup", signal.SIGHUP, signal.SIGTERM)
    assert code == 143 and out == ["RESCUED", "UNWOUND"]


def test_the_child_sees_no_handler_after_the_block() -> None:
    script = textwrap.dedent(
        """
        import signal
        from flower.runtime.signals import rescue_on_signals
        with rescue_on_signals(lambda: None):
            pass
        print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def test_what_stopped_a_step_is_said_in_words_not_a_class_name() -> None:
    import asyncio

    from flower.kernel.result import STOPPED, stopped_by

    assert stopped_by(KeyboardInterrupt()) == "stopped: interrupted before it finished"
    assert stopped_by(asyncio.CancelledError()) == stopped_by(KeyboardInterrupt())
    assert stopped_by(SystemExit(143)) == "stopped: the process was exiting"
    assert stopped_by(RuntimeError("disk\nfull  now")) == "stopped: RuntimeError: disk full now"
    assert stopped_by(RuntimeError()) == "stopped: RuntimeError"
    assert len(stopped_by(ValueError("x" * 500))) == len(STOPPED) + len("ValueError: ") + 200
