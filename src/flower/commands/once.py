"""``flower once "..."``: one agent, one step, no workflow.

It streams what the agent does (tool calls, text, retries with a countdown while the
network is down, handoffs, the context level) and ends with the cost and the session
id; ``flower once --resume <id> "..."`` continues that conversation. There is no lineage
here: to continue, pass the id yourself.

Ctrl-C while the agent works asks what you want to tell it; your line interrupts the
turn and the same session goes on with it (an empty line lets it carry on untouched).
A second Ctrl-C, or Ctrl-C while nothing is running (waiting for the network), quits.

Exit codes:
    0    the step succeeded
    1    the step ran and did not succeed (the error is printed)
    2    bad input: a usage error, a missing workspace, no credentials, an unknown
         ``--resume`` id, a session store that cannot be opened
    130  quit with Ctrl-C (the session id is printed so it can be resumed)

This module imports only click at load time: ``flower --help`` must stay light.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flower.commands import EXIT_FAILED, EXIT_OK, EXIT_QUIT, EXIT_USAGE
from flower.commands.startup import plural, session_elsewhere, startup_problem
from flower.core.text import one_line

if TYPE_CHECKING:
    import asyncio

    from rich.console import Console
    from rich.status import Status

    from flower.core.events import Event
    from flower.core.runtime import Runtime, StepResult

DEFAULT_TOOLS = "Read,Write,Edit,Bash,Glob,Grep"
#: Sent when ``--resume`` is given without new words.
CONTINUE = "继续。"


@click.command(name="once")
@click.argument("ask", nargs=-1)
@click.option(
    "--resume", metavar="SESSION_ID", help="Continue this session (printed by an earlier run)."
)
@click.option(
    "-w", "--workspace", default=".", show_default=True,
    type=click.Path(file_okay=False, path_type=Path), help="The folder the agent works in.",
)  # fmt: skip
@click.option(
    "-r", "--run-dir", default="runs", show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Where sessions.db and manifest.json live (relative to the current folder).",
)  # fmt: skip
@click.option("--tools", default=DEFAULT_TOOLS, show_default=True, help="Comma-separated tools.")
@click.option("--model", help="Model name (default: the CLI's).")
@click.option("--max-turns", type=click.IntRange(min=1), help="Stop after this many turns.")
@click.option(
    "--max-budget",
    type=click.FloatRange(min=0, min_open=True),
    metavar="USD",
    help="Stop past this cost.",
)
@click.option("--instructions", default="", help="Rules appended to the system prompt.")
def once(
    ask: tuple[str, ...],
    resume: str | None,
    workspace: Path,
    run_dir: Path,
    tools: str,
    model: str | None,
    max_turns: int | None,
    max_budget: float | None,
    instructions: str,
) -> None:
    """One agent, one step, no workflow: flower once "fix the failing test".

    Streams what the agent does and ends with the session id; --resume <id> continues
    it. Ctrl-C asks what to tell the agent; a second Ctrl-C quits. Exit codes: 0 done,
    1 the step failed, 2 bad input (usage, workspace, credentials, unknown id), 130 quit.
    """
    import asyncio
    import sys

    prompt = " ".join(ask).strip()
    if not prompt and not resume:
        raise click.UsageError('say what to do, e.g. flower once "fix the failing test"')
    allowed = [t.strip() for t in tools.split(",") if t.strip()]
    if not allowed:
        raise click.BadParameter(
            "name at least one tool, e.g. --tools Read,Bash", param_hint="--tools"
        )
    options = dict(model=model, max_turns=max_turns, max_budget_usd=max_budget)
    code = asyncio.run(
        _once(prompt or CONTINUE, resume, workspace, run_dir, allowed, instructions, options)
    )
    sys.exit(code)


async def _once(
    prompt: str,
    resume: str | None,
    workspace: Path,
    run_dir: Path,
    tools: list[str],
    instructions: str,
    options: dict[str, Any],
) -> int:
    import asyncio
    import signal

    from rich.console import Console

    from flower.core.agent import AgentSpec
    from flower.core.runtime import Runtime

    out = Console(soft_wrap=True, highlight=False)
    err = Console(stderr=True, soft_wrap=True, highlight=False)
    try:
        rt = Runtime(workspace=workspace, run_dir=run_dir)
    except (RuntimeError, ValueError, OSError) as exc:  # no credentials, no folder, bad store
        err.print(f"flower once: {startup_problem(exc, run_dir)}", markup=False)
        return EXIT_USAGE
    try:
        if resume and not rt.has_session(resume):
            elsewhere = session_elsewhere(rt, resume)
            if elsewhere:
                said = (
                    f"flower once: session {resume} belongs to the workspace {elsewhere}, not"
                    f" {rt.workspace}; resume it with -w {elsewhere}"
                )
            else:
                said = (
                    f"flower once: no session {resume} in {rt.run_dir}; use the id an earlier"
                    " `flower once` printed, with the same --workspace and --run-dir"
                )
            err.print(said, markup=False)
            return EXIT_USAGE
        spec = AgentSpec(name="once", instructions=instructions, allowed_tools=tools, **options)
        view = _View(out, rt)
        loop = asyncio.get_running_loop()
        view.task = asyncio.current_task()
        view.loop = loop
        try:
            loop.add_signal_handler(signal.SIGINT, view.on_sigint)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - not on this platform
            pass
        try:
            result = await rt.run(spec, prompt, resume=resume, step_name="once", on_event=view.show)
        except asyncio.CancelledError:
            view.flush()
            last = rt.results[-1] if rt.results else None
            view.stopped(last.session_id if last else None)
            return EXIT_QUIT
        finally:
            try:
                loop.remove_signal_handler(signal.SIGINT)
            except (NotImplementedError, RuntimeError):  # pragma: no cover
                pass
        view.summary(result)
        return EXIT_OK if result.ok else EXIT_FAILED
    finally:
        rt.close()


class _View:
    """Prints events as they come; holds them back while the human is typing."""

    def __init__(self, console: Console, rt: Runtime) -> None:
        self.console = console
        self.rt = rt
        self.asking = False
        self.held: list[Event] = []
        self.task: asyncio.Task[Any] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.status: Status | None = None
        self.session: str | None = None

    # --- events ----------------------------------------------------------------------

    def show(self, event: Event) -> None:
        if self.asking:
            self.held.append(event)
            return
        if event.kind != "offline":
            self._clear_status()
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event.payload)

    def flush(self) -> None:
        held, self.held = self.held, []
        for event in held:
            self.show(event)

    def _line(self, text: str, style: str = "") -> None:
        self.console.print(text, style=style or None, markup=False)

    def _on_session(self, p: dict[str, Any]) -> None:
        self.session = p["session_id"]
        note = f" (after {p['generation']} handoff(s))" if p.get("generation") else ""
        self._line(f"session {p['session_id']}{note}", "dim")

    def _on_tool(self, p: dict[str, Any]) -> None:
        who = "  ↳ subagent " if p.get("subagent") else "⏺ "
        self._line(
            f"{who}{p['name']}({_gist(p.get('input'))})  [ctx {_k(self.rt.context)}]", "cyan"
        )

    def _on_tool_result(self, p: dict[str, Any]) -> None:
        if p.get("error"):
            self._line(f"  ✗ {p.get('text', '')}", "red")

    def _on_text(self, p: dict[str, Any]) -> None:
        if not p.get("subagent"):
            self._line(p["text"].rstrip())

    def _on_retry(self, p: dict[str, Any]) -> None:
        same = " (same session)" if p.get("resume") else ""
        self._line(
            f"⟳ attempt {p['attempt']}/{p['max_attempts']} failed ({p['class']}):"
            f" {one_line(p['error'], 160)} — retrying in {p['delay']:.1f}s{same}",
            "yellow",
        )

    def _on_offline(self, p: dict[str, Any]) -> None:
        where = f"{p['host']}:{p['port']}"
        self._line(
            f"  offline: {where} unreachable for {p['waited']:.0f}s; next probe in"
            f" {p['next_probe_in']:.0f}s (giving up after {p['max_wait']:.0f}s; Ctrl-C quits)",
            "yellow",
        )
        if self.console.is_terminal:
            self._countdown(where, p["next_probe_in"])

    def _on_interrupt(self, p: dict[str, Any]) -> None:
        self._line(f"→ told the agent: {p['said']}", "magenta")

    def _on_handoff(self, p: dict[str, Any]) -> None:
        phase = p.get("phase")
        if phase == "near":
            self._line(f"◔ context {_k(p['used'])}: a handoff comes at {_k(p['at'])}", "yellow")
        elif phase == "writing":
            self._line(f"◑ context full ({_k(p['used'])}): writing the handoff…", "yellow")
        elif phase == "done":
            kind = "a mechanical handoff" if p.get("degraded") else "the handoff"
            where = f" → {p['path']}" if p.get("path") else ""
            self._line(f"◕ {kind} is written{where}; continuing in a new session", "yellow")

    # --- the end ----------------------------------------------------------------------

    def summary(self, r: StepResult) -> None:
        self._clear_status()
        facts = (
            f"{plural(r.num_turns, 'turn')} · ${r.cost_usd:.4f} · context {_k(r.context)}"
            f" · {r.duration_s:.1f}s"
        )
        if r.attempts > 1:
            facts += f" · {r.attempts} attempts"
        if r.retired:
            facts += f" · {len(r.retired)} handoff(s)"
        if r.ok:
            self._line(f"✓ done · {facts}", "green")
        else:
            self.console.print(f"✗ failed · {facts}", style="red", markup=False)
            self.console.print(f"  {r.error}", style="red", markup=False)
        self._resume_hint(r.session_id)

    def stopped(self, sid: str | None) -> None:
        self._clear_status()
        self._line("stopped (Ctrl-C)", "yellow")
        self._resume_hint(sid or self.session)

    def _resume_hint(self, sid: str | None) -> None:
        if sid:
            self._line(f"session: {sid}")
            self._line(f'continue: flower once --resume {sid} "..."', "dim")

    # --- Ctrl-C -----------------------------------------------------------------------

    def on_sigint(self) -> None:
        if self.asking or not self.rt.interruptible:
            self._quit()
            return
        self._clear_status()
        self.asking = True
        self.console.print(
            "\n[bold]What do you want to tell it?[/bold] (Enter sends; empty lets it go on;"
            " Ctrl-C again quits)",
        )
        threading.Thread(target=self._read_line, daemon=True).start()

    def _read_line(self) -> None:
        import sys

        try:
            line: str | None = sys.stdin.readline()
        except (OSError, ValueError):
            line = None
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._heard, line or None)

    def _heard(self, line: str | None) -> None:
        if not self.asking:  # already quitting
            return
        if line is None:  # end of input: nobody to ask
            self._quit()
            return
        self.asking = False
        said = line.strip()
        if said and not self.rt.interrupt(said):
            self._line("(the turn had already ended; nothing was sent)", "dim")
        elif not said:
            self._line("(nothing said; carrying on)", "dim")
        self.flush()

    def _quit(self) -> None:
        self.asking = False
        if self.task is not None:
            self.task.cancel()

    # --- the offline countdown (terminals only) -----------------------------------------

    def _countdown(self, where: str, seconds: float) -> None:
        import time

        if self.loop is None:
            return
        deadline = time.monotonic() + seconds
        if self.status is None:
            self.status = self.console.status("")
            self.status.start()

        def tick() -> None:
            if self.status is None:
                return
            left = max(0.0, deadline - time.monotonic())
            self.status.update(f"offline: waiting for {where} · next probe in {left:.0f}s")
            if left > 0 and self.loop is not None:
                self.loop.call_later(1.0, tick)

        tick()

    def _clear_status(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def _gist(data: Any, limit: int = 100) -> str:
    if isinstance(data, dict):
        for key in ("command", "file_path", "pattern", "path", "url", "description", "prompt"):
            if data.get(key):
                return one_line(str(data[key]), limit)
        return one_line(", ".join(f"{k}={v}" for k, v in data.items()), limit)
    return one_line(str(data or ""), limit)


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}K" if tokens >= 1000 else str(tokens)
