"""A process killed mid-tool, resumed from the store in a fresh HOME: the call it left
without a result reaches the model answered, in our words, with the chain intact.

Real SDK, real bundled CLI, the scripted model; the kill is a real SIGKILL of the whole
process group while the scripted ``Bash`` runs. The tests with healing off pin what the
CLI does by itself, which is what the design relies on (see ``stores/prune.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import project_key_for_directory

from flower import hookimpl
from flower.plugins import get_plugin_manager
from flower.roles.agent import AgentSpec
from flower.runtime.runner import Runtime
from flower.stores.prune import ORPHAN_NOTE
from flower.stores.sqlite import SqliteSessionStore
from flower.testing import RecordedRequest, ScriptedModel, bash, conversation, message_text, text

from ..conftest import once_per_session

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

TASK = "install the thing"
CONTINUE = "carry on after the crash"
AGAIN = "and once more"
LATER = "a later prompt the dead process had written"
BARE = "through a store that does not heal"
CALL = "toolu_main_0_0"
#: Not a bare ``sleep``: the CLI refuses a command that starts with one.
SLOW = "echo started && sleep 15"
CLI_NOTE = "[Tool call interrupted: the session ended before this call's result was recorded"

CHILD = textwrap.dedent(
    """
    import anyio, sys
    from flower.roles.agent import AgentSpec
    from flower.runtime.runner import Runtime

    async def main():
        rt = Runtime(workspace=sys.argv[1], run_dir=sys.argv[2])
        rt.on_session = lambda sid: print("SID", sid, flush=True)
        spec = AgentSpec(name="w", instructions="", allowed_tools=["Bash"])
        await rt.run(spec, sys.argv[3], step_name="干活")

    anyio.run(main)
    """
)


def stored(run_dir: Path, sid: str) -> list[dict[str, Any]]:
    db = sqlite3.connect(run_dir / "sessions.db")
    try:
        rows = db.execute(
            "select entry from entries where session_id = ? and subpath = '' order by id", (sid,)
        ).fetchall()
    finally:
        db.close()
    return [json.loads(row[0]) for row in rows]


#: A Bash call the process is killed in, then the reply to the resumed session.
KILLED_THEN_RESUMED = [
    conversation("after", text("resumed"), after_user=CONTINUE),
    conversation("main", bash(SLOW), text("never"), first_user=TASK),
]


def killed_mid_tool(model: ScriptedModel, workspace: Path, tmp_path: Path) -> tuple[Path, str]:
    """Run a step in a child process and SIGKILL it while its Bash call runs."""
    run_dir = tmp_path / "runs"
    # blanked (leaky) variables go too: a session fixture runs before the test's own env
    env = {k: v for k, v in {**os.environ, **model.env(home=tmp_path / "home-killed")}.items() if v}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(workspace), str(run_dir), TASK],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        sid = child.stdout.readline().split()[1]
        deadline = time.monotonic() + 60
        while not any(CALL in json.dumps(e) for e in stored(run_dir, sid)):
            assert time.monotonic() < deadline, "the call never reached the store"
            assert child.poll() is None, "the child ended before its call ran"
            time.sleep(0.2)
        time.sleep(1.0)  # the command is running now
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    lines = stored(run_dir, sid)
    assert not any(CALL in json.dumps(e) for e in lines if e.get("type") == "user")
    return run_dir, sid


@pytest.fixture(scope="session")
def killed_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run killed mid-tool for the whole session (it costs a process and a CLI)."""

    def make(folder: Path) -> None:
        workspace = folder / "ws"
        workspace.mkdir()
        with ScriptedModel() as model:
            model.play(KILLED_THEN_RESUMED)
            _, sid = killed_mid_tool(model, workspace, folder)
        (folder / "sid").write_text(sid)

    return once_per_session(tmp_path_factory, "killed-mid-tool", make)


@pytest.fixture
def killed(killed_once: Path, tmp_path: Path) -> tuple[Path, Path, str]:
    """(workspace, run_dir, session id) of the killed run: a private copy of its store; the
    workspace is shared (the project key is its path), and nothing here writes into it."""
    run_dir = tmp_path / "runs"
    shutil.copytree(killed_once / "runs", run_dir)
    return killed_once / "ws", run_dir, (killed_once / "sid").read_text()


