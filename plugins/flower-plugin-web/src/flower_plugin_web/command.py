"""``flower web "make X"``: the main job, with its page on.

Every option of ``flower`` (``go``) works the same here, plus where the page listens and
how long it stays after the run. The page starts before the run and stays up while it
runs; the terminal keeps working as always (its input line answers too). When the run
ends the page is told how (``ending.py``) and stays up ``--linger`` seconds more (on a
terminal 60 by default, any key ending it sooner; in a pipe or a service 0 unless
given); a quit ends at once.

A token is generated for every run, loopback included (any local user, or a forwarded
port, reaches a loopback port), and printed once, in the URL's fragment: a fragment
never leaves the browser, and the page takes it out of the address bar as soon as it
has read it.

Unless ``--host``/``--port`` say otherwise the page gets an origin of its own for every
run, a random loopback address and port (``origin.py``): nothing another local user left
in the browser for an earlier run's address can run in this one's.
"""

from __future__ import annotations

import time
from typing import Any

import click

from flower.commands.go import go

HOST_HELP = (
    "Address the page listens on (0.0.0.0: every interface).  [default: a fresh loopback"
    " address for every run, which no other user can have served before]"
)
PORT_HELP = "Port of the page (0: any free port)."
LINGER_HELP = (
    "Seconds the page stays up after the run ends, to show how it ended (0: not at all)."
    "  [default: 60 on a terminal, where any key ends it sooner; 0 in a pipe]"
)
ALLOW_HELP = (
    "Another name the page answers to: NAME, NAME:PORT (a forwarded port), or the origin"
    " of a proxy in front (https://NAME[:PORT] for a TLS proxy); repeatable. Requests"
    " naming any other host are refused."
)
#: Said once when the page listens beyond loopback: it speaks plain HTTP.
CLEAR = (
    "flower web: warning: the page on {host} is plain HTTP: the token and all the page"
    " shows cross the network unencrypted; prefer an SSH tunnel, or a TLS proxy in front"
    " (--allow-host https://NAME)"
)


def _port(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if not 0 <= value <= 65535:
        raise click.BadParameter(f"{value}: give a port from 1 to 65535 (0: any free port)")
    return value


def _allowed(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from flower_plugin_web.allow import parse_allowed

    for given in value:
        try:
            parse_allowed(given)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


OWN = [
    click.Option(["--host"], default=None, help=HOST_HELP),
    click.Option(
        ["--port"], type=int, default=0, show_default=True, help=PORT_HELP, callback=_port
    ),
    click.Option(["--allow-host", "allow_host"], multiple=True, help=ALLOW_HELP, callback=_allowed),
    click.Option(
        ["--linger"],
        type=click.FloatRange(min=0),
        default=None,
        help=LINGER_HELP,
    ),
]


def run_web(
    host: str | None, port: int, allow_host: tuple[str, ...], linger: float | None, **params: Any
) -> None:
    import secrets  # here: every `flower` command (--help too) loads this module

    from flower.commands.options import resolve_globals
    from flower.workflow import workbench_for
    from flower_plugin_web.ending import linger as stay_up
    from flower_plugin_web.ending import outcome_for, stay_for
    from flower_plugin_web.gate import raise_fd_limit
    from flower_plugin_web.guard import loopback
    from flower_plugin_web.hub import HUB, Where
    from flower_plugin_web.origin import FRESH, Ambiguous
    from flower_plugin_web.server import serve

    ctx = click.get_current_context()
    names = ("workspace", "run_dir", "verbose", "workbench", "trim")
    given: dict[str, Any] = {name: params.get(name) for name in names}
    g = resolve_globals(ctx, **given)
    wb = workbench_for(g.workspace, isolate=bool(params.get("isolate")))
    raise_fd_limit()  # the run and its page share the process's descriptors
    token = secrets.token_urlsafe(24)
    HUB.where = Where(workspace=g.workspace, run_dir=g.run_dir, workbench=wb.root)
    try:
        server = serve(host, port, token=token, allow=allow_host)
    except Ambiguous as exc:
        raise click.UsageError(str(exc)) from None
    except OSError as exc:
        why = exc.strerror or exc
        where = f"{host}:{port}" if host is not None else f"{FRESH}, port {port}"
        raise click.UsageError(f"the page cannot listen on {where}: {why}") from None
    HUB.enabled = True  # only now: the hooks serve a page that exists
    if host is not None and not loopback(host):
        click.echo(CLEAR.format(host=host), err=True)
    click.echo(f"flower web: open {server.url}/#token={token}  (the token is printed only once)")
    since = time.time()
    code: int | None = None
    try:
        ctx.invoke(go, **params)
        code = 0
    except SystemExit as end:  # go ends with sys.exit(code), success included
        code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
        raise
    finally:
        try:
            stays = stay_for(linger, code, ran=HUB.channel is not None)
            HUB.end(outcome_for(HUB, g.run_dir, code, since, stays))  # the pages' last event
            if stays:
                stay_up(stays, server.url)
        finally:
            # The open pages are sent what they have not read (the ``ended`` event), then
            # the server stops. A run that quit (Ctrl-C twice) or failed ends the process
            # now: the page's daemon thread is told to stop, not waited for.
            server.stop(wait=code not in (None, 130))
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
