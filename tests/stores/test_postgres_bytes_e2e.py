"""A resume from Postgres sends the API the same bytes as a resume from SQLite.

The API's prompt cache matches exact prefixes: a line read back with its keys in another
order is another prompt. JSONB sorted every object's keys, so a resume from Postgres sent
``{"id":…,"name":…,"type":"tool_use",…}`` where the CLI had written ``{"type":
"tool_use","id":…}`` (and from SQLite sends it so). The same two steps run on each
store, the real CLI resuming each from its store alone; the resumed request's messages
are compared as the CLI serialised them, key order included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flower.roles.agent import AgentSpec
from flower.runtime.runner import Runtime
from flower.testing import ScriptedModel, conversation, text, tool

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def script(path: Path) -> list[Any]:
    return [
        conversation("later", text("it said hello"), after_user="what did it say"),
        conversation(
            "first",
            tool("Read", {"file_path": str(path)}, say="reading it"),
            text("read it"),
            first_user="read the note",
        ),
    ]


async def two_steps(
    scripted_model: ScriptedModel, workspace: Path, run_dir: Path, home: Path
) -> list[Any]:
    """Run a step that reads a file, resume it in a fresh HOME; the resumed request's
    messages, as sent."""
    note = workspace / "note.txt"
    note.write_text("hello\n")
    scripted_model.play(script(note))
    spec = AgentSpec(name="reader", instructions="Be terse.", allowed_tools=["Read"])
    with Runtime(workspace=workspace, run_dir=run_dir) as rt:
        first = await rt.run(spec, "read the note")
    assert first.ok, first.error
    (home / ".claude").mkdir(parents=True)
    with pytest.MonkeyPatch.context() as mp:  # nothing of the first CLI's files helps
        mp.setenv("HOME", str(home))
        mp.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
        with Runtime(workspace=workspace, run_dir=run_dir) as rt:
            second = await rt.run(spec, "what did it say?", resume=first.session_id)
    assert second.ok, second.error
    messages: list[Any] = scripted_model.last("later").body["messages"]
    return messages


async def test_a_resume_sends_the_same_bytes_from_either_store(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from_sqlite = await two_steps(scripted_model, workspace, tmp_path / "a", tmp_path / "h1")
    monkeypatch.setenv("FLOWER_STORE_URL", pg_url)
    from_postgres = await two_steps(scripted_model, workspace, tmp_path / "b", tmp_path / "h2")
    assert not (tmp_path / "b" / "sessions.db").exists(), "the SQLite default was used"

    def sent(messages: list[Any]) -> str:  # as the request carried them, key order kept
        return json.dumps(messages, ensure_ascii=False)

    uses = [b for m in from_postgres for b in m.get("content", []) if isinstance(b, dict)]
    assert any(b.get("type") == "tool_use" for b in uses), "the history holds a tool call"
    assert sent(from_postgres) == sent(from_sqlite)
