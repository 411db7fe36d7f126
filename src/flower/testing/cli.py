"""Run the scripted model standalone: ``python -m flower.testing serve script.json``.

The same command is ``flower scripted-model serve`` (contributed by the default plugin
``flower_plugins.scripted_model``), so users can point their own workflows at it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import NoReturn

import click


def _usage(message: str) -> NoReturn:
    """A bad script or port is the user's input: one line and exit 2, like click's own."""
    click.echo(f"flower scripted-model serve: {message}", err=True)
    sys.exit(2)


@click.group(name="scripted-model")
def scripted_model() -> None:
    """The offline model server flower's tests use (a Messages API emulator)."""


@scripted_model.command()
@click.argument("script", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--port", default=0, show_default=True, help="Port on 127.0.0.1 (0 picks a free one)."
)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="HOME/CLAUDE_CONFIG_DIR for the printed environment (default: a new temp dir).",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write every request as JSON lines to this file when stopped.",
)
@click.option("--quiet", is_flag=True, help="Do not print one line per request.")
def serve(script: Path, port: int, home: Path | None, record: Path | None, quiet: bool) -> None:
    """Serve SCRIPT (JSON) until Ctrl-C, printing the environment to use.

    \b
    Script shape:
      {"conversations": [{"name": "main", "match": {"first_user": "hi"},
        "turns": [{"tool_use": {"name": "Bash", "input": {"command": "ls"}}},
                  {"text": "done", "usage": {"input_tokens": 12000}}]}]}
    """
    from flower.core.workbench import atomic_write

    from .script import ScriptError, load_script
    from .server import ScriptedModel

    try:
        model = ScriptedModel(load_script(script), port=port)
    except ScriptError as exc:
        _usage(str(exc))
    except OSError as exc:  # a folder, an unreadable file
        _usage(f"cannot read {script}: {exc.strerror or exc}")
    except (ValueError, TypeError) as exc:  # not UTF-8, or JSON of the wrong shape
        _usage(f"{script} is not a script: {exc}")
    try:
        url = model.start()
    except OSError as exc:
        _usage(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())  # each one stops it the same clean way
    made_home = home is None
    home = home or Path(tempfile.mkdtemp(prefix="flower-scripted-"))
    seen = 0
    try:
        click.echo(f"scripted model on {url}  (Ctrl-C to stop)", err=True)
        for name, value in model.env(home=home).items():
            if value:
                click.echo(f"export {name}={shlex.quote(value)}")
        sys.stdout.flush()
        while not stop.wait(0.2):
            while not quiet and seen < len(model.requests):
                r = model.requests[seen]
                seen += 1
                who = "subagent" if r.is_subagent else "main"
                click.echo(
                    f"{who:8} {r.conversation or '-':16} turn {r.turn:<3}"
                    f" attempt {r.attempt:<2} {r.outcome}",
                    err=True,
                )
    finally:
        model.stop()
        if made_home:  # ours, and it holds the CLI's config and transcripts: leave no trace
            shutil.rmtree(home, ignore_errors=True)
        if record is not None:
            fields = ("conversation", "turn", "attempt", "outcome", "headers", "body")
            lines = (json.dumps({f: getattr(r, f) for f in fields}) + "\n" for r in model.requests)
            atomic_write(record, "".join(lines))
