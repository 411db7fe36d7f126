"""Run the scripted model standalone: ``python -m flower.testing serve script.json``.

The same command is ``flower scripted-model serve`` (contributed by the default plugin
``flower_plugins.scripted_model``), so users can point their own workflows at it.

The environment it prints is what a shell sources to use it, so it appears only once
the server listens: a taken port prints one line on stderr and exits 2 with nothing on
stdout, and ``--env-file`` is written (through a temporary file, then renamed) only
after the bind, and removed when the server stops. A shell's ``> env.sh`` empties the
file before the server even starts; sourcing that empty file would run flower with the
user's own key and endpoint. With ``--env-file`` there is either a complete file naming
a live server or no file at all, and ``. env.sh && flower …`` fails closed.

The printed environment also sets ``FLOWER_DOTENV=0`` and unsets the leaky variables
(``flower.testing.env.LEAKY_VARIABLES``): otherwise flower would fill those gaps from
the user's ``.env`` files and bring a real key, gateway or cloud switch back in.

It leaves telemetry to the shell (:data:`SHELL_DECIDES`): the tests' offline environment
turns OpenTelemetry off so no test reaches a collector, but someone trying flower offline
with flower-plugin-otel installed wants that run traced.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

import click

#: What the printed environment adds to the scripted model's own variables: flower reads
#: no ``.env`` file and borrows nothing from Claude Code's settings (``kernel/env.py``), a
#: proxy of the user's shell is never asked to reach the loopback server, and the run
#: view labels its costs simulated (``flower.ui.render.SIMULATED_ENV``).
SEALED = {
    "FLOWER_DOTENV": "0",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
    "FLOWER_SIMULATED_COSTS": "1",
}


#: Variables of the offline environment (``flower.testing.offline_env``) the printed lines
#: leave out, so they stay as the user's shell has them: ``OTEL_SDK_DISABLED=true`` keeps
#: test runs away from a collector, and exported into a shell it would silently stop
#: flower-plugin-otel (and the CLI's own export) tracing the offline run.
SHELL_DECIDES = ("OTEL_SDK_DISABLED",)


def printed_env(model_env: dict[str, str]) -> dict[str, str]:
    """What ``serve`` prints for a shell to source: the scripted model's environment and
    :data:`SEALED`, without :data:`SHELL_DECIDES`."""
    env = {**model_env, **SEALED}
    return {name: value for name, value in env.items() if name not in SHELL_DECIDES}


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
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the environment here once the server listens (atomically; never on"
    " a failed start); removed when the server stops.",
)
@click.option("--quiet", is_flag=True, help="Do not print one line per request.")
def serve(
    script: Path,
    port: int,
    home: Path | None,
    record: Path | None,
    env_file: Path | None,
    quiet: bool,
) -> None:
    """Serve SCRIPT (JSON) until Ctrl-C, printing the environment to use.

    \b
    Script shape:
      {"conversations": [{"name": "main", "match": {"first_user": "hi"},
        "turns": [{"tool_use": {"name": "Bash", "input": {"command": "ls"}}},
                  {"text": "done", "usage": {"input_tokens": 12000}}]}]}
    """
    from flower.kernel.files import atomic_write

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
        taken = " (another server or `flower web` may hold it; --port 0 picks a free one)"
        _usage(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}{taken if port else ''}")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())  # each one stops it the same clean way
    import tempfile  # here, not at the top: `flower --help` loads this module

    made_home = home is None
    home = home or Path(tempfile.mkdtemp(prefix="flower-scripted-"))
    seen = 0
    written: str | None = None
    try:
        env = printed_env(model.env(home=home))
        lines = "".join(line + "\n" for line in env_lines(env))
        if env_file is not None:
            try:
                atomic_write(env_file, lines, redact=False)
            except OSError as exc:
                _usage(f"cannot write {env_file}: {exc.strerror or exc}")
            written = lines
        click.echo(f"scripted model on {url}  (Ctrl-C to stop)", err=True)
        click.echo(lines, nl=False)
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
        if env_file is not None and written is not None:
            _remove_if_ours(env_file, written)
        if made_home:  # ours, and it holds the CLI's config and transcripts: leave no trace
            import shutil  # here, not at the top: `flower --help` loads this module

            shutil.rmtree(home, ignore_errors=True)
        if record is not None:
            fields = ("conversation", "turn", "attempt", "outcome", "headers", "body")
            rows = (json.dumps({f: getattr(r, f) for f in fields}) + "\n" for r in model.requests)
            atomic_write(record, "".join(rows))


def env_lines(env: dict[str, str]) -> list[str]:
    """Shell lines for ``env``: ``export`` for a value, ``unset`` for a blank (a leaky
    variable of the user's shell must not survive into the offline run)."""
    return [
        f"export {name}={shlex.quote(value)}" if value else f"unset {name}"
        for name, value in env.items()
    ]


def _remove_if_ours(path: Path, written: str) -> None:
    """The env file names a server that is gone now: remove it, unless another server
    has replaced it since (its content is then not ours to delete)."""
    try:
        if path.read_text(encoding="utf-8") == written:
            path.unlink()
    except OSError:
        pass
