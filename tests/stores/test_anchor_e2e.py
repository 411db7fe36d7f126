"""flower's own cache mark in a resumed history (``stores/anchor.py``), through the real CLI.

One session of eight large results, resumed three times from the store alone (a new
``HOME`` each time), masking in steps of four so the boundary moves at the first two
resumes and not at the third. Played twice side by side against the scripted model,
whose prompt cache is the API's (``testing/usage.py``, which also refuses what the API
refuses: a fifth mark, an hour's mark after five minutes'): once with the store told the
CLI's TTL (it marks), once without (it does not). What is asserted is what reached the
model: where the marks sat, what each request read from the cache and wrote to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, project_key_for_directory, query

from flower.runtime.cache_rhythm import TTL_VARIABLE
from flower.stores.mask import MaskPolicy
from flower.stores.trim import TrimmingSessionStore
from flower.testing import RecordedRequest, ScriptedModel, bash, conversation, text

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

PROMPTS = ("start", "resume one", "resume two", "resume three", "resume four")


def script() -> list[Any]:
    return [
        conversation("r4", text("four"), after_user=PROMPTS[4]),
        conversation("r3", text("three"), after_user=PROMPTS[3]),
        conversation("r2", text("two"), after_user=PROMPTS[2]),
        conversation(
            "r1", *[bash(f"seq 1 {300 + n}") for n in range(4)], text("one"), after_user=PROMPTS[1]
        ),
        conversation(
            "main",
            *[bash(f"seq 1 {200 + n}") for n in range(8)],
            text("begun"),
            first_user=PROMPTS[0],
        ),
    ]


def marks(request: RecordedRequest) -> list[tuple[str, str]]:
    """Every cache mark of the request in the API's order: ``(where, ttl)``, where a
    tool result's mark names its call and every other mark its place."""
    out: list[tuple[str, str]] = []
    body = request.body
    for n, block in enumerate(body.get("system") or []):
        if isinstance(block, dict) and "cache_control" in block:
            out.append((f"system[{n}]", block["cache_control"].get("ttl", "5m")))
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and "cache_control" in block:
                where = block.get("tool_use_id") or f"messages[{m}]"
                out.append((where, block["cache_control"].get("ttl", "5m")))
    return out


def result_ids(request: RecordedRequest) -> list[str]:
    return [
        block["tool_use_id"]
        for message in request.messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


async def run(prompt: str, options: ClaudeAgentOptions) -> str:
    sid = ""
    async for message in query(prompt=prompt, options=options):
        sid = getattr(message, "session_id", None) or sid
    return sid


async def play(tmp_path: Path, label: str, anchored: bool) -> dict[str, Any]:
    """The session and its three resumes (a fourth on the hour's cache when anchored):
    the first request of each resume, and the store's stored lines."""
    workspace = tmp_path / label / "work"
    workspace.mkdir(parents=True)
    store = TrimmingSessionStore(
        tmp_path / label / "s.db", workspace,
        mask=MaskPolicy(enabled=True, keep_recent=2, min_chars=100, chunk=4),
    )  # fmt: skip
    seen: dict[str, Any] = {}
    with ScriptedModel(script()) as model:
        sid = ""
        rounds = len(PROMPTS) if anchored else 3
        for n, prompt in enumerate(PROMPTS[:rounds]):
            ttl = "1h" if n == 4 else "5m"
            if anchored and sid:
                store.cache_ttls[sid] = ttl
            options = ClaudeAgentOptions(
                cwd=workspace, allowed_tools=["Bash"], session_store=store,
                env={**model.env(home=tmp_path / label / f"home-{n}"), TTL_VARIABLE: ttl},
                resume=sid or None,
            )  # fmt: skip
            sid = await run(prompt, options) or sid
        for n, name in enumerate(("r1", "r2", "r3", "r4")[: rounds - 1], start=1):
            seen[PROMPTS[n]] = model.requests_for(name)[0]
        seen["outcomes"] = {r.outcome for r in model.requests}
    key = {"project_key": project_key_for_directory(str(workspace)), "session_id": sid}
    rows = store._load(key) or []
    assert rows, "nothing was stored"
    seen["stored"] = json.dumps(rows)
    return seen


async def test_a_move_reads_up_to_the_old_anchor_and_writes_only_what_follows(
    tmp_path: Path, claude_env: dict[str, str]
) -> None:
    marked = await play(tmp_path, "anchored", anchored=True)
    bare = await play(tmp_path, "unanchored", anchored=False)
    assert marked["outcomes"] == bare["outcomes"] == {"reply"}  # nothing refused

    one, two, three = (marked[p] for p in PROMPTS[1:4])
    ids = result_ids(two)
    assert len(ids) == 12
    # the first resume moved masking's boundary from 0 to 4: one mark of flower's, at the
    # fourth result; the second moved it to 8: the old anchor and the new one
    flower_marks = [(w, t) for w, t in marks(one) if w.startswith("toolu_")]
    assert flower_marks == [(ids[3], "5m")]
    assert [(w, t) for w, t in marks(two) if w.startswith("toolu_")] == [
        (ids[3], "5m"),
        (ids[7], "5m"),
    ]
    assert len(marks(two)) == 4  # with the CLI's own two: the API's limit, not past it
    # the third moved nothing: the anchor stays at the eighth
    assert [w for w, _ in marks(three) if w.startswith("toolu_")] == [ids[7]]
    # every mark carries the CLI's TTL (the API refuses an hour's after five minutes')
    assert {t for _, t in marks(one) + marks(two) + marks(three)} == {"5m"}
    assert {t for _, t in marks(marked[PROMPTS[4]])} == {"1h"}

    # the move read the history up to the old anchor from the cache and wrote only what
    # follows it; without flower's mark it read the tools and the system prompt alone
    # and wrote every message again
    read, wrote = two.usage["cache_read_input_tokens"], two.usage["cache_creation_input_tokens"]
    bare_two = bare[PROMPTS[2]]
    bare_read = bare_two.usage["cache_read_input_tokens"]
    bare_wrote = bare_two.usage["cache_creation_input_tokens"]
    assert result_ids(bare_two) == ids
    assert read > bare_read and wrote < bare_wrote
    assert read + wrote == bare_read + bare_wrote  # the same prompt, priced otherwise
    # and the load that moved nothing read everything the last request had written
    assert three.usage["cache_creation_input_tokens"] < wrote
    # the store never changes a stored row: no mark of flower's is stored
    assert "cache_control" not in marked["stored"]
