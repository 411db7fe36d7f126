"""Swapping storage without touching code: a Runtime on Postgres, chosen by FLOWER_STORE_URL.

One step runs with the real CLI and the scripted model while the environment names a
Postgres database; a second Runtime in a fresh HOME (nothing of the first on local disk)
resumes the same session from Postgres alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from flower.roles.agent import AgentSpec
from flower.runtime.runner import Runtime
from flower.stores.url import to_url
from flower.testing import ScriptedModel, conversation, text

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.anyio]


async def test_a_step_stored_in_postgres_resumes_from_it_in_a_fresh_home(
    scripted_model: ScriptedModel,
    claude_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FLOWER_STORE_URL", pg_url)
    scripted_model.play(
        [
            conversation("later", text("you told me: tulip"), after_user="what was the word"),
            conversation("first", text("noted: the word is tulip"), first_user="remember tulip"),
        ]
    )
    spec = AgentSpec(name="memo", instructions="Be terse.", allowed_tools=[])

    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        first = await rt.run(spec, "remember tulip")
    assert first.ok and first.session_id
    assert not (tmp_path / "runs" / "sessions.db").exists(), "the SQLite default was used"

    fresh_home = tmp_path / "fresh-home"
    (fresh_home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(fresh_home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(fresh_home / ".claude"))
    with Runtime(workspace=workspace, run_dir=tmp_path / "runs") as rt:
        assert rt.has_session(first.session_id)
        second = await rt.run(spec, "what was the word?", resume=first.session_id)

    assert second.ok and second.text == "you told me: tulip"
    assert second.session_id == first.session_id
    resumed = scripted_model.last("later")
    assert "noted: the word is tulip" in resumed.text() and "remember tulip" in resumed.text()

    engine = sa.create_engine(to_url(pg_url))
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT count(*) FROM entries WHERE session_id = :s"),
                {"s": first.session_id},
            ).scalar()
    finally:
        engine.dispose()
    assert rows and rows > 4  # both steps' transcript lines live in Postgres
