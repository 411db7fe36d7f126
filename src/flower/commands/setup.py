"""``flower setup``: ask for a key once, keep it where every flower finds it, try it.

A newcomer's first obstacle is the key: an installed flower has no folder of its own
for a ``.env``, and a wrong key otherwise shows up minutes into a run. This command asks
for the key (hidden), an optional gateway URL, an optional model and the language flower
speaks (``en`` or ``zh``; Enter takes the one saved, else the locale's suggestion, else
the seed's Chinese: :mod:`flower.kernel.lang`), writes them to
``${XDG_CONFIG_HOME:-~/.config}/flower/.env`` (mode 0600, merged with what is there),
then spends one request of a few tokens to say ``ok`` / ``auth`` / ``config`` /
``network`` (``FLOWER_NO_PROBE=1`` or ``--no-probe`` skips it).

``flower "..."`` calls :func:`run_setup` itself on a first run without credentials on a
terminal. The questions go through a :class:`SetupIO`, so the terminal front end can
route them through its own output path and line editor.

Exit codes: 0 saved (and the probe said ok, or was skipped); 1 nothing saved, or the
probe said auth / config / network; 2 no terminal to ask on; 130 cancelled (Ctrl-C).

This module imports only click and the standard library at load time.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import click

from flower.commands import EXIT_FAILED, EXIT_OK, EXIT_QUIT, EXIT_USAGE

__all__ = [
    "ConsoleIO",
    "SetupIO",
    "SetupOutcome",
    "TerminalIO",
    "as_setup_io",
    "needs_setup",
    "no_terminal_message",
    "run_setup",
    "save_env",
    "save_language",
    "setup",
    "setup_flow",
]

#: The keys this command writes; any other line of the file is kept as it is.
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
#: The language flower speaks (``flower.kernel.lang.ENV``), saved beside the key.
LANG_KEY = "FLOWER_LANG"
CLEAR = "-"
_URL = re.compile(r"^https?://[^\s/]+(/\S*)?$", re.IGNORECASE)
_KEY_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=")


class SetupIO(Protocol):
    """How setup talks: one line out, one line in (``None`` when the human cancels)."""

    def say(self, text: str) -> None: ...

    def ask(self, prompt: str) -> str | None: ...

    def ask_secret(self, prompt: str) -> str | None: ...


class ConsoleIO:
    """Plain standard streams; the secret is read with echo off (``getpass``)."""

    def say(self, text: str) -> None:
        print(text, flush=True)

    def ask(self, prompt: str) -> str | None:
        try:
            return input(prompt)
        except (EOFError, KeyboardInterrupt):
            print(flush=True)
            return None

    def ask_secret(self, prompt: str) -> str | None:
        return _secret(prompt)


def _secret(prompt: str) -> str | None:
    """Read a line with echo off; ``None`` on Ctrl-C or end of input."""
    import getpass

    try:
        return getpass.getpass(prompt)
    except (EOFError, KeyboardInterrupt):
        print(flush=True)
        return None


class TerminalIO:
    """Setup through flower's terminal: lines go through :meth:`Terminal.line` (cleaned,
    under the cross-process lock), answers through the same line editor as the wake
    prompt; the key is read with echo off, so it never reaches the screen."""

    def __init__(self, terminal: Any) -> None:
        self.terminal = terminal

    def say(self, text: str) -> None:
        self.terminal.line(text)

    def ask(self, prompt: str) -> str | None:
        from flower.ui.reader import ask_line

        return ask_line(self.terminal, prompt)

    def ask_secret(self, prompt: str) -> str | None:
        return _secret(prompt)


@dataclass
class SetupOutcome:
    """What :func:`setup_flow` did: saved keys, the probe's verdict, or a cancel."""

    saved: list[str] = field(default_factory=list)
    verdict: str | None = None  # None: no probe was made
    cancelled: bool = False

    @property
    def usable(self) -> bool:
        """Worth starting a run with: saved, and not refused (network trouble is waited
        out by the run's own resilience)."""
        return bool(self.saved) and self.verdict in (None, "ok", "network")

    @property
    def exit_code(self) -> int:
        if self.cancelled:
            return EXIT_QUIT
        return EXIT_OK if self.saved and self.verdict in (None, "ok") else EXIT_FAILED