async def resume(workspace: Path, run_dir: Path, sid: str, said: str, *, heal: bool) -> None:
    with Runtime(workspace=workspace, run_dir=run_dir) as rt:
        rt.store.prune_policy.heal_orphans = heal  # type: ignore[attr-defined]
        r = await rt.run(AgentSpec(name="w", instructions="", allowed_tools=["Bash"]), said,
                         step_name="干活", resume=sid)  # fmt: skip
    assert r.ok and r.session_id == sid, r.errors


class BareStore:
    """Resumes through the plain SqliteSessionStore: no pruning, no healing, no view."""

    @hookimpl(tryfirst=True)
    def flower_session_store(self, settings: Any) -> Any:
        return SqliteSessionStore(settings.run_dir / "sessions.db")


async def resume_bare(workspace: Path, run_dir: Path, sid: str, said: str) -> None:
    pm = get_plugin_manager()
    pm.register(bare := BareStore(), name="test-bare-store")
    try:
        with Runtime(workspace=workspace, run_dir=run_dir) as rt:
            assert type(rt.store) is SqliteSessionStore
            spec = AgentSpec(name="w", instructions="", allowed_tools=["Bash"])
            r = await rt.run(spec, said, step_name="干活", resume=sid)
    finally:
        pm.unregister(bare)
    assert r.ok and r.session_id == sid, r.errors


