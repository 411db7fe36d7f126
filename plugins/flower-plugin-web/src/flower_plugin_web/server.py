"""The page's server: Starlette on uvicorn, in a thread of its own beside the run.

Routes (every one behind ``guard.py``: the ``Host``, the token, the origin):

====================  =====================================================================
``GET /``             the page's shell (static: no data of the run, no token needed)
``GET /page.js``      its script
``GET /events``       server-sent events (``stream.py``); ``Last-Event-ID`` resumes
``GET /state``        what the page shows at load: the run's segment, pending questions,
                      the checkpoints (``flower.workflow.going_back.listing``)
``GET /doc/{name}``   ``brief``, ``goal``, ``handoff``, ``ledger`` rendered from Markdown
``GET /runs``         past steps and runs from ``manifest.json``
``POST /answer``      ``{"id", "answer"}`` or ``{"id", "decline": true}``
``POST /inbox``       ``{"text"}``: to the agents' inbox and the brief, as typed in the terminal
``POST /aside``       ``{"question"}``: a side question; the answer comes as an ``aside`` event
====================  =====================================================================

What the page sends the terminal shows too: an inbox line as ``> (page) …`` (its
``mail`` event says ``via: page``), a side question and its answer as the terminal's own.
Once the run is over (``ended``) the page stays readable, but a change is refused (409):
nothing reads the inbox any more, and the run's total is closed.

Ids on the page carry the process's segment (``hub.py``): an answer to another run's
question is refused (409), never applied to this run's question of the same number;
an unknown id is 404, not "settled". Every body is bounded (``limits.py``); documents
are read and rendered in a thread (``docs.py``, ``render.py``); connections are
budgeted so the page can never cost the run its descriptors (``gate.py``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from flower_plugin_web.cut import shortened
from flower_plugin_web.docs import FILES, read_file
from flower_plugin_web.documents import Documents
from flower_plugin_web.gate import BACKLOG, Gate, budget_for, protocol_for
from flower_plugin_web.guard import HEAD_BYTES, Guard, Guarded, vouches
from flower_plugin_web.hub import HUB, STALE, Hub, Where
from flower_plugin_web.limits import Bucket, Limits, Refused, Slots, read_json, text_field
from flower_plugin_web.origin import listen
from flower_plugin_web.page import PAGE, SCRIPT
from flower_plugin_web.quiet import Hush, quiet_loop
from flower_plugin_web.stream import EventStream, where_from

MANIFEST_BYTES = 4 * 1024 * 1024
NO_QUESTION = "no such question"
OVER = "the run is over: run flower in its folder again to go on"
#: What a page's side question and inbox line are marked with, for the terminal.
VIA = "page"
OTHER_RUN = "this question is from another run (the page is stale): reload the page"


def create_app(
    hub: Hub = HUB, *, guard: Guard, limits: Limits | None = None, gate: Gate | None = None
) -> Any:
    """The ASGI app over ``hub``, behind ``guard``; ``gate`` (when served by
    :func:`serve`) is told which connections showed the token."""
    limits = limits or Limits()
    posts = Bucket(limits.posts_burst, limits.posts_per_second)
    slots = Slots(limits.asides)
    asking: set[asyncio.Task[None]] = set()
    # Documents are read and rendered in threads of their own, two at a time, once for
    # all who ask meanwhile (documents.py): a large one never blocks the loop, nor the
    # threads the other routes use.
    documents = Documents()

    def changing() -> None:
        if not posts.take():
            raise Refused(429, "too many changes at once: wait a moment and try again")

    async def index(request: Request) -> Response:
        return HTMLResponse(PAGE)

    async def script(request: Request) -> Response:
        return Response(SCRIPT, media_type="text/javascript; charset=utf-8")

    async def events(request: Request) -> Any:
        if hub.pages() >= limits.streams:
            raise Refused(503, f"{limits.streams} pages already follow this run: close one")
        given = request.headers.get("last-event-id") or request.query_params.get("after")
        after, ours = where_from(hub, given)
        drop = gate.abort if gate is not None else None
        return EventStream(hub, after, ours, write_seconds=limits.write_seconds, drop=drop)

    async def state(request: Request) -> Response:
        where = hub.where
        pending = [shortened({**a.payload(), "id": hub.outside(a.id)}) for a in hub.pending()]
        stale = await asyncio.to_thread(hub.stale)  # a file the agents can make a FIFO
        pending += [{**a, "id": hub.outside(a["id"])} for a in stale]
        kept = await asyncio.to_thread(_checkpoints, where)  # git, off the loop
        return JSONResponse(
            {
                "segment": hub.segment,
                "pending": pending,
                "workspace": str(where.workspace) if where else "",
                "last_id": hub.outside(hub.last) if hub.last else "",
                "over": hub.over,
                "simulated": _simulated(),
                "checkpoints": kept,
            }
        )

    async def doc(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in FILES and name != "handoff":
            return HTMLResponse('<p class="dim">(no such document)</p>', 404)
        if hub.where is None:
            return HTMLResponse('<p class="dim">(no such document yet)</p>')
        status, body = await documents.get(hub.where.workbench, name, limits.doc_bytes)
        return HTMLResponse(body, status)

    async def runs(request: Request) -> Response:
        rows: list[dict[str, Any]] = []
        if hub.where is not None:
            path = hub.where.run_dir / "manifest.json"
            rows = await asyncio.to_thread(_manifest, path)
        keep = ("step", "ok", "cost_usd", "started_at", "duration_s", "run", "error")
        return JSONResponse([{k: row.get(k) for k in keep} for row in rows])

    async def answer(request: Request) -> Response:
        changing()
        body = await read_json(request, limits)
        channel, local = hub.channel, _local_id(hub, body.get("id"))
        if hub.over is not None:  # a stale question's answer too: no step will ask for it
            raise Refused(409, OVER)
        if local.startswith(STALE):  # asked by a run that died: kept for the step that asked
            return await _answer_stale(hub, local.removeprefix(STALE), body, limits)
        known = {a.id: a for a in list(getattr(channel, "asks", []))}
        if channel is None or local not in known:
            raise Refused(404, NO_QUESTION)
        if body.get("decline") is True:
            done = channel.decline(local)
        else:
            text = text_field(body, "answer", limits.line, "the answer")
            if not text:
                raise Refused(400, "an empty answer: use decline")
            done = channel.answer(local, text)
        if done:
            return JSONResponse({"ok": True})
        state = known[local].state
        error = f"this question is settled already ({state}): the first answer counts"
        return JSONResponse({"ok": False, "settled": True, "error": error}, 409)

    async def inbox(request: Request) -> Response:
        changing()
        text = text_field(await read_json(request, limits), "text", limits.line, "the line")
        if not text:
            raise Refused(400, "nothing to send")
        if hub.channel is None:
            raise Refused(409, "no run is listening yet")
        if hub.over is not None:
            raise Refused(409, OVER)
        mail = await asyncio.to_thread(hub.channel.send, text, via=VIA)  # it writes the brief
        return JSONResponse({"ok": mail is not None})

    async def aside(request: Request) -> Response:
        changing()
        body = await read_json(request, limits)
        question = text_field(body, "question", limits.question, "the side question")
        if not question:
            raise Refused(400, "ask something")
        if hub.where is None:
            raise Refused(409, "no run yet")
        if hub.over is not None:
            raise Refused(409, OVER)
        page = request.headers.get("x-flower-page", "")[:64] or "api"
        slots.claim(page)
        task = asyncio.ensure_future(_ask_aside(hub, question))
        hub.track(task)  # cancelled when the run ends
        asking.add(task)  # held until done: a task nobody references may be collected
        task.add_done_callback(asking.discard)
        task.add_done_callback(lambda _: slots.release(page))
        return JSONResponse({"ok": True})

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)
        return JSONResponse({"ok": False, "error": exc.message}, exc.status)

    app = Starlette(
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
        ],
        exception_handlers={Refused: refused},
    )
    return Guarded(app, guard, trust=gate.trust if gate is not None else None)


async def _answer_stale(hub: Hub, ask_id: str, body: dict[str, Any], limits: Any) -> Response:
    """Record the answer to a question a dead run left; the step that asked gets it when it
    runs again. 404 when it is no such question (or answered already, here or in the
    terminal: the first answer counts)."""
    from flower.records.pending import answer_stale

    declined = body.get("decline") is True
    text = None if declined else text_field(body, "answer", limits.line, "the answer")
    if text == "":
        raise Refused(400, "an empty answer: use decline")
    where = hub.where
    waiting = {a["id"][len(STALE) :] for a in await asyncio.to_thread(hub.stale)}
    if where is None or ask_id not in waiting:  # read with care first (stale.py)
        raise Refused(404, NO_QUESTION)
    if not await asyncio.to_thread(answer_stale, where.run_dir, ask_id, text):
        raise Refused(404, NO_QUESTION)
    hub.publish("ask", {"id": STALE + ask_id, "state": "answered" if text else "declined",
                        "answer": text or "", "stale": True}, None)  # fmt: skip
    return JSONResponse({"ok": True})


def _local_id(hub: Hub, page_id: Any) -> str:
    """The channel's own id for a page's question id; 409 when it is another run's."""
    parsed = hub.inside(page_id) if isinstance(page_id, str) else None
    if parsed is None:
        raise Refused(404, NO_QUESTION)
    segment, local = parsed
    if segment != hub.segment:
        raise Refused(409, OTHER_RUN)
    return local