class _Cancelled(Exception):
    pass


def needs_setup(workspace: str | Path | None = None) -> bool:
    """True when, after the ``.env`` lookup, no credential the CLI accepts is there."""
    from flower.kernel.credentials import check_credentials
    from flower.kernel.env import load_environment

    load_environment(workspace)
    try:
        check_credentials()
    except RuntimeError:
        return True
    return False


def no_terminal_message() -> str:
    """The one line for ``flower setup`` without a terminal to ask on."""
    from flower.kernel.env import show_path, user_env_path

    return (
        "flower setup: needs a terminal to ask for the key; without one, set"
        " ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN with ANTHROPIC_BASE_URL) in the"
        f" environment or in {show_path(user_env_path())}"
    )


def run_setup(io: Any = None, *, probe: bool | None = None) -> bool:
    """Run the questions; True when a run can start with what was saved (see
    :attr:`SetupOutcome.usable`). ``io`` is a :class:`SetupIO`, a
    :class:`flower.kernel.terminal.Terminal` (wrapped in :class:`TerminalIO`), or ``None``
    for a new Terminal on standard output."""
    return setup_flow(as_setup_io(io), probe=probe).usable


def as_setup_io(io: Any = None) -> SetupIO:
    """A :class:`SetupIO` for what the caller has: one already, a Terminal, or nothing."""
    if io is not None and hasattr(io, "ask_secret"):
        return cast(SetupIO, io)
    if io is None:
        from flower.kernel.terminal import Terminal

        io = Terminal()
    return TerminalIO(io)


def setup_flow(
    io: SetupIO,
    *,
    probe: bool | None = None,
    environ: MutableMapping[str, str] | None = None,
    path: Path | None = None,
) -> SetupOutcome:
    """Ask, save, apply to ``environ`` (the process's by default), then probe.

    ``probe=None`` probes unless ``FLOWER_NO_PROBE`` is set.
    """
    from flower.kernel.env import mask, parse_env_file, show_path, user_env_path

    environ = os.environ if environ is None else environ
    path = path or user_env_path(environ)
    where = show_path(path, environ)
    current = parse_env_file(path) if path.is_file() else {}
    outcome = SetupOutcome()
    io.say(f"flower setup: the key goes to {where} (readable by you only)")
    held = [k for k in CREDENTIALS if k in current]
    if held:
        io.say(f"  now: {held[0]}={mask(current[held[0]])}")
    try:
        token = _ask_token(io, keep=bool(held))
        if token is None and not held:  # nothing will be saved: no use asking the rest
            io.say("no key given; nothing saved (flower setup asks again)")
            return outcome
        url = _ask_url(io, current.get("ANTHROPIC_BASE_URL"))
        model = _ask_plain(
            io,
            "Model",
            current.get("ANTHROPIC_MODEL"),
            none="the CLI's default",
        )
        language = _ask_language(io, current.get(LANG_KEY), environ)
    except _Cancelled:
        io.say("cancelled; nothing saved")
        outcome.cancelled = True
        return outcome
    updates: dict[str, str | None] = {}
    if token is not None:
        kind = _credential_for(token, gateway=bool(url or current.get("ANTHROPIC_BASE_URL")))
        updates.update({k: None for k in CREDENTIALS if k != kind})
        updates[kind] = token
    if url is not None:
        updates["ANTHROPIC_BASE_URL"] = url or None
    if model is not None:
        updates["ANTHROPIC_MODEL"] = model or None
    if language is not None:
        updates[LANG_KEY] = language
    try:
        save_env(path, updates)
    except OSError as exc:
        io.say(f"cannot write {where}: {exc.strerror or exc}")
        return outcome
    saved = parse_env_file(path)
    if LANG_KEY in updates:  # a first-run setup's choice is the language of the run after it
        from flower.kernel.lang import resettle

        resettle()
    outcome.saved = sorted(k for k, v in updates.items() if v is not None)
    if outcome.saved:
        io.say(f"saved {', '.join(outcome.saved)} to {where}")
    _apply(saved, updates, environ, where, io)

    if probe is None:
        probe = not _truthy(environ.get("FLOWER_NO_PROBE", ""))
    if not probe:
        return outcome
    try:
        outcome.verdict = _probe(io, saved, environ)
    except KeyboardInterrupt:  # Ctrl-C while the request is out: a cancel, in one line
        io.say("cancelled while trying the key; it is saved, not tried")
        outcome.cancelled = True
    return outcome


