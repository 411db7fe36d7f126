"""``flower web "make X"``: the main job, with its page on.

Every option of ``flower`` (``go``) works the same here, plus where the page listens.
The page starts before the run and stays up while it runs; the terminal keeps working as
always (its input line answers too). A token is generated for every run, loopback
included (any local user, or a forwarded port, reaches a loopback port), and printed
once, in the URL's fragment: a fragment never leaves the browser, and the page takes
it out of the address bar as soon as it has read it.
"""

from __future__ import annotations

import secrets
from typing import Any

import click

from flower.commands.go import go

HOST_HELP = "Address the page listens on (default loopback only; 0.0.0.0: every interface)."
PORT_HELP = "Port of the page (0: any free port)."
ALLOW_HELP = (
    "Another name the page answers to (a proxy's or a forwarded port's host[:port]); "
    "repeatable. Requests naming any other host are refused."
)

OWN = [
    click.Option(["--host"], default="127.0.0.1", show_default=True, help=HOST_HELP),
    click.Option(["--port"], type=int, default=8765, show_default=True, help=PORT_HELP),
    click.Option(["--allow-host", "allow_host"], multiple=True, help=ALLOW_HELP),
]


def run_web(host: str, port: int, allow_host: tuple[str, ...], **params: Any) -> None:
    from flower.commands.options import resolve_globals
    from flower.workflow import workbench_for
    from flower_plugin_web.gate import raise_fd_limit
    from flower_plugin_web.hub import HUB, Where
    from flower_plugin_web.server import serve

    ctx = click.get_current_context()
    names = ("workspace", "run_dir", "verbose", "workbench", "trim")
    g = resolve_globals(ctx, **{name: params.get(name) for name in names})
    wb = workbench_for(g.workspace, isolate=bool(params.get("isolate")))
    raise_fd_limit()  # the run and its page share the process's descriptors
    token = secrets.token_urlsafe(24)
    HUB.where = Where(workspace=g.workspace, run_dir=g.run_dir, workbench=wb.root)
    try:
        server = serve(host, port, token=token, allow=allow_host)
    except OSError as exc:
        why = exc.strerror or exc
        raise click.UsageError(f"the page cannot listen on {host}:{port}: {why}") from None
    HUB.enabled = True  # only now: the hooks serve a page that exists
    click.echo(f"flower web: open {server.url}/#token={token}  (the token is printed only once)")
    clean = False
    try:
        ctx.invoke(go, **params)
        clean = True
    except SystemExit as end:  # go ends with sys.exit(code), success included
        clean = end.code in (0, None)
        raise
    finally:
        # A run that quit (Ctrl-C twice) or failed ends the process now: the page's
        # daemon thread is told to stop, not waited for.
        server.stop(wait=clean)
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
