"""The page's server: Starlette on uvicorn, in a thread of its own beside the run.

Routes:

====================  =====================================================================
``GET /``             the page (server-rendered; ``/page.js`` keeps it live)
``GET /events``       server-sent events, each ``id: N``; a reconnect (``Last-Event-ID``)
                      or ``?after=N`` first gets what it missed from the hub's memory
``GET /state``        what the page shows at load: pending questions, where the files are
``GET /doc/{name}``   ``brief``, ``goal``, ``handoff``, ``ledger`` rendered from Markdown
``GET /runs``         past steps and runs from ``manifest.json``
``POST /answer``      ``{"id", "answer"}`` or ``{"id", "decline": true}``
``POST /inbox``       ``{"text"}``: to the agents' inbox and the brief, as typed in the terminal
``POST /aside``       ``{"question"}``: a side question; the answer comes as an ``aside`` event
====================  =====================================================================

Safety: with a token (any non-loopback bind) every request must carry it: ``?token=`` on
the first visit, which sets a ``SameSite=Strict`` HttpOnly cookie, or the
``X-Flower-Token`` header; compared in constant time. Every POST must also come from the
page's own origin (``Origin``, else ``Referer``), so another site open in the same
browser cannot answer for you. Nothing from the model or tools is ever executed: the
server escapes what it renders and the page only ever sets ``textContent``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from flower_plugin_web.hub import HUB, Hub
from flower_plugin_web.page import SCRIPT, page_html, render_markdown

COOKIE = "flower_token"
NO_TOKEN = "this page needs its token: open the URL flower web printed"
#: Seconds between keep-alive comments on an idle stream.
PING = 15.0


def create_app(hub: Hub = HUB, *, token: str | None = None) -> Starlette:
    """The ASGI app over ``hub``; ``token`` (``None``: loopback, no token) guards it."""

    asking: set[asyncio.Future[None]] = set()

    def authorised(request: Request) -> bool:
        """Any one of the header, the cookie and ``?token=`` matching will do: the cookie
        of an earlier ``flower web`` on the same port must not shadow a fresh URL."""
        if token is None:
            return True
        offered = (
            request.headers.get("x-flower-token"),
            request.cookies.get(COOKIE),
            request.query_params.get("token"),
        )
        return any(hmac.compare_digest(one.encode(), token.encode()) for one in offered if one)

    def same_origin(request: Request) -> bool:
        source = request.headers.get("origin") or request.headers.get("referer") or ""
        if not source:
            return False
        seen = urlsplit(source)
        return f"{seen.scheme}://{seen.netloc}" == f"{request.url.scheme}://{request.url.netloc}"

    def refuse(request: Request, *, changes: bool) -> Response | None:
        if not authorised(request):
            return JSONResponse({"error": NO_TOKEN}, 401)
        if changes and not same_origin(request):
            return JSONResponse({"error": "cross-origin request refused"}, 403)
        return None

    async def index(request: Request) -> Response:
        if (refused := refuse(request, changes=False)) is not None:
            return refused
        response = HTMLResponse(page_html(hub))
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline';"
            " img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        if token is not None and request.query_params.get("token"):
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    async def script(request: Request) -> Response:
        if (refused := refuse(request, changes=False)) is not None:
            return refused
        return Response(SCRIPT, media_type="text/javascript; charset=utf-8")

    async def events(request: Request) -> Response:
        if (refused := refuse(request, changes=False)) is not None:
            return refused
        after = _int(request.headers.get("last-event-id") or request.query_params.get("after"))
        missed, listener = hub.listen(after)

        async def stream() -> Any:
            try:
                if missed:
                    yield "".join(_sse(item) for item in missed)
                while (arrived := await listener.take(PING)) is not None:
                    yield "".join(_sse(item) for item in arrived) if arrived else ": ping\n\n"
            finally:
                hub.unlisten(listener)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def state(request: Request) -> Response:
        if (refused := refuse(request, changes=False)) is not None:
            return refused
        where = hub.where
        return JSONResponse(
            {
                "pending": [a.payload() for a in hub.pending()],
                "workspace": str(where.workspace) if where else "",
                "last_id": hub.next_id - 1,
            }
        )

    async def doc(request: Request) -> Response:
        if (refused := refuse(request, changes=False)) is not None:
            return refused
        path = _document(hub, request.path_params["name"])
        if path is None:
            return HTMLResponse("<p>(no such document yet)</p>")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return HTMLResponse("<p>(not readable yet)</p>")
        return HTMLResponse(render_markdown(text))

    async def runs(request: Request) -> Response:
        if (refused := refuse(request, changes=False)) is not None:
            return refused
        rows: list[dict[str, Any]] = []
        if hub.where is not None:
            try:
                raw = json.loads((hub.where.run_dir / "manifest.json").read_text(encoding="utf-8"))
                rows = [r for r in raw if isinstance(r, dict)] if isinstance(raw, list) else []
            except (OSError, ValueError):
                rows = []
        keep = ("step", "ok", "cost_usd", "started_at", "duration_s", "run", "error")
        return JSONResponse([{k: row.get(k) for k in keep} for row in rows])

    async def answer(request: Request) -> Response:
        if (refused := refuse(request, changes=True)) is not None:
            return refused
        body = await _json(request)
        channel, ask_id = hub.channel, str(body.get("id") or "")
        if channel is None or not ask_id:
            return JSONResponse({"ok": False, "error": "no such question"}, 404)
        if body.get("decline"):
            done = channel.decline(ask_id)
        else:
            text = str(body.get("answer") or "").strip()
            if not text:
                return JSONResponse({"ok": False, "error": "an empty answer: use decline"}, 400)
            done = channel.answer(ask_id, text)
        return JSONResponse({"ok": bool(done), "settled": not done})

    async def inbox(request: Request) -> Response:
        if (refused := refuse(request, changes=True)) is not None:
            return refused
        text = str((await _json(request)).get("text") or "").strip()
        if hub.channel is None or not text:
            return JSONResponse({"ok": False, "error": "nothing to send"}, 400)
        mail = hub.channel.send(text)
        return JSONResponse({"ok": mail is not None})

    async def aside(request: Request) -> Response:
        if (refused := refuse(request, changes=True)) is not None:
            return refused
        question = str((await _json(request)).get("question") or "").strip()
        if not question or hub.where is None:
            return JSONResponse({"ok": False, "error": "ask something"}, 400)
        task = asyncio.ensure_future(_ask_aside(hub, question))
        asking.add(task)  # held until done: a task nobody references may be collected
        task.add_done_callback(asking.discard)
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route("/", index),
            Route("/page.js", script),
            Route("/events", events),
            Route("/state", state),
            Route("/doc/{name}", doc),
            Route("/runs", runs),
            Route("/answer", answer, methods=["POST"]),
            Route("/inbox", inbox, methods=["POST"]),
            Route("/aside", aside, methods=["POST"]),
        ]
    )


async def _ask_aside(hub: Hub, question: str) -> None:
    from flower.commands.aside import ask_oracle
    from flower.core.events import Event

    where = hub.where
    assert where is not None
    hub.publish("aside", {"question": question, "answer": None}, None)
    recent = [Event(e["kind"], e["payload"] or {}, e["step"], e["at"]) for e in hub.recent()]
    said = await ask_oracle(
        question,
        workspace=where.workspace,
        run_dir=where.run_dir / "aside",
        workbench=None,
        recent=recent,
    )
    hub.publish("aside", {"question": question, "answer": said}, None)


def _document(hub: Hub, name: str) -> Path | None:
    if hub.where is None:
        return None
    notes = hub.where.workbench / "notes"
    if name == "handoff":
        found = sorted(notes.glob("交接-*.md"), key=lambda p: p.stat().st_mtime)
        return found[-1] if found else None
    files = {"brief": "需求.md", "goal": "目标.md", "ledger": "判定记录.md"}
    return notes / files[name] if name in files else None


def _sse(item: dict[str, Any]) -> str:
    """One event on the wire. orjson (flower's own JSON encoder) keeps the page's share
    of a burst of events small; a value JSON has no form for is sent as its ``str``."""
    data = orjson.dumps(item, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    return f"id: {item['id']}\nevent: flower\ndata: {data}\n\n"


def _int(value: str | None) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


@dataclass
class Running:
    """A server started by :func:`serve`."""

    url: str
    server: Any
    thread: threading.Thread
    hub: Hub

    def stop(self) -> None:
        """End the open pages' streams (they never end on their own), then the server;
        the run that ended does not wait for a browser tab."""
        self.hub.close()
        self.server.should_exit = True
        self.thread.join(5)


def serve(host: str, port: int, *, token: str | None, hub: Hub = HUB) -> Running:
    """Start the page in a daemon thread; returns once it listens (``OSError`` if it cannot)."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(hub, token=token),
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), name="flower-web", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    shown = socket.gethostname() if host in ("0.0.0.0", "::", "") else host
    return Running(url=f"http://{shown}:{bound}", server=server, thread=thread, hub=hub)