def stored_chain(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored lines from the root to the leaf, following ``parentUuid`` (a missing
    parent fails: the chain is broken there)."""
    by_id = {e["uuid"]: e for e in lines if "uuid" in e}
    leaf: dict[str, Any] | None = [e for e in lines if "uuid" in e][-1]
    out = []
    while leaf is not None:
        out.append(leaf)
        parent = leaf.get("parentUuid")
        assert parent is None or parent in by_id, f"the stored chain breaks at {parent}"
        leaf = by_id.get(parent) if parent else None
    return out[::-1]


def dangling(req: RecordedRequest) -> list[str]:
    """Calls the API would reject: not answered in the very next (user) message."""
    messages = req.messages
    bad = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        following = messages[i + 1] if i + 1 < len(messages) else {}
        content = following.get("content") if following.get("role") == "user" else None
        answered = {
            b.get("tool_use_id") for b in content or [] if isinstance(b, dict)
        } if isinstance(content, list) else set()  # fmt: skip
        bad += [u for u in uses if u not in answered]
    return bad


def result_block(req: RecordedRequest, call: str) -> dict[str, Any]:
    for message in req.messages:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("tool_use_id") == call:
                return block
    raise AssertionError(f"no result for {call} in the request")


def user_texts(req: RecordedRequest) -> list[str]:
    return [message_text(m) for m in req.messages if m.get("role") == "user"]


async def test_a_session_killed_mid_tool_resumes_with_the_call_answered_in_our_words(
    scripted_model: ScriptedModel, claude_env: dict[str, str], killed: tuple[Path, Path, str]
) -> None:
    scripted_model.play(
        [
            conversation("again", text("still here"), after_user=AGAIN),
            conversation("bare", text("bare here"), after_user=BARE),
            conversation("after", text("resumed"), after_user=CONTINUE),
        ]
    )
    workspace, run_dir, sid = killed

    await resume(workspace, run_dir, sid, CONTINUE, heal=True)
    (after,) = scripted_model.requests_for("after")
    assert dangling(after) == []
    block = result_block(after, CALL)
    assert (block.get("is_error"), after.tool_results()[CALL]) == (True, ORPHAN_NOTE)
    assert CLI_NOTE not in after.text()
    # The CLI hung its next lines under flower's healed line: that line is stored once,
    # when they arrive, so the stored chain runs unbroken from the leaf to the task.
    lines = stored(run_dir, sid)
    assert not [e for e in lines if e.get("toolDenialKind")]  # the CLI never saw an orphan
    (healed,) = [e for e in lines if e.get("flowerHealed")]
    assert stored_chain(lines)[0]["message"]["content"] == TASK
    assert healed["uuid"] in {e["uuid"] for e in stored_chain(lines)}

    # so a store that does not heal resumes the whole conversation too
    await resume_bare(workspace, run_dir, sid, BARE)
    (bare,) = scripted_model.requests_for("bare")
    assert dangling(bare) == [] and bare.tool_results()[CALL] == ORPHAN_NOTE
    texts = user_texts(bare)
    assert TASK in texts[0] and any(CONTINUE in t for t in texts) and BARE in texts[-1]

    # and the pruning store finds the call answered: the same words, no second line
    await resume(workspace, run_dir, sid, AGAIN, heal=True)
    (again,) = scripted_model.requests_for("again")
    assert dangling(again) == []
    assert again.tool_results()[CALL] == ORPHAN_NOTE
    texts = user_texts(again)
    assert TASK in texts[0] and any(CONTINUE in t for t in texts) and AGAIN in texts[-1]
    assert "resumed" in [message_text(m) for m in again.messages if m.get("role") == "assistant"]
    assert len([e for e in stored(run_dir, sid) if e.get("flowerHealed")]) == 1


async def test_without_healing_the_cli_answers_a_trailing_orphan_itself_in_english(
    scripted_model: ScriptedModel, claude_env: dict[str, str], killed: tuple[Path, Path, str]
) -> None:
    scripted_model.play(KILLED_THEN_RESUMED)
    workspace, run_dir, sid = killed

    await resume(workspace, run_dir, sid, CONTINUE, heal=False)
    (after,) = scripted_model.requests_for("after")
    assert dangling(after) == [] and after.tool_results()[CALL].startswith(CLI_NOTE)
    (written,) = [e for e in stored(run_dir, sid) if e.get("toolDenialKind") == "interrupted"]
    assert written["parentUuid"] == written["sourceToolAssistantUUID"]

    # What the CLI wrote back is reworded the next time the session is loaded.
    with Runtime(workspace=workspace, run_dir=run_dir) as rt:
        loaded = await rt.store.load({"project_key": rt.project_key, "session_id": sid})
    assert loaded is not None
    (line,) = [e for e in loaded if e.get("toolDenialKind") == "interrupted"]
    assert line["message"]["content"][0]["content"] == ORPHAN_NOTE


async def copy_with_later_lines(run_dir: Path, workspace: Path, sid: str) -> str:
    """The killed transcript as a new session, plus a prompt and a reply after the orphan."""
    lines = stored(run_dir, sid)
    call = [e for e in lines if e.get("type") == "assistant"][-1]
    context = {k: call[k] for k in ("isSidechain", "cwd", "version", "userType") if k in call}
    prompt_id, reply_id = str(uuid.uuid4()), str(uuid.uuid4())
    later = [
        {**context, "type": "user", "uuid": prompt_id, "parentUuid": call["uuid"],
         "timestamp": call["timestamp"], "message": {"role": "user", "content": LATER}},
        {**context, "type": "assistant", "uuid": reply_id, "parentUuid": prompt_id,
         "timestamp": call["timestamp"],
         "message": {**call["message"], "id": "msg_later", "stop_reason": "end_turn",
                     "content": [{"type": "text", "text": "later reply"}]}},
    ]  # fmt: skip
    new = str(uuid.uuid4())
    copied = [json.loads(json.dumps(e).replace(sid, new)) for e in [*lines, *later]]
    store = SqliteSessionStore(run_dir / "sessions.db")
    try:
        key = {"project_key": project_key_for_directory(str(workspace)), "session_id": new}
        await store.append(key, copied)  # type: ignore[arg-type]
    finally:
        store.close()
    return new


async def test_an_orphan_with_later_lines_is_dropped_by_the_cli_and_kept_by_healing(
    scripted_model: ScriptedModel, claude_env: dict[str, str], killed: tuple[Path, Path, str]
) -> None:
    scripted_model.play(KILLED_THEN_RESUMED)
    workspace, run_dir, sid = killed
    bare = await copy_with_later_lines(run_dir, workspace, sid)
    healed = await copy_with_later_lines(run_dir, workspace, sid)

    await resume(workspace, run_dir, bare, CONTINUE, heal=False)
    await resume(workspace, run_dir, healed, CONTINUE, heal=True)
    without, with_ = scripted_model.requests_for("after")

    # Measured: the CLI silently leaves the whole call out; the model forgets it ran it.
    assert CALL not in json.dumps(without.messages) and LATER in without.text()
    assert dangling(with_) == [] and with_.tool_results() == {CALL: ORPHAN_NOTE}
    assert LATER in with_.text() and "later reply" in with_.text()
    assert TASK in user_texts(with_)[0]
