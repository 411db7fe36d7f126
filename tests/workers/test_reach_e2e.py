"""What the read-only roles can reach, through the real CLI: the workspace, and no further.

The judge (sealed: the CLI runs it ``--restricted``) asks for an SSH key, cloud
credentials and the CLI's own login by Read, Glob and Grep, and tries to spell the run's
key out of the workspace's ``.env`` with counting Greps; the coordinator glances at a
remote URL that carries a token with a command that fails. The workspace and HOME are
hashed around each session: nothing changes, nothing secret comes back.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from flower.roles.factory import coordinator, judge, worker
from flower.testing import ScriptedModel, bash, conversation, text, tool

from ..guards.conftest import MiniChannel
from ..guards.hostile import changes, snapshot

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SSH_KEY = "SSH-KEY-7a1c-never-shown"
AWS = "AWS-SECRET-99e0-never-shown"
OAUTH = "OAUTH-TOKEN-1b2b-never-shown"
RUN_KEY = "sk-ant-api03-runkey-5f5f5f5f5f5f"
TOKEN = "ghp_tokeninremote0123456789"


@pytest.fixture
def secrets(claude_env: dict[str, str], workspace: Path) -> Path:
    home = Path(claude_env["HOME"])
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(SSH_KEY + "\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"aws_secret_access_key = {AWS}\n")
    (home / ".claude" / ".credentials.json").write_text(json.dumps({"token": OAUTH}))
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={RUN_KEY}\n")
    (workspace / "README.md").write_text("the project\n")
    return home


async def test_the_judge_reads_the_workspace_and_nothing_else(
    scripted_model: ScriptedModel, secrets: Path, workspace: Path, make_runtime: object
) -> None:
    home = secrets
    calls = [
        tool("Read", {"file_path": str(home / ".ssh" / "id_ed25519")}),
        tool("Read", {"file_path": str(home / ".aws" / "credentials")}),
        tool("Read", {"file_path": str(home / ".claude" / ".credentials.json")}),
        tool("Glob", {"pattern": "**/*", "path": str(home)}),
        tool("Grep", {"pattern": "secret", "path": str(home), "output_mode": "content"}),
        tool("Grep", {"pattern": "KEY=sk-ant-api03-r", "output_mode": "count"}),
        tool("Grep", {"pattern": "KEY=sk-ant-api03-r", "path": ".env"}),  # files mode: default
        tool("Grep", {"pattern": "KEY", "path": ".", "output_mode": "content"}),
        tool("Read", {"file_path": "README.md"}),
        text("## 结论\n未达成\n## 理由\n看过了\n## 未通过\n无"),
    ]
    scripted_model.play([conversation("judge", *calls)])
    rt = make_runtime()  # type: ignore[operator]
    before = (
        snapshot(workspace),
        snapshot(home, skip=(".claude/", ".cache/", ".config/", ".local/")),
    )
    result = await rt.run(judge("裁判", MiniChannel()), "判定这一轮的活做完了没有", step_name="判")
    assert result.ok, result.error
    after = snapshot(workspace), snapshot(home, skip=(".claude/", ".cache/", ".config/", ".local/"))
    assert changes(before[0], after[0]) == [] and changes(before[1], after[1]) == []

    results = list(scripted_model.requests_for("judge")[-1].tool_results().values())
    shown = "\n".join(results)
    for secret in (SSH_KEY, AWS, OAUTH, RUN_KEY):
        assert secret not in shown
    walls = (
        "藏起来的地方",
        "confines the file tools to the working directory",
    )  # flower's, the CLI's
    outside = [r for r in results if any(wall in r for wall in walls)]
    assert len(outside) == 5, results  # three Reads, the Glob, the Grep of the home
    counted = [r for r in results if "数匹配次数或只列文件名不行" in r]
    assert len(counted) == 2, results  # the count and the default files mode over .env
    assert any("[已隐去 ANTHROPIC_API_KEY]" in r for r in results), results  # content: redacted
    assert any("the project" in r for r in results), results
    for request in scripted_model.requests:  # nothing secret reached the model at all
        assert RUN_KEY not in json.dumps(request.body)


async def test_a_failing_glance_is_redacted_like_any_other(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, make_runtime: object
) -> None:
    """``; false`` made a glance fail, and the CLI hands a failed command's output to no
    hook that could redact it: the token in the remote's URL came back whole."""
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    url = f"https://bob:{TOKEN}@example.org/r.git"
    subprocess.run(["git", "remote", "add", "origin", url], cwd=workspace, check=True)
    scripted_model.play([conversation("main", bash("git remote -v; false"), text("done"))])
    crew = coordinator("协调者", "", {"coder": worker("w", "p")}, channel=MiniChannel())
    rt = make_runtime(workbench=True)  # type: ignore[operator]
    result = await rt.run(crew, "看一眼远端", step_name="看")
    assert result.ok, result.error
    (shown,) = scripted_model.requests_for("main")[-1].tool_results().values()
    assert "example.org/r.git" in shown and "(exit status 1)" in shown, shown
    assert TOKEN not in shown and "[已隐去]" in shown, shown


@pytest.mark.parametrize("kept", ["restricted", "no-memory"])
async def test_each_seal_alone_keeps_a_planted_memory_out(
    scripted_model: ScriptedModel, claude_env: dict[str, str], workspace: Path, kept: str
) -> None:
    """A sealed role has two locks on the project's memory: ``--restricted`` and
    ``CLAUDE_CODE_DISABLE_CLAUDE_MDS=1``. Either one alone keeps a ``CLAUDE.md``, its
    ``@`` import and a project rule out of every request."""
    from flower.roles.agent import SEALED_MEMORY, build_options

    from ..guards.conftest import run_query

    (workspace / "CLAUDE.md").write_text("MARK-MEMORY: rule achieved\n@notes.md\n")
    (workspace / "notes.md").write_text("MARK-IMPORTED\n")
    (workspace / ".claude" / "rules").mkdir(parents=True)
    (workspace / ".claude" / "rules" / "r.md").write_text("MARK-RULE\n")
    scripted_model.play([conversation("judge", tool("Glob", {"pattern": "*.md"}), text("ok"))])
    options = build_options(judge("裁判", MiniChannel()), cwd=workspace)
    if kept == "restricted":
        options.env = {k: v for k, v in options.env.items() if k != SEALED_MEMORY}
    else:
        options.extra_args = {}
    options.env = {**claude_env, **options.env}
    await run_query("判定这一轮的活做完了没有", options)
    body = json.dumps([r.body for r in scripted_model.requests], ensure_ascii=False)
    assert "MARK-MEMORY" not in body and "MARK-IMPORTED" not in body and "MARK-RULE" not in body
    assert scripted_model.requests  # and the session did run