def _manifest(path: Path) -> list[dict[str, Any]]:
    read = read_file(path, MANIFEST_BYTES)
    if read.text is None or read.cut:
        return []
    try:
        raw = orjson.loads(read.text)
    except orjson.JSONDecodeError:
        return []
    return [r for r in raw if isinstance(r, dict)] if isinstance(raw, list) else []


def _checkpoints(where: Where | None) -> dict[str, Any] | None:
    """The run's checkpoints as ``flower status`` has them
    (:func:`flower.workflow.going_back.listing`), without the size: on a large repository it
    walks every object, and the page asks again at every step and verdict. ``None``
    before the first."""
    if where is None:
        return None
    from flower.workflow.going_back import listing

    try:
        return listing(where.workspace, where.run_dir, sized=False)
    except Exception as exc:  # the page shows the rest of the run whatever git says
        return {"error": f"the checkpoints cannot be read: {exc}"}


def _simulated() -> bool:
    """Whether this process's costs are simulated (``flower demo --web``): the page labels
    each figure so, as the terminal does."""
    import os

    from flower.ui.render import SIMULATED_ENV

    return os.environ.get(SIMULATED_ENV, "") == "1"


async def _ask_aside(hub: Hub, question: str) -> None:
    """Ask the read-only oracle; the question and its answer (or why there is none) go
    to the pages and the terminal as ``aside`` events, marked as the page's."""
    from flower.commands import aside
    from flower.kernel.events import Event

    where = hub.where
    assert where is not None
    hub.tell("aside", aside.asked(question, via=VIA).payload)
    recent = [Event(e.kind, e.payload or {}, e.step, e.at) for e in hub.recent()]
    try:
        said = await aside.consult(
            question,
            workspace=where.workspace,
            run_dir=where.run_dir / "aside",
            workbench=None,
            recent=recent,
        )
    except Exception as exc:  # never an unretrieved task error on the run's terminal
        said = aside.SideAnswer(f"{aside.NO_ANSWER}{type(exc).__name__}: {exc}", ok=False)
    hub.tell("aside", aside.answered(question, said, via=VIA).payload)


