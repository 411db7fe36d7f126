"""What every page is sent of an event stays bounded however the payload nests: a
``Write`` of 3 MB (its text two levels down) was sent whole to every page, since only
texts at a payload's top level were cut. Read from the real server's stream (uvicorn)
over a socket, as a page reads it; the run's own copy stays whole."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.cut import DEPTH, ITEMS, TEXT, TOTAL, shortened  # noqa: E402
from flower_plugin_web.hub import Hub  # noqa: E402

from .pages import TOKEN, port_of, served  # noqa: E402

BIG = "x" * 3_000_000


def deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"in": [value]}
    return value


def streamed(port: int, count: int) -> list[dict[str, Any]]:
    """The first ``count`` events of ``GET /events``, as a page reads them."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    conn.request("GET", "/events", headers={"X-Flower-Token": TOKEN})
    response = conn.getresponse()
    events: list[dict[str, Any]] = []
    while len(events) < count:
        line = response.readline()
        assert line, "the stream ended"
        if line.startswith(b'data: {"id"'):
            events.append(json.loads(line[6:]))
    conn.close()
    return events


def test_nested_long_texts_lists_and_depth_are_cut_saying_so(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    write: dict[str, Any] = {"tool": "Write", "input": {"file_path": "big.txt", "content": BIG}}
    hub.publish("tool_use", write, "干活")
    hub.publish("tool_use", {"input": {"items": list(range(10_000))}}, "干活")
    hub.publish("tool_use", deep(100), "干活")
    hub.publish("tool_use", {"input": {"parts": ["y" * TEXT] * 40}}, "干活")
    with served(hub) as running:
        first, many, nested, wide = streamed(port_of(running), 4)
    content = first["payload"]["input"]["content"]
    assert content == "x" * TEXT + f"… (cut: {len(BIG)} characters in all)"
    assert first["payload"]["input"]["file_path"] == "big.txt"
    items = many["payload"]["input"]["items"]
    assert items[:ITEMS] == list(range(ITEMS))
    assert items[ITEMS:] == [f"… (cut: {10_000 - ITEMS} more items)"]
    text = json.dumps(nested["payload"], ensure_ascii=False)
    assert f"… (cut: nested deeper than {DEPTH} levels)" in text and "bottom" not in text
    parts = wide["payload"]["input"]["parts"]
    assert sum(len(p) for p in parts) < TOTAL + 40 * 60  # all the texts together, bounded
    assert parts[-1].startswith("… (cut: 16384 characters in all)")
    assert write["input"]["content"] is BIG  # the run's own copy is whole


def test_a_payload_with_nothing_to_cut_is_not_copied() -> None:
    payload = {"tool": "Read", "input": {"file_path": "a.txt", "limit": [1, 2]}}
    assert shortened(payload) is payload
    many = {str(n): n for n in range(ITEMS + 5)}
    cut = shortened(many)
    assert len(cut) == ITEMS + 1 and cut["…"] == "(cut: 5 more keys)"
