"""``flower demo``: a whole run, offline and free, in one command.

The scripted model (:mod:`flower.testing`) plays every role from inside this process,
through the real Claude Code CLI: a question for you, a goal with checks, a round the
judge sends back, a round it accepts, the note for the next tool.

Why one command: the README used to background ``flower scripted-model serve … > env.sh``
and source the file. When the port was taken (a first demo still running, ``flower web``
on the same default port) the server exited, the redirect had already emptied the file,
sourcing an empty file succeeded, and flower ran with the user's own key and endpoint.
Here nothing is sourced and nothing can fall back (fail closed):

- The model listens before anything else happens. If it cannot, the demo stops with one
  line before a run exists; if it stops later, a watchdog ends the demo with one line.
  The run never has any endpoint but the model's loopback URL to talk to.
- The process environment is replaced, not patched (:func:`sealed_environment`): only
  the terminal's, the locale's and ``PATH`` survive from the user's (:data:`KEPT`), then
  the scripted model's variables (``flower.testing.offline_env``: the endpoint, a decoy
  key, ``HOME``/``CLAUDE_CONFIG_DIR``/``XDG_CONFIG_HOME`` in a fresh temporary folder,
  the leaky variables blank), ``FLOWER_DOTENV=0`` so flower reads no ``.env`` file at
  all (``$FLOWER_ENV``, ``./.env``, the workspace's, the user config) and borrows nothing
  from Claude Code's ``settings.json``, and ``NO_PROXY`` for loopback. A user's
  ``FLOWER_STORE_URL`` (a shared Postgres store) or ``FLOWER_BUDGET`` does not apply to
  a demo either.
- The model never writes to the terminal (``ScriptedModel(quiet=True)``): the run view
  and its input line are the run's alone.
- Costs are the CLI's arithmetic on scripted usage, labelled simulated wherever they
  show: the run view (``FLOWER_SIMULATED_COSTS=1``, read by the renderer) and
  ``flower status`` (the folder's mark, ``runs/demo.json``).

The folder is kept: ``${XDG_CACHE_HOME:-~/.cache}/flower/demo`` unless ``-w`` names
another (new, empty, or an earlier demo's: any other folder is refused, the demo writes
files). Out of the current folder on purpose: a demo started inside a project must not
drop ``hello.txt``, ``CLAUDE.md`` and ``runs/`` into it. So ``flower status -w`` it,
``flower demo`` again (the same run continues: the wake banner, then Enter leaves a
finished run as it is, ``/again`` plays one more round), ``flower demo --web`` (the page,
with flower-plugin-web installed), ``flower demo --new`` (start over).

``FLOWER_DEMO_PORT`` pins the model's port (0 or unset: a free one); tests use it to make
the start fail.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from flower.commands import EXIT_FAILED, EXIT_USAGE

if TYPE_CHECKING:
    from flower.testing.server import ScriptedModel

#: The request the demo makes (the script answers by role, not by these words).
ASK = "写个 hello.txt"
SCRIPT_NAME = "starter-demo.json"
SCRIPT_NAME_EN = "starter-demo.en.json"
#: In the demo folder's run dir: this folder is a demo's, its costs are simulated.
DEMO_MARK = "demo.json"
#: Pins the scripted model's port (0 or unset: a free one).
PORT_ENV = "FLOWER_DEMO_PORT"
#: The user's variables a demo keeps: what the terminal, the locale and the shell tools
#: need, and which plugins load. Everything else (keys, endpoints, cloud switches,
#: proxies, FLOWER_ENV, FLOWER_STORE_URL…) is gone before the run starts.
KEPT = (
    "PATH",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "USER",
    "LOGNAME",
    "SHELL",
    "SYSTEMROOT",
    "FLOWER_LOAD_PLUGINS",
    "FLOWER_DISABLED_PLUGINS",
)
KEPT_PREFIXES = ("LC_",)
#: Seconds between the watchdog's looks at the model.
WATCH_EVERY = 0.25

_WORKSPACE = (
    "The demo's folder (default: ${XDG_CACHE_HOME:-~/.cache}/flower/demo); new, empty or an"
    " earlier demo's. Kept: flower demo again continues it."
)
_WEB = "Show the run on a page in a browser as well (needs flower-plugin-web)."
_NEW = "Start the demo over (the last one's brief and goal are archived, not deleted)."
_VERBOSE = "Say more: the endpoint (the scripted model), thinking, tool results."
_NO_WEB = (
    "the page comes with flower-plugin-web, which is not installed here:"
    " pip install ./plugins/flower-plugin-web into this flower's environment"
)


@click.command(name="demo")
@click.option(
    "-w", "--workspace", type=click.Path(file_okay=False, path_type=Path), help=_WORKSPACE
)
@click.option("--web", is_flag=True, help=_WEB)
@click.option("--new", is_flag=True, help=_NEW)
@click.option("-v", "--verbose", is_flag=True, default=None, help=_VERBOSE)
@click.pass_context
def demo(
    ctx: click.Context, workspace: Path | None, web: bool, new: bool, verbose: bool | None
) -> None:
    """A whole run, offline and free: the scripted model plays every role.

    Nothing to set up and nothing to start: no account, no key, no network. Your
    credentials, config and .env files are never read; costs shown are simulated.
    Answer its one question with a digit. The folder is kept and printed:
    flower demo again continues the same run, flower status -w FOLDER shows it,
    flower demo --web shows it in a browser (with flower-plugin-web).
    """
    root: dict[str, Any] = ctx.find_root().obj or {}
    folder = Path(workspace or root.get("workspace") or default_folder()).expanduser().absolute()
    verbose = bool(verbose if verbose is not None else root.get("verbose"))
    problem = unusable(folder)
    if problem:
        _fail(problem, EXIT_USAGE)
    command: click.Command | None = None
    if web:
        command = web_command()
        if command is None:
            _fail(f"--web: {_NO_WEB}", EXIT_USAGE)
    port = _pinned_port()
    model, home = _start_model(port)
    code = EXIT_FAILED
    watch = _Watch(model)
    try:
        _mark(folder)
        click.echo(
            f"flower demo: the scripted model on {model.base_url} plays every role, offline;"
            " costs shown are simulated, nothing is paid"
        )
        click.echo(f"flower demo: in {folder} (kept)")
        with sealed(sealed_environment(model.base_url, home)), _ends_cleanly():
            watch.start()
            code = _play(ctx, command or _go(), folder, new=new, verbose=verbose)
    finally:
        watch.stop()
        model.stop()
        import shutil  # here, not at the top: `flower --help` loads this module

        shutil.rmtree(home, ignore_errors=True)
    if watch.died:
        code = EXIT_FAILED
    else:
        for line in next_steps(folder, web_installed=web or web_command() is not None):
            click.echo(line)
    sys.exit(code)


def default_folder(environ: Mapping[str, str] | None = None) -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/flower/demo``: out of any project, found again."""
    environ = os.environ if environ is None else environ
    cache = environ.get("XDG_CACHE_HOME") or str(
        Path(environ.get("HOME") or Path.home()) / ".cache"
    )
    return Path(cache).expanduser() / "flower" / "demo"


