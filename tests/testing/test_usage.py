"""The scripted model bills the way the API does: tokens, the prompt cache, list prices."""

from __future__ import annotations

from typing import Any

import pytest

from flower.testing.prices import cost_of, price_of
from flower.testing.usage import Clock, PromptCache

TOOLS = [{"name": f"tool{n}", "description": "does a thing " * 300} for n in range(3)]


def body(*messages: dict[str, Any], marker: bool = True) -> dict[str, Any]:
    """A request shaped like the CLI's: tools, a marked system prompt, messages with the
    newest one's last block marked."""
    msgs = [dict(m) for m in messages]
    if marker and msgs and isinstance(msgs[-1]["content"], list):
        last = dict(msgs[-1]["content"][-1], cache_control={"type": "ephemeral"})
        msgs[-1] = {**msgs[-1], "content": [*msgs[-1]["content"][:-1], last]}
    return {
        "model": "claude-opus-5-5",
        "tools": TOOLS,
        "system": [
            {"type": "text", "text": "You are an agent.", "cache_control": {"type": "ephemeral"}}
        ],
        "messages": msgs,
    }


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def total(usage: dict[str, Any]) -> int:
    return int(
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )


def test_a_conversation_writes_its_prefix_once_then_reads_it() -> None:
    cache = PromptCache()
    first = cache.account(body(user("fix the parser " * 50)))
    assert first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] == total(first)  # all of it marked
    second = cache.account(body(user("fix the parser " * 50), said("done"), user("now the lexer")))
    assert second["cache_read_input_tokens"] == total(first)  # the whole old prompt
    assert 0 < second["cache_creation_input_tokens"] < 40  # only what is new
    assert total(second) > total(first)


def test_a_change_to_old_content_rewrites_everything_after_the_system_prompt() -> None:
    cache = PromptCache()
    old = [user("look " * 400), said("seen"), user("go on")]
    cache.account(body(*old))
    changed = cache.account(body(user("[masked]"), said("seen"), user("go on")))
    system_and_tools = cache.account({**body(user("x")), "messages": []})
    assert changed["cache_read_input_tokens"] == total(system_and_tools)
    assert changed["cache_creation_input_tokens"] > 0


def test_entries_expire_after_their_ttl_and_a_read_refreshes_them() -> None:
    clock = Clock()
    cache = PromptCache(clock)
    prompt = body(user("hello " * 600))
    cache.account(prompt)
    clock.advance(200)
    assert cache.account(prompt)["cache_read_input_tokens"] > 0  # read: refreshed
    clock.advance(200)  # 400 s after the write, 200 after the read
    assert cache.account(prompt)["cache_read_input_tokens"] > 0
    clock.advance(301)
    cold = cache.account(prompt)
    assert cold["cache_read_input_tokens"] == 0 and cold["cache_creation_input_tokens"] > 0


def test_an_hour_ttl_is_billed_apart_and_lives_an_hour() -> None:
    clock = Clock()
    cache = PromptCache(clock)
    prompt = body(user("hello " * 600))
    prompt["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    first = cache.account(prompt)
    assert first["cache_creation"]["ephemeral_1h_input_tokens"] > 0
    clock.advance(1800)
    assert cache.account(prompt)["cache_read_input_tokens"] > 0


def test_without_markers_nothing_is_cached() -> None:
    cache = PromptCache()
    plain = {"model": "m", "messages": [{"role": "user", "content": "hi " * 2000}]}
    for _ in range(2):
        usage = cache.account(plain)
        assert usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0
        assert usage["input_tokens"] > 1000


def test_list_prices_follow_the_page_and_the_cli() -> None:
    million = 1_000_000
    opus = {"input_tokens": million, "output_tokens": million}
    assert cost_of(opus, "claude-opus-5-5") == pytest.approx(24.0)
    assert cost_of({"cache_read_input_tokens": million}, "claude-opus-5-5") == pytest.approx(0.2)
    assert cost_of({"cache_creation_input_tokens": million}, "claude-sonnet-4-5") == 3.75
    hour = {
        "cache_creation_input_tokens": million,
        "cache_creation": {"ephemeral_1h_input_tokens": million},
    }
    assert cost_of(hour, "claude-haiku-4-5") == pytest.approx(2.0)
    assert price_of("claude-opus-4-6-20260101").input == 5.0
    assert price_of(None) == price_of("claude-opus-5-5")


def test_a_block_with_its_keys_in_another_order_is_another_prompt() -> None:
    """The API matches what was sent: a history read back with its keys reordered (as
    JSONB did) reads nothing of the cache after the first reordered block."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}
    reordered = {"id": "toolu_1", "input": {"file_path": "a"}, "name": "Read", "type": "tool_use"}
    answer = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x " * 2000}
    history = [user("read a " * 200), {"role": "assistant", "content": [call]}]
    cache = PromptCache()
    cache.account(body(*history, {"role": "user", "content": [answer]}))
    same = cache.account(
        body(*history, {"role": "user", "content": [answer]}, said("ok"), user("go"))
    )
    moved = [history[0], {"role": "assistant", "content": [reordered]}]
    other = cache.account(
        body(*moved, {"role": "user", "content": [answer]}, said("ok"), user("go"))
    )
    assert other["cache_read_input_tokens"] < same["cache_read_input_tokens"]
    assert other["cache_creation_input_tokens"] > 2000
