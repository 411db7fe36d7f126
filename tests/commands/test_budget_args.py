"""``--budget`` and ``FLOWER_BUDGET`` on the command line, and how status shows a budget.

Every case stops before a model is called, so they run through click's runner; the run a
budget stops is tests/commands/test_budget_e2e.py.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from flower.cli import main
from flower.commands import EXIT_BUDGET, EXIT_FAILED, EXIT_QUIT, EXIT_USAGE
from flower.commands.status import describe_budget
from flower.kernel.events import Event
from flower.kernel.terminal import Terminal
from flower.ui.render import Renderer


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.output


@pytest.mark.parametrize("value", ["-1", "abc", "0", "nan", "inf", "$", "1e999"])
@pytest.mark.parametrize("command", [[], ["run", "flows.py:main"]])
def test_a_bad_budget_is_a_one_line_usage_error_and_nothing_is_written(
    value: str, command: list[str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    code, output = invoke(
        "-w", str(ws), *command, "--budget", value, *(["x"] if not command else [])
    )
    assert code == EXIT_USAGE and "Traceback" not in output
    (error,) = output.splitlines()  # one line: commands/usage.py
    assert error.startswith("flower") and "--budget" in error and "USD" in error
    assert not (ws / "runs").exists()


def test_a_bad_flower_budget_variable_is_refused_the_same_way(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()  # status reads a folder that exists (a missing one is a usage error)
    code, output = invoke("-w", str(ws), "x", env={"FLOWER_BUDGET": "-1"})
    assert code == EXIT_USAGE and "FLOWER_BUDGET" in output and "is no budget" in output
    assert not (ws / "runs").exists()
    code, _ = invoke("-w", str(ws), "status", env={"FLOWER_BUDGET": "abc"})  # status reads none
    assert code == 0


def test_the_flag_is_on_every_command_that_runs_a_workflow() -> None:
    for args in (["go", "--help"], ["run", "--help"]):
        code, output = invoke(*args)
        assert code == 0 and "--budget USD" in output and "FLOWER_BUDGET" in output


def test_the_budget_exit_code_stands_apart() -> None:
    assert len({EXIT_FAILED, EXIT_USAGE, EXIT_BUDGET, EXIT_QUIT}) == 4 and EXIT_BUDGET == 3


def test_status_says_spent_of_the_cap_and_how_to_go_on() -> None:
    below = {"cap": 0.5, "spent": 0.125, "left": 0.375, "reached": False}
    assert describe_budget(below) == "budget: $0.125 of $0.5 spent (25%), $0.375 left"
    reached = {"cap": 0.05, "spent": 0.0521, "left": 0.0, "reached": True}
    assert describe_budget(reached) == (
        "budget: $0.0521 of $0.05 spent, reached: the run stopped; flower --budget 0.11 goes on"
    )
    assert describe_budget({"cap": None, "spent": 2.5}) == (
        "spent $2.5, no budget (flower --budget USD sets one)"
    )
    assert describe_budget({"error": "no server"}) == "budget: unavailable (no server)"


def test_the_view_warns_near_the_cap_and_keeps_the_rest_for_verbose() -> None:
    figures = {"spent": 0.0412, "cap": 0.05, "left": 0.0088, "run": "r", "cost_usd": 0.02}
    out = io.StringIO()
    view = Renderer(Terminal(out))
    view(Event("budget", {"phase": "spent", **figures}, step="设定目标"))
    view(Event("budget", {"phase": "near", **figures}, step="设定目标"))
    view(Event("budget", {"phase": "reached", **figures}, step="干活"))  # the result says it
    assert out.getvalue() == (
        "! budget: $0.0412 of $0.05 spent (82%); the run stops at the cap, $0.0088 left\n"
    )