def _ask_token(io: SetupIO, *, keep: bool) -> str | None:
    keeping = "; Enter keeps the current one" if keep else ""
    io.say(f"API key or token (typed hidden{keeping}):")
    for _ in range(3):
        answer = io.ask_secret("key> ")
        if answer is None:
            raise _Cancelled
        token = answer.strip()
        if not token:
            return None
        if any(c.isspace() or not c.isprintable() for c in token):
            io.say("  a key has no spaces or control characters; paste it again")
            continue
        from flower.kernel.env import mask

        io.say(f"  key: {mask(token)}")
        return token
    raise _Cancelled


def _ask_url(io: SetupIO, current: str | None) -> str | None:
    for _ in range(3):
        answer = _ask_plain(io, "Gateway URL", current, none="https://api.anthropic.com")
        if not answer or _URL.match(answer):
            return answer.rstrip("/") if answer else answer
        io.say("  a gateway URL starts with http:// or https://, e.g. https://gw.example.com")
    raise _Cancelled


def _ask_plain(io: SetupIO, what: str, current: str | None, *, none: str) -> str | None:
    """``None`` keeps the current value, ``""`` clears it, anything else replaces it.

    The explanation is a line of its own: the prompt stays short enough for the line
    editor, which cuts a prompt to half the width."""
    now = f"Enter keeps {current}; {CLEAR} clears it" if current else f"Enter for {none}"
    io.say(f"{what} ({now}):")
    answer = io.ask(f"{what.split()[-1].lower()}> ")
    if answer is None:
        raise _Cancelled
    answer = answer.strip()
    if answer == CLEAR:
        return ""
    return answer or None


def _ask_language(io: SetupIO, saved: str | None, environ: Mapping[str, str]) -> str | None:
    """The language to save, or ``None`` when the answer changes nothing (what is saved
    stays; with nothing saved, Chinese applies anyway). Enter takes the saved choice,
    else the locale's suggestion (``LC_ALL``, ``LC_MESSAGES``, ``LANG``), else Chinese."""
    from flower.kernel.lang import DEFAULT, from_locale, normalize

    now = normalize(saved)
    suggested = now or from_locale(environ) or DEFAULT
    io.say(f"Language of the prompts, documents and notes: en or zh (Enter for {suggested}):")
    for _ in range(3):
        answer = io.ask("lang> ")
        if answer is None:
            raise _Cancelled
        chosen = normalize(answer.strip() or suggested)
        if chosen is not None:
            return None if chosen == (now or DEFAULT) else chosen
        io.say("  en (English) or zh (中文, the default)")
    raise _Cancelled


def _credential_for(token: str, *, gateway: bool) -> str:
    """Which variable a token belongs in: its prefix says so for Anthropic's own keys; a
    gateway's token goes in ``ANTHROPIC_AUTH_TOKEN`` (sent as a Bearer token)."""
    if token.startswith("sk-ant-oat"):
        return "CLAUDE_CODE_OAUTH_TOKEN"
    if token.startswith("sk-ant-") or not gateway:
        return "ANTHROPIC_API_KEY"
    return "ANTHROPIC_AUTH_TOKEN"


def _apply(
    saved: Mapping[str, str],
    updates: Mapping[str, str | None],
    environ: MutableMapping[str, str],
    where: str,
    io: SetupIO,
) -> None:
    """Make this process use what was saved, unless a higher source sets the key (then
    say which source wins, or the saved key would seem to have no effect)."""
    from flower.kernel import env as envmod

    for key in updates:
        before = envmod.origin(key, environ)
        if before is not None and before != where:
            if key in saved:
                io.say(f"  note: {key} is also set in {before}, which wins over {where}")
            else:
                io.say(f"  note: {key} is still set in {before}")
            continue
        if key in saved:
            environ[key] = saved[key]
            envmod.remember(key, where)
        else:
            environ.pop(key, None)
            envmod.forget(key)


