"""Helpers the plugin's tests share: a hub with a real HumanChannel and a question
waiting, the app behind its guard through Starlette's test client, and the real server
(uvicorn, in-process) on a free loopback port."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flower_plugin_web.guard import Guard
from flower_plugin_web.hub import Hub, Where
from flower_plugin_web.limits import Limits
from flower_plugin_web.server import Running, create_app, serve
from starlette.testclient import TestClient

from flower import HumanChannel

TOKEN = "s3cret-token-for-tests"
#: What the test client's requests carry: the token and the page's own origin.
OWN = {"X-Flower-Token": TOKEN, "Origin": "http://testserver"}


def hub_with_question(
    tmp_path: Path, question: str = "LF or CRLF?", options: tuple[str, ...] = ("LF", "CRLF")
) -> tuple[Hub, HumanChannel, threading.Thread]:
    """A hub wired as ``flower web`` wires it, with ``question`` waiting in its channel."""
    hub = Hub(enabled=True)
    wb = tmp_path / ".flower"
    (wb / "notes").mkdir(parents=True, exist_ok=True)
    hub.where = Where(workspace=tmp_path, run_dir=tmp_path / "runs", workbench=wb)
    channel = HumanChannel(amend_path=wb / "notes" / "需求.md", timeout_s=30)
    channel.on_event = lambda e: hub.publish(e.kind, e.payload, e.step, e.at)
    hub.channel = channel
    asked = threading.Thread(
        target=lambda: asyncio.run(channel.ask(question, list(options))), daemon=True
    )
    asked.start()
    while not channel.pending():
        asked.join(0.01)
    return hub, channel, asked


def client(hub: Hub, limits: Limits | None = None, **kw: Any) -> TestClient:
    """The app over ``hub`` through Starlette's test client (``Host: testserver``)."""
    guard = Guard(token=TOKEN, port=80, names=frozenset({"testserver"}))
    return TestClient(create_app(hub, guard=guard, limits=limits), **kw)


@contextmanager
def served(hub: Hub, limits: Limits | None = None, host: str = "127.0.0.1") -> Iterator[Running]:
    """The real server over ``hub`` on a free port, stopped afterwards."""
    running = serve(host, 0, token=TOKEN, hub=hub, limits=limits)
    try:
        yield running
    finally:
        running.stop()


def port_of(running: Running) -> int:
    return int(running.url.rsplit(":", 1)[1])
