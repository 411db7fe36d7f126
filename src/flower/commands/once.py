"""``flower once "..."``: one agent, one step, no clarify, no goal, no lineage.

It runs in the same terminal as the main job (one output path, the input line, Ctrl-C
asks what to tell the agent and a second one quits) and ends with the session id;
``flower once --resume <id> "..."`` continues that conversation and ``--fork`` continues
a copy of it. To continue, pass the id yourself: ``once`` keeps no lineage.

Exit codes:
    0    the step succeeded
    1    the step ran and did not succeed (the error is printed)
    2    bad input: a usage error, a missing workspace, no credentials, an unknown
         ``--resume`` id, a session store that cannot be opened
    130  quit with Ctrl-C (the session id is printed so it can be resumed)

This module imports only click at load time: ``flower --help`` must stay light.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from flower.commands import EXIT_USAGE
from flower.commands.options import Globals, SandboxChoice, sandbox_options, with_globals

if TYPE_CHECKING:
    from flower.runtime.runner import Runtime

DEFAULT_TOOLS = "Read,Write,Edit,Bash,Glob,Grep"
#: Sent when ``--resume`` is given without new words (``CONTINUE_EN`` in English).
CONTINUE = "继续。"
CONTINUE_EN = "Carry on."
#: The permission modes the CLI knows (``bypassPermissions`` refuses to run as root).
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
STEP = "once"


@click.command(name="once")
@with_globals
@click.argument("ask", nargs=-1)
@click.option(
    "--resume", metavar="SESSION_ID", help="Continue this session (an earlier run printed it)."
)
@click.option(
    "--fork", is_flag=True, help="With --resume: continue a copy, leave the original as it is."
)
@click.option("-i", "--instructions", default="", help="Rules appended to the system prompt.")
@click.option(
    "-t",
    "--tools",
    default=DEFAULT_TOOLS,
    show_default=True,
    help="The only tools the agent may use, comma-separated (every other is refused).",
)
@click.option(
    "-p",
    "--permission-mode",
    type=click.Choice(PERMISSION_MODES),
    default="acceptEdits",
    show_default=True,
    help="How the CLI asks before edits and commands.",
)
@click.option(
    "-b",
    "--max-budget",
    type=click.FloatRange(min=0, min_open=True),
    metavar="USD",
    help="Stop past this cost.",
)
@click.option("--model", help="Model name (default: the CLI's).")
@click.option("--max-turns", type=click.IntRange(min=1), help="Stop after this many turns.")
@sandbox_options
def once(
    ask: tuple[str, ...],
    resume: str | None,
    fork: bool,
    instructions: str,
    tools: str,
    permission_mode: str,
    max_budget: float | None,
    model: str | None,
    max_turns: int | None,
    g: Globals,
    sandbox: SandboxChoice,
) -> None:
    """One agent, one step, no workflow: flower once "fix the failing test".

    Ends with the session id; --resume <id> continues it, --fork continues a copy.
    Ctrl-C stops the turn and asks what to tell the agent (Enter: go on with nothing
    added); a second Ctrl-C quits. Exit codes: 0 done,
    1 the step failed, 2 bad input (usage, workspace, credentials, unknown id), 130 quit.
    """  # fmt: skip
    prompt = " ".join(ask).strip()
    if not prompt and not resume:
        raise click.UsageError('say what to do, e.g. flower once "fix the failing test"')
    if fork and not resume:
        raise click.UsageError("--fork continues a copy of a session: give it --resume <id>")
    allowed = [t.strip() for t in tools.split(",") if t.strip()]
    if not allowed:
        raise click.BadParameter(
            "name at least one tool, e.g. --tools Read,Bash", param_hint="--tools"
        )
    from flower.commands.launch import drive, make_view, open_runtime
    from flower.kernel.agent_spec import AgentSpec

    spec = AgentSpec(
        name=STEP,
        instructions=instructions,
        allowed_tools=allowed,
        model=model,
        max_turns=max_turns,
        max_budget_usd=max_budget,
        permission_mode=permission_mode,
    )
    terminal, renderer, interactive = make_view(g)
    rt = open_runtime(
        g, terminal, interactive, sandbox=sandbox, bash="Bash" in allowed,
        workbench=bool(g.workbench), trim=bool(g.trim),
    )  # fmt: skip
    if rt is None:
        sys.exit(EXIT_USAGE)
    try:
        if resume and not rt.has_session(resume):
            print(f"flower once: {_unknown_session(rt, resume)}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        from flower.kernel.lang import pick

        said = prompt or pick(CONTINUE, CONTINUE_EN)
        code = drive(_one_step(spec, said, resume, fork), rt, terminal, renderer, interactive)
        last = rt.results[-1].session_id if rt.results else None
        if last:
            terminal.line(f"session: {last}")
            terminal.line(f'continue: flower once --resume {last} "..."', "dim")
    finally:
        rt.close()
    sys.exit(code)


def _one_step(spec: Any, prompt: str, resume: str | None, fork: bool) -> Any:
    """The step as a one-step workflow (no lineage), attached to ``resume`` when given."""
    from flower.workflow.base import Step, Workflow

    if resume is None:
        return Workflow([Step(STEP, spec, prompt)], name=STEP, continuous=False)
    given = "--resume"
    step = Step(STEP, spec, prompt, resume_from=given, fork=fork)
    return Workflow([step], name=STEP, continuous=False, context={"_sessions": {given: resume}})


def _unknown_session(rt: Runtime, resume: str) -> str:
    from flower.commands.startup import session_elsewhere

    elsewhere = session_elsewhere(rt, resume)
    if elsewhere:
        return (
            f"session {resume} belongs to the workspace {elsewhere}, not {rt.workspace};"
            f" resume it with -w {elsewhere}"
        )
    return (
        f"no session {resume} in {rt.run_dir}; use the id an earlier `flower once` printed,"
        " with the same --workspace and --run-dir"
    )


__all__ = ["CONTINUE", "CONTINUE_EN", "DEFAULT_TOOLS", "once"]