def _probe(io: SetupIO, saved: Mapping[str, str], environ: Mapping[str, str]) -> str:
    """Try the saved values (what was just typed), not whatever shadows them."""
    from flower.runtime.probe import probe

    trial = {k: v for k, v in environ.items() if k not in CREDENTIALS}
    trial.pop("ANTHROPIC_BASE_URL", None)
    trial.update(saved)
    base = trial.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"
    io.say(f"checking the key with one tiny request to {base} ...")
    result = probe(trial)
    io.say(result.line())
    return result.verdict


def _truthy(value: str) -> bool:
    return value.strip().lower() not in ("", "0", "false", "no", "off")


def save_env(path: Path, updates: Mapping[str, str | None]) -> None:
    """Set (or, for ``None``, remove) keys in a ``.env`` file; keep every other line.

    Written to ``.tmp`` with mode 0600 and swapped in, so the secret is never readable by
    others, not even for a moment, and a killed process never leaves half a file.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = ["# flower's credentials (written by `flower setup`; keep this file private)"]
    pending = dict(updates)
    out: list[str] = []
    for line in lines:
        found = _KEY_LINE.match(line)
        key = found.group(1) if found else None
        if key is None or key not in updates:
            out.append(line)
            continue
        value = pending.pop(key, None)  # None: removed, or a later duplicate line
        if value is not None:
            out.append(f"{key}={_quote(value)}")
    out.extend(f"{k}={_quote(v)}" for k, v in pending.items() if v is not None)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing .tmp keeps its old mode through O_CREAT
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("\n".join(out) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def save_language(value: str, path: Path | None = None) -> int:
    """``flower setup --lang``: save the language beside the key, ask nothing; the exit
    code (2 for a language flower does not speak)."""
    from flower.kernel.env import show_path, user_env_path
    from flower.kernel.lang import parse

    try:
        code = parse(value, source="--lang")
    except ValueError as exc:
        click.echo(f"flower setup: {exc}", err=True)
        return EXIT_USAGE
    path = path or user_env_path()
    try:
        save_env(path, {LANG_KEY: code})
    except OSError as exc:
        click.echo(f"flower setup: cannot write {show_path(path)}: {exc.strerror or exc}", err=True)
        return EXIT_FAILED
    click.echo(f"saved {LANG_KEY}={code} to {show_path(path)}")
    return EXIT_OK


def _quote(value: str) -> str:
    """Bare when safe; single quotes (literal in python-dotenv) otherwise."""
    if re.fullmatch(r"[A-Za-z0-9_\-./:@+=,]*", value):
        return value
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@click.command(name="setup")
@click.option("--no-probe", is_flag=True, help="Save without trying the key.")
@click.option(
    "--lang",
    "language",
    default=None,
    metavar="en|zh",
    help="Save only the language flower speaks (no key asked, no terminal needed).",
)
def setup(no_probe: bool, language: str | None) -> None:
    """Save an API key (and a gateway URL, a model) for every flower run, then try it.

    \b
    Asks on the terminal; the key is read hidden and written to
    ${XDG_CONFIG_HOME:-~/.config}/flower/.env with mode 0600. One request of a few
    tokens then says ok / auth / config / network (FLOWER_NO_PROBE=1 skips it).
    Exit codes: 0 saved and ok, 1 not saved or the key did not work, 2 no terminal,
    130 cancelled. "flower setup --lang en" saves the language alone.
    """
    if language is not None:
        sys.exit(save_language(language))
    if not sys.stdin.isatty():
        click.echo(no_terminal_message(), err=True)
        sys.exit(EXIT_USAGE)
    outcome = setup_flow(as_setup_io(), probe=False if no_probe else None)
    sys.exit(outcome.exit_code)
