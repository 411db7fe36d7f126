"""String and object sharing in a loaded transcript: equal values stay equal, and what
repeats line after line (pooled fields, the previous uuid, one reply's usage, id and
request id across the lines the CLI splits it into) becomes one object."""

from __future__ import annotations

import copy
import json
from typing import Any

from flower.stores.lines import RepeatedStrings

USAGE = {"input_tokens": 10, "output_tokens": 2, "cache_creation": {"ephemeral_5m_input_tokens": 0}}


def line(uid: str, parent: str | None, msg: str, block: dict[str, Any], usage: dict[str, Any],
         request: str) -> dict[str, Any]:  # fmt: skip
    return {
        "type": "assistant", "uuid": uid, "parentUuid": parent, "cwd": "/work/p",
        "sessionId": "s-1", "requestId": request,
        "message": {"id": msg, "role": "assistant", "model": "m", "content": [block],
                    "usage": usage},
    }  # fmt: skip


def parsed(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fresh objects for every value, as a JSON parser makes them."""
    return [json.loads(json.dumps(one)) for one in lines]


def test_one_reply_split_by_block_shares_its_usage_id_and_request() -> None:
    lines = [
        line("u1", None, "msg_1", {"type": "thinking", "thinking": "hm"}, USAGE, "req_1"),
        line("u2", "u1", "msg_1", {"type": "text", "text": "I will look"}, USAGE, "req_1"),
        line("u3", "u2", "msg_1", {"type": "tool_use", "id": "t1"}, USAGE, "req_1"),
        line("u4", "u3", "msg_2", {"type": "text", "text": "done"}, USAGE, "req_2"),
        line(
            "u5",
            "u4",
            "msg_3",
            {"type": "text", "text": "more"},
            {**USAGE, "output_tokens": 9},
            "req_3",
        ),
    ]
    first, second = parsed(lines[:2]), parsed(lines[2:])
    share = RepeatedStrings()
    loaded = share(first) + share(second)  # across chunks, as the store parses them
    assert loaded == lines  # every value unchanged
    one, two, three, four, five = loaded
    for later in (two, three):
        assert later["message"]["usage"] is one["message"]["usage"]
        assert later["message"]["id"] is one["message"]["id"]
        assert later["requestId"] is one["requestId"]
    assert four["message"]["usage"] is not one["message"]["usage"]  # another reply, equal figures
    assert five["message"]["usage"] is not four["message"]["usage"]
    assert two["parentUuid"] is one["uuid"] and five["parentUuid"] is four["uuid"]
    assert all(x["cwd"] is one["cwd"] and x["sessionId"] is one["sessionId"] for x in loaded)
    blocks = [x["message"]["content"][0]["type"] for x in (two, four, five)]
    assert blocks[0] is blocks[1] is blocks[2] == "text"  # a block's type: one object


def test_a_tool_result_names_its_call_line_with_the_previous_uuid() -> None:
    call = line("u1", None, "msg_1", {"type": "tool_use", "id": "t1"}, USAGE, "req_1")
    result = {"type": "user", "uuid": "u2", "parentUuid": "u1", "sourceToolAssistantUUID": "u1",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                       "content": "ok"}]}}  # fmt: skip
    loaded = RepeatedStrings()(parsed([call, result]))
    assert loaded == [call, result]
    assert loaded[1]["sourceToolAssistantUUID"] is loaded[0]["uuid"]
    assert loaded[1]["parentUuid"] is loaded[0]["uuid"]


def test_lines_that_are_not_objects_or_lack_fields_pass_untouched() -> None:
    odd: list[Any] = [7, {"type": "summary"}, {"message": "text"}, {"message": {"usage": 5}}]
    assert RepeatedStrings()(copy.deepcopy(odd)) == odd
