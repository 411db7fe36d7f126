"""The API key stays out of the conversation, the spill, the store and the CLI's transcript,
with the real CLI printing it.

Each test is one real session (about a CPU-second each) with many assertions. The decoy
key is the CLI's ``ANTHROPIC_API_KEY`` (set through the spec's ``env``, as a user's own
variables reach the CLI) and also sits in the workspace's ``.env``; the model runs the
commands an adversarial review used to print it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flower.kernel import redact as redact_mod
from flower.records.workbench import Workbench
from flower.roles.agent import AgentSpec, build_options
from flower.roles.factory import judge, worker
from flower.stores.prune import PruningSessionStore
from flower.testing import ScriptedModel, bash, conversation, text, tool

from .conftest import MiniChannel, run_query

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

DECOY = "sk-ant-api03-E2E-DECOY-5f3a9c0d7b1e4a2f8c6d"
MARKER = "[已隐去 ANTHROPIC_API_KEY]"
#: The key the scripted environment gives the process itself (``claude_env``).
PROCESS_KEY = "sk-ant-scripted-offline"
PASSWORD = "hunter2-hunter2-hunter2"


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    redact_mod.forget_watched()
    yield
    redact_mod.forget_watched()


def agent_call(role: str) -> Any:
    task = {"description": "look", "prompt": "look", "subagent_type": role}
    return tool("Agent", {**task, "run_in_background": False})


def files_holding(root: Path, needle: str) -> list[Path]:
    """Every regular file under ``root`` whose bytes contain ``needle``."""
    raw = needle.encode()
    return [
        p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and raw in p.read_bytes()
    ]


def tool_output(line: dict[str, Any]) -> str:
    """What a stored transcript line says a tool returned (its results and the CLI's
    ``toolUseResult``), as JSON text; "" for other lines."""
    content = (line.get("message") or {}).get("content")
    blocks = (
        [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
    )
    return json.dumps([blocks, line.get("toolUseResult")], ensure_ascii=False) if blocks else ""


def stored_rows(store: PruningSessionStore) -> list[str]:
    with store._engine.connect() as conn:
        return list(conn.exec_driver_sql("SELECT entry FROM entries").scalars())


async def test_a_worker_printing_the_key_leaks_it_nowhere(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """Main thread and a subagent run ``env``, ``cat .env``, ``printenv``, a long output
    that spills, a Read of ``.env`` and a URL with a password."""
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={DECOY}\nLOG_LEVEL=debug\n")
    (workspace / "big.txt").write_text("".join(f"line {i:05d} of filler\n" for i in range(600)))
    home = Path(claude_env["HOME"])
    looks = [
        bash("env"),
        bash("cat .env"),
        bash("printenv ANTHROPIC_API_KEY"),
        bash("cat .env big.txt"),  # > 4000 characters: spilled
        tool("Read", {"file_path": str(workspace / ".env")}),
        bash(f"echo https://bob:{PASSWORD}@example.com/repo.git"),
    ]
    scripted_model.play(
        [
            conversation("sub", *looks[:3], text("worker: looked"), subagent=True),
            conversation("main", *looks, agent_call("coder"), text("done"), subagent=False),
        ]
    )
    wb = Workbench(workspace)
    store = PruningSessionStore(tmp_path / "runs" / "sessions.db", workspace=workspace)
    spec = AgentSpec(
        "工人",
        "work",
        allowed_tools=["Bash", "Read", "Agent"],
        agents={"coder": worker("looks around", "look", tools=["Bash", "Read"])},
        env={"ANTHROPIC_API_KEY": DECOY},
    )
    try:
        options = build_options(spec, cwd=workspace, workbench=wb, session_store=store)
        result = await run_query("look around", options)
        rows = stored_rows(store)
    finally:
        store.close()

    assert result.subtype == "success", result
    main = scripted_model.last("main").tool_results()
    env_seen, cat_seen, printenv_seen, spilled_seen, read_seen, url_seen = (
        main[f"toolu_main_{i}_0"] for i in range(6)
    )
    assert "CLAUDE_CONFIG_DIR=" in env_seen, env_seen  # env really ran
    assert f"ANTHROPIC_API_KEY={MARKER}" in env_seen
    assert cat_seen.startswith(f"ANTHROPIC_API_KEY={MARKER}"), cat_seen
    assert printenv_seen.strip() == MARKER
    assert f"ANTHROPIC_API_KEY={MARKER}" in read_seen
    assert url_seen.strip() == "https://bob:[已隐去]@example.com/repo.git"
    sub = scripted_model.last("sub").tool_results()
    assert f"ANTHROPIC_API_KEY={MARKER}" in sub["toolu_sub_0_0"]
    assert sub["toolu_sub_2_0"].strip() == MARKER

    # the spill: the pointer's head and the file are redacted
    assert "全文已存到" in spilled_seen and MARKER in spilled_seen
    (spill_file,) = wb.spill.glob("*.txt")
    assert spill_file.read_text().startswith(f"ANTHROPIC_API_KEY={MARKER}\n")
    assert str(spill_file) in spilled_seen

    # no request the model received holds the key or the process's key (the password is
    # in the model's own command, which it wrote: only its output is redacted, above)
    bodies = [json.dumps(r.body, ensure_ascii=False) for r in scripted_model.requests]
    assert len(bodies) >= 9
    for secret in (DECOY, PROCESS_KEY):
        assert not [b for b in bodies if secret in b], secret

    # the store, the workbench and the CLI's own transcripts in HOME
    assert len(rows) > 10 and any(MARKER in row for row in rows)
    assert not [row for row in rows if DECOY in row]
    outputs = [tool_output(json.loads(row)) for row in rows]
    assert any("https://bob:[已隐去]@example.com" in o for o in outputs)
    assert not [o for o in outputs if PASSWORD in o]  # (the model's own command has it)
    assert files_holding(workspace, DECOY) == [workspace / ".env"]
    assert files_holding(tmp_path / "runs", DECOY) == []
    transcripts = list((home / ".claude" / "projects").rglob("*.jsonl"))
    assert len(transcripts) >= 2  # the main session's and the subagent's
    assert files_holding(home, DECOY) == []


async def test_a_judge_without_workbench_reads_env_redacted_and_a_failed_call_is_the_limit(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """No workbench, so no spill guard: ``redact_guard`` alone hides the key in a Read and
    in the human's answer. A Bash call that exits non-zero is the measured limit: the
    CLI lets no hook replace a failed tool's text (PostToolUseFailure takes only
    additionalContext), so the model sees it; the store still holds it redacted."""
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY='{DECOY}'\n")
    channel = MiniChannel(answers=[f"use this key: {DECOY}"])
    scripted_model.play(
        [
            conversation(
                "main",
                tool("Read", {"file_path": str(workspace / ".env")}),
                tool("mcp__human__ask", {"question": "which key?"}),
                bash("cat .env; exit 3"),
                text("verdict: 未达成"),
            )
        ]
    )
    spec = judge("裁判", channel, can_run=True)
    spec.env = {"ANTHROPIC_API_KEY": DECOY}
    store = PruningSessionStore(tmp_path / "runs" / "sessions.db", workspace=workspace)
    try:
        await run_query("judge it", build_options(spec, cwd=workspace, session_store=store))
        rows = stored_rows(store)
    finally:
        store.close()

    requests = scripted_model.requests_for("main")
    seen = requests[-1].tool_results()
    assert f"ANTHROPIC_API_KEY='{MARKER}'" in seen["toolu_main_0_0"]
    assert seen["toolu_main_1_0"] == f"use this key: {MARKER}"
    before_failure = [json.dumps(r.body, ensure_ascii=False) for r in requests[:3]]
    assert not [b for b in before_failure if DECOY in b]
    assert DECOY in seen["toolu_main_2_0"], "the CLI's limit: a failed call is not redactable"
    assert rows and not [row for row in rows if DECOY in row]
