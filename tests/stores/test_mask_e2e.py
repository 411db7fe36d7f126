"""Through the real CLI: a masked result reaches the model as a placeholder naming a file
that holds the original, byte for byte."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions, SystemMessage, query

from flower.stores.mask import MaskPolicy
from flower.stores.prune import PruningSessionStore
from flower.stores.trim import TrimPolicy
from flower.testing import ScriptedModel, bash, conversation, text

pytestmark = pytest.mark.anyio

MASKED = re.compile(r"已移出上下文,原文在 (\S+)\]$")
#: Each command long enough (120+ characters, a trailing comment) that a masked call's
#: command goes too (``stores/mask_calls.py``).
COMMANDS = [
    f"printf 'row %s ünïcode\\r\\n' $(seq {n} {n + 60})  # {'why this command ran, ' * 5}"
    for n in range(4)
]


async def run(model: ScriptedModel, store: object, ws: Path, home: Path, prompt: str,
              resume: str | None = None) -> str:  # fmt: skip
    options = ClaudeAgentOptions(
        cwd=ws, env=model.env(home=home), allowed_tools=["Bash"], session_store=store,
        resume=resume,
    )  # fmt: skip
    sid = resume
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, SystemMessage) and message.subtype == "init":
            sid = message.data["session_id"]
    assert sid is not None
    return sid


async def test_a_masked_result_is_recovered_byte_for_byte(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    store = PruningSessionStore(
        tmp_path / "s.db", ws, policy=TrimPolicy(enabled=True),
        mask=MaskPolicy(keep_recent=1, min_chars=100, chunk=1),
    )  # fmt: skip
    script = [  # the resumed request holds both prompts: the later one's conversation first
        conversation("again", text("ok"), after_user="and now"),
        conversation("work", *(bash(c) for c in COMMANDS), text("done"), first_user="work"),
    ]
    with ScriptedModel(script) as model:
        sid = await run(model, store, ws, tmp_path / "h1", "work")
        seen = model.last("work").tool_results()  # what the model saw the first time
        await run(model, store, ws, tmp_path / "h2", "and now", resume=sid)
        resumed = model.last("again").tool_results()
        resume_request = model.last("again").body
    assert seen.keys() == resumed.keys() and len(seen) == 4
    masked = {k: v for k, v in resumed.items() if MASKED.search(v)}
    assert len(masked) == 3  # all but the newest
    for call, placeholder in masked.items():
        path = Path(MASKED.search(placeholder).group(1))
        assert path.read_bytes() == seen[call].encode()  # \r\n and all
    # the calls as the model was sent them on the resume: the masked ones' commands gone
    uses = {
        b["id"]: b["input"]["command"]
        for m in resume_request["messages"]
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_use"
    }
    assert list(uses) == list(seen)
    for call, command in uses.items():
        if call in masked:
            assert command == f"[旧参数({len(COMMANDS[0]):,} 字符)已移出]"
        else:
            assert command == COMMANDS[3]
    newest = next(k for k in resumed if k not in masked)
    assert resumed[newest] == seen[newest]