def played_by_demo(run_dir: Path) -> bool:
    """Whether ``run_dir`` is a demo's (its costs are simulated): ``flower status``."""
    return (run_dir / DEMO_MARK).is_file()


def unusable(folder: Path) -> str | None:
    """Why the demo cannot use ``folder`` (one line), or ``None``.

    A demo writes files (``hello.txt``, ``CLAUDE.md``, ``AGENTS.md``, ``runs/``), so it
    takes only a new folder, an empty one, or one an earlier demo made.
    """
    if folder.exists() and not folder.is_dir():
        return f"{folder} is a file, not a folder: pick another with -w"
    if not folder.is_dir() or played_by_demo(folder / "runs"):
        return None
    try:
        empty = not any(folder.iterdir())
    except OSError as exc:
        return f"cannot read {folder}: {exc.strerror or exc}"
    if not empty:
        return (
            f"{folder} is not empty and no demo ran there (a demo writes files into its"
            " folder): pick a new or empty one with -w"
        )
    return None


def web_command() -> click.Command | None:
    """``flower web`` when a plugin brings it (flower-plugin-web), else ``None``."""
    from flower.plugins import get_plugin_manager

    for batch in get_plugin_manager().hook.flower_cli_commands():
        for command in batch or ():
            if command.name == "web":
                return command
    return None


