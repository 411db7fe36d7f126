"""The command line's grammar: where flags may stand, what is refused, the typo guard.

Every case here stops before a model is called (a refusal, or `status`), so they run
through click's runner; test_go_pty.py drives real runs in a pseudo-terminal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from flower.cli import _first_word, main
from flower.commands.typo import distance, misspelt_command


def invoke(*args: str, cwd: Path | None = None) -> tuple[int, str]:
    runner = CliRunner()
    if cwd is None:
        result = runner.invoke(main, list(args))
    else:
        with runner.isolated_filesystem(temp_dir=cwd):
            result = runner.invoke(main, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rounds", "0", "x"], "the total number of work rounds is 1 or more"),
        (["x", "--rounds", "-2"], "the total number of work rounds is 1 or more"),
        (["--window", "0", "x"], "cannot hold the CLI's own prompt"),
        (["--window", "1000", "x"], "cannot hold the CLI's own prompt"),
        (["--asks", "-5", "x"], "is not a number of questions"),
        (["--timeout", "nan", "x"], "give a number of seconds"),
        (["-W", "x"], "-W/--workbench is for `once` and `run`"),
        (["x", "-W"], "-W/--workbench is for `once` and `run`"),
        (["-T", "--no-trim", "x"], "contradict each other"),
    ],
)
def test_nonsense_values_are_one_line_errors_never_remapped(
    args: list[str], message: str, tmp_path: Path
) -> None:
    code, output = invoke("-w", str(tmp_path / "ws"), *args)
    assert code == 2 and message in output and "Traceback" not in output


@pytest.mark.parametrize(
    ("args", "meant"),
    [(["onec", "hi"], "once"), (["plugin", "list"], "plugins"), (["stauts"], "status")],
)
def test_a_misspelt_command_asks_instead_of_starting_a_run(args: list[str], meant: str) -> None:
    code, output = invoke(*args)
    assert code == 2 and f"did you mean `flower {meant}`" in output
    assert f"flower go {' '.join(args)}" in output


def test_the_typo_guard_leaves_real_asks_alone() -> None:
    commands = ["go", "once", "run", "status", "setup", "plugins", "db", "scripted-model"]
    asks = (["add", "tests"], ["fix", "the", "bug"], ["do", "it"], ["写个", "脚本"], ["make X"])
    for ask in asks:
        assert misspelt_command(ask, commands) is None, ask
    assert misspelt_command(["onec hi"], commands) is None  # quoted: one word with a space
    assert distance("onec", "once") == 1 and distance("add", "db") == 2


def test_global_flags_are_skipped_to_find_the_subcommand() -> None:
    assert _first_word(["-w", "proj", "-v", "status"]) == 3
    assert _first_word(["--workspace=proj", "-vT", "make X"]) == 2
    assert _first_word(["--rounds", "2", "x"]) == 0  # a go flag: the ask starts here
    assert _first_word(["-w", "p"]) == 2


def test_status_reads_a_folder_without_credentials_or_a_model(tmp_path: Path) -> None:
    from flower.records.manifest import Manifest
    from flower.workflow.brief import Brief
    from flower.workflow.verdicts import Goal

    ws = tmp_path / "ws"
    ws.mkdir()
    code, output = invoke("status", "-w", str(ws))
    assert code == 0 and "nothing has run" in output
    notes = ws / ".flower" / "notes"
    Brief.parse("## 目标\nA\n## 验收标准\nB\n## 边界\nC\n## 未知与假设\nD").write(notes / "需求.md")
    Goal.parse("## 目标\nG\n## 判定清单\n- a\n- b").write(notes / "目标.md")
    rows = [
        {"step": "干活", "ok": True, "attempts": 1, "cost_usd": 0.5, "context": 1200,
         "session_id": "w1", "started_at": 1.0},
        {"step": "干活·判定#1", "ok": True, "attempts": 1, "cost_usd": 0.25, "context": 10,
         "text": "## 结论\n未达成\n## 理由\n缺测试", "session_id": "j1", "started_at": 2.0},
    ]  # fmt: skip
    Manifest(ws / "runs").write(rows)
    code, output = invoke("-w", str(ws), "status", "--json")
    report = json.loads(output)
    assert code == 0 and report["waking"] and report["checks"] == 2
    assert report["cost_usd"] == 0.75
    assert [s["step"] for s in report["steps"]] == ["干活", "干活·判定#1"]
    assert report["verdict"] == {"step": "干活·判定#1", "state": "not_yet", "reason": "缺测试"}
    code, output = invoke("status", "-w", str(ws))
    assert "last verdict (干活·判定#1): not_yet 缺测试" in output and "$0.7500" in output
    assert report["drift"] == "" and report["active"] is None and "running now" not in output


def test_status_says_who_runs_it_now_and_what_changed_since_the_last_step(
    tmp_path: Path,
) -> None:
    from flower.records.drift import record
    from flower.records.manifest import Manifest
    from flower.records.runlock import run_lock

    ws = tmp_path / "ws"
    (ws / "app.py").parent.mkdir(parents=True)
    (ws / "app.py").write_text("v1", encoding="utf-8")
    Manifest(ws / "runs").write([{"step": "干活", "ok": True, "session_id": "w1"}])
    record(ws, ws / "runs")
    (ws / "app.py").write_text("v2 by hand", encoding="utf-8")
    with run_lock(ws / "runs") as me:
        code, output = invoke("-w", str(ws), "status", "--json")
        report = json.loads(output)
        assert code == 0 and report["active"]["pid"] == me["pid"]
        assert report["drift"] == "since the last step, 1 file changed (app.py modified)"
        code, output = invoke("status", "-w", str(ws))
        assert f"running now: pid {me['pid']} on " in output
        assert "app.py modified" in output
    code, output = invoke("-w", str(ws), "status", "--json")
    assert code == 0 and json.loads(output)["active"] is None  # released with the block


def test_run_dir_defaults_to_the_workspace_so_w_never_splits_a_run(tmp_path: Path) -> None:
    import click

    from flower.commands.options import Globals, resolve_globals

    ctx = click.Context(main)
    g = resolve_globals(ctx, workspace=tmp_path / "elsewhere")
    assert isinstance(g, Globals) and g.run_dir == (tmp_path / "elsewhere" / "runs").absolute()
    assert (tmp_path / "elsewhere").is_dir()  # created


def test_status_reads_the_store_without_importing_the_sdk_or_alembic(tmp_path: Path) -> None:
    """`flower status` counts rows; importing the SDK (its MCP types) or alembic costs
    more CPU than the whole command otherwise does. Checked in a fresh interpreter."""
    import subprocess
    import sys

    from flower.records.lineage import LINEAGE_NAME
    from flower.records.manifest import Manifest
    from flower.stores.database import StoreDatabase

    ws = tmp_path / "ws"
    Manifest(ws / "runs").write([{"step": "干活", "ok": True, "session_id": "w1"}])
    lineage = {"run": "r1", "workspace": str(ws)}
    (ws / "runs" / LINEAGE_NAME).write_text(json.dumps(lineage), encoding="utf-8")
    database = StoreDatabase(ws / "runs" / "sessions.db")  # created at the schema's head
    database.record_step("r1", str(ws), "here", {"step": "干活", "ok": True, "cost_usd": 0.5})
    database.record_ruling(
        {"run_id": "r1", "workspace": str(ws), "host": "here", "step": "干活", "round": 1,
         "kind": "verdict", "state": "achieved"}
    )  # fmt: skip
    database.close()
    probe = (
        "import sys\nfrom flower.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exit:\n    code = exit.code\n"
        "print('loaded:', sorted({'claude_agent_sdk', 'mcp', 'alembic'} & set(sys.modules)))\n"
    )
    for args in (["status", "-w", str(ws)], ["status", "--all", "-w", str(ws)]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert "judge: 1 round(s) (1 achieved)" in done.stdout, done.stdout
        assert done.stdout.rstrip().endswith("loaded: []"), done.stdout