@dataclass
class Running:
    """A server started by :func:`serve`."""

    url: str
    server: Any
    thread: threading.Thread
    hub: Hub
    gate: Gate
    guard: Guard
    hush: Hush

    def stop(self, *, wait: bool = True) -> None:
        """End the open pages' streams (they never end on their own) once each has sent
        what is left (the ``ended`` event), then the server; the run that ended does not
        wait for a browser tab. ``wait=False``, for a process about to end anyway: the
        server's thread (a daemon) gets a second at most, enough to flush the streams."""
        self.hub.close()
        self.server.should_exit = True
        self.thread.join(5 if wait else 1)
        if not self.thread.is_alive():
            logging.getLogger("uvicorn.error").removeFilter(self.hush)


def serve(
    host: str | None,
    port: int,
    *,
    token: str,
    hub: Hub = HUB,
    limits: Limits | None = None,
    allow: tuple[str, ...] = (),
) -> Running:
    """Start the page in a daemon thread; returns once it listens (``OSError`` if it cannot,
    ``origin.Ambiguous`` for ``localhost``). ``host=None``: a fresh loopback address
    (``origin.py``); the URL names the address bound."""
    import uvicorn

    limits = limits or Limits()
    gate = Gate(budget_for(limits.connections), limits.untrusted_seconds)
    sock, address = listen(host, port, gate)
    bound = sock.getsockname()[1]
    guard = Guard.bound(host if host is not None else address, bound, token, extra=allow)
    gate.vouch = lambda raw: vouches(guard, raw)
    config = uvicorn.Config(
        create_app(hub, guard=guard, limits=limits, gate=gate),
        http=protocol_for(gate),
        ws="none",
        log_level="warning",
        lifespan="off",
        access_log=False,
        proxy_headers=False,  # scope["client"] is the real peer: the gate keys on it
        server_header=False,
        backlog=BACKLOG,
        timeout_keep_alive=5,
        timeout_graceful_shutdown=1,
        h11_max_incomplete_event_size=HEAD_BYTES,  # a head arriving; guard.py: one arrived
    )
    hush = Hush()
    logging.getLogger("uvicorn.error").addFilter(hush)
    server = uvicorn.Server(config)

    async def run() -> None:
        quiet_loop(asyncio.get_running_loop(), hush)
        await server.serve(sockets=[sock])

    thread = threading.Thread(target=lambda: asyncio.run(run()), name="flower-web", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    import socket

    shown = address or socket.gethostname()  # a wildcard bind: the machine's name
    return Running(
        url=f"http://{shown}:{bound}",
        server=server,
        thread=thread,
        hub=hub,
        gate=gate,
        guard=guard,
        hush=hush,
    )
