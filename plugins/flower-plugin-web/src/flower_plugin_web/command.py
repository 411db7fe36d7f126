"""``flower web "make X"``: the main job, with its page on.

Every option of ``flower`` (``go``) works the same here, plus where the page listens.
The page starts before the run and stays up while it runs; the terminal keeps working as
always (its input line answers too). Bound to 127.0.0.1 by default; any other address
needs the token, which is generated, printed once inside the URL to open, and required
by every request.
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Any

import click

from flower.commands.go import go

HOST_HELP = "Address the page listens on (127.0.0.1; anything else requires the token)."
PORT_HELP = "Port of the page (0: any free port)."

OWN = [
    click.Option(["--host"], default="127.0.0.1", show_default=True, help=HOST_HELP),
    click.Option(["--port"], type=int, default=8765, show_default=True, help=PORT_HELP),
]


def loopback(host: str) -> bool:
    """Whether ``host`` is only reachable from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_web(host: str, port: int, **params: Any) -> None:
    from flower.commands.options import resolve_globals
    from flower.workflow import workbench_for
    from flower_plugin_web.hub import HUB, Where
    from flower_plugin_web.server import serve

    ctx = click.get_current_context()
    names = ("workspace", "run_dir", "verbose", "workbench", "trim")
    g = resolve_globals(ctx, **{name: params.get(name) for name in names})
    wb = workbench_for(g.workspace, isolate=bool(params.get("isolate")))
    token = None if loopback(host) else secrets.token_urlsafe(24)
    HUB.where = Where(workspace=g.workspace, run_dir=g.run_dir, workbench=wb.root)
    try:
        server = serve(host, port, token=token)
    except OSError as exc:
        why = exc.strerror or exc
        raise click.UsageError(f"the page cannot listen on {host}:{port}: {why}") from None
    HUB.enabled = True  # only now: the hooks serve a page that exists
    url = server.url + (f"/?token={token}" if token else "/")
    once = "  (the token is printed only this once)" if token else ""
    click.echo(f"flower web: open {url}{once}")
    try:
        ctx.invoke(go, **params)
    finally:
        server.stop()
        HUB.enabled = False


web = click.Command(
    "web",
    params=[*go.params, *OWN],
    callback=run_web,
    help=(
        'Run the main job (like flower "make X") with a page to follow and answer it '
        "from a browser: steps, verdicts, cost, context, questions, the inbox, side questions."
    ),
)