def demo_script(lang: str | None = None) -> Path:
    """The starter demo's script in ``lang`` (default: the language in effect; the script
    routes by the roles' own words, so each language has its own): inside the installed
    package (a wheel carries ``examples/starter-demo*.json`` as ``flower/_examples/``),
    else the checkout's."""
    from flower.kernel.lang import EN, current

    name = SCRIPT_NAME_EN if (lang or current()) == EN else SCRIPT_NAME
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "_examples" / name, package.parents[1] / "examples" / name):
        if candidate.is_file():
            return candidate
    return package / "_examples" / name


def sealed_environment(
    base_url: str, home: Path, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment of a demo: :data:`KEPT` from ``environ``, then the scripted
    model's variables, with flower's ``.env`` files and borrowing switched off.

    Built from nothing rather than patched, so a variable nobody thought to blank (a
    proxy, a cloud-provider setting, a plugin's credential) cannot reach the run.
    """
    from flower.kernel.env import DOTENV_SWITCH
    from flower.kernel.lang import current
    from flower.testing.env import offline_env
    from flower.ui.render import SIMULATED_ENV

    environ = os.environ if environ is None else environ
    env = {
        name: value
        for name, value in environ.items()
        if name in KEPT or name.startswith(KEPT_PREFIXES)
    }
    env.update(offline_env(base_url, home=home))
    env.update(
        {
            DOTENV_SWITCH: "0",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            SIMULATED_ENV: "1",
            # the demo plays the script of the language in effect (demo_script): its
            # processes speak that language too
            "FLOWER_LANG": current(),
        }
    )
    return env


@contextmanager
def sealed(env: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` is exactly ``env`` inside the block, and the user's again after."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def next_steps(folder: Path, *, web_installed: bool) -> list[str]:
    """The closing lines: where the demo is kept and what shows the rest of flower."""
    where = shlex.quote(str(folder))
    web = "the same, with its page in a browser" + (
        "" if web_installed else " (needs flower-plugin-web)"
    )
    rows = [
        (f"flower status -w {where}", "where the run stands (costs simulated)"),
        ("flower demo", "continues the same run (Enter leaves it; /again plays one more round)"),
        ("flower demo --web", web),
        ("flower demo --new", "starts the demo over"),
    ]
    width = max(len(command) for command, _ in rows) + 3
    return [f"flower demo: kept in {folder}"] + [
        f"  {command.ljust(width)}{what}" for command, what in rows
    ]


# --- the parts of the command -------------------------------------------------------------


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"flower demo: {message}", err=True)
    sys.exit(code)


def _pinned_port() -> int:
    raw = os.environ.get(PORT_ENV, "").strip()
    if not raw:
        return 0
    if not raw.isdigit() or int(raw) > 65535:
        _fail(f"{PORT_ENV}={raw!r} is not a port: use 1-65535, or 0 for a free one", EXIT_USAGE)
    return int(raw)


def _start_model(port: int) -> tuple[ScriptedModel, Path]:
    """The scripted model, listening, and a fresh HOME for the CLI; one line and exit 1
    when either is impossible (nothing has run, so nothing can reach anywhere else)."""
    from flower.testing.script import ScriptError, load_script
    from flower.testing.server import ScriptedModel

    path = demo_script()
    try:
        model = ScriptedModel(load_script(path), port=port, quiet=True)
    except (ScriptError, OSError, ValueError, TypeError) as exc:
        _fail(f"the demo's script cannot be played ({exc}): reinstall flower", EXIT_FAILED)
    try:
        model.start()
    except OSError as exc:
        _fail(
            f"the scripted model cannot listen on 127.0.0.1:{port} ({exc.strerror or exc});"
            " stopped before anything ran, nothing was sent anywhere",
            EXIT_FAILED,
        )
    import tempfile  # here, not at the top: `flower --help` loads this module

    try:
        home = Path(tempfile.mkdtemp(prefix="flower-demo-home-"))
    except OSError as exc:
        model.stop()
        _fail(f"cannot make a temporary HOME ({exc.strerror or exc})", EXIT_FAILED)
    return model, home


def _mark(folder: Path) -> None:
    """Make the folder and mark it a demo's, before anything runs in it."""
    import json
    import time

    from flower.kernel.files import atomic_write

    runs = folder / "runs"
    try:
        runs.mkdir(parents=True, exist_ok=True)
        if not played_by_demo(runs):
            mark = {"made_by": "flower demo", "costs": "simulated", "since": time.time()}
            atomic_write(runs / DEMO_MARK, json.dumps(mark) + "\n", redact=False)
    except OSError as exc:
        _fail(f"cannot use {folder}: {exc.strerror or exc}", EXIT_USAGE)


def _go() -> click.Command:
    from flower.commands.go import go

    return go


def _play(
    ctx: click.Context, command: click.Command, folder: Path, *, new: bool, verbose: bool
) -> int:
    """Run ``go`` (or ``web``) on the demo folder; its exit code.

    A first run (or ``--new``) makes the demo's request; a folder with a run to continue
    gets none, so the wake shows as it would for any run: the banner, then Enter, a line,
    ``/again`` or ``/new``. Without a terminal nobody can answer: questions settle at once.
    """
    from flower.workflow import wake_state

    runs = folder / "runs"
    continuing = bool(wake_state(folder, run_dir=runs)["continuing"])
    interactive = sys.stdin is not None and sys.stdin.isatty()
    params: dict[str, Any] = {
        "ask": () if continuing and not new else (ASK,),
        "workspace": folder,
        "run_dir": runs,
        "verbose": verbose,
        "new": new,
    }
    if not interactive:
        params["timeout"] = 0.0
    if command.name == "web":
        params.update(host=None, port=0)  # a fresh origin per run (flower-plugin-web)
    from flower.roles.sandbox import missing

    why = missing()
    if why:  # the script's commands are fixed and harmless; a real run would stop here
        click.echo(f"flower demo: no sandbox here ({why}): its scripted commands run without one")
        params["no_sandbox"] = True
    try:
        ctx.invoke(command, **params)
    except SystemExit as end:
        return end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
    return 0


@contextmanager
def _ends_cleanly() -> Iterator[None]:
    """SIGTERM and SIGHUP outside the run (which rescues its step itself) end the demo
    through ``finally`` blocks, so the model stops and the temporary HOME goes."""

    def leave(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, leave) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Watch:
    """Ends the demo with one line if the scripted model stops serving mid-run.

    The run could only retry against a dead loopback port (nothing else is configured),
    so nothing would leak; but it would wait for the "network" for an hour. SIGTERM goes
    through the run's own rescue: the step in flight is saved, ``flower demo`` continues.
    """

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.died = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="flower-demo-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_EVERY):
            if not self.model.alive:
                self.died = True
                click.echo(
                    "\nflower demo: the scripted model stopped; the demo ends here"
                    " (nothing was sent anywhere else)",
                    err=True,
                )
                os.kill(os.getpid(), signal.SIGTERM)
                return


__all__ = [
    "ASK",
    "DEMO_MARK",
    "KEPT",
    "PORT_ENV",
    "default_folder",
    "demo",
    "demo_script",
    "next_steps",
    "played_by_demo",
    "sealed",
    "sealed_environment",
    "unusable",
    "web_command",
]
