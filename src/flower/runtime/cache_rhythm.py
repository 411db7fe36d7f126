"""The prompt cache's lifetime, chosen by the rhythm of a step's sessions.

The API keeps a cached prompt prefix for 5 minutes by default, or for an hour when the
request asks (``"ttl": "1h"``). A 1-hour write costs 2x the input price instead of 1.25x;
a read costs 0.1x either way. The bundled CLI asks for the hour when
``CLAUDE_CODE_PROMPT_CACHE_TTL=1h`` is in its environment (its main conversation) and, for
its subagents, ``CLAUDE_CODE_SUBAGENT_PROMPT_CACHE_TTL=1h`` (without it they keep 5
minutes).

Which pays depends on when the session's next request comes. A coordinator resumed every
round waits between rounds for the judge (and sometimes for a human): when that wait is
longer than 5 minutes, its whole history is cold at the next round and is written again
at 1.25x, where with the hour it would have been read at 0.1x. Within a round its
requests come seconds apart and the default is right. So the break-even, for a prefix of
``P`` tokens a round adds ``d`` to: the hour costs ``0.75 d`` more at the writes and saves
``1.15 P`` at the next round's first request when that comes after 5 minutes; with
``P`` many times ``d`` (a long history, a short round), the hour wins whenever the wait
is likely longer than 5 minutes, and loses little when it is not.

How flower decides "likely": by the waits it has seen. Each time a step resumes a
session this process ran before, the time since that session ended is one wait of the
step's (a guarded step's rounds, ``干活#round2`` and on, count as the step's own); once
the median of the step's last :attr:`CacheRhythm.recent` waits is over
:attr:`CacheRhythm.threshold` (4 minutes: a margin under the TTL, since the next wait
also includes the next round's own start-up), the step's sessions ask for the hour. A
step's first session, and any step whose waits are short (a burst), keep the default.
A ``CLAUDE_CODE_PROMPT_CACHE_TTL`` the user set (in the environment or an agent's
``env``) always wins.

flower pins the main conversation's TTL for every session it drives (``5m`` when the
rhythm does not ask for the hour; ``1h`` when the user's environment has
``ENABLE_PROMPT_CACHING_1H``): the session store then knows the TTL the CLI's own cache
marks carry and gives its mark in the resumed history the same
(:mod:`flower.stores.anchor`; the API refuses an hour's mark after a five minutes' one).
The user's choice wins wherever the CLI reads one: ``CLAUDE_CODE_PROMPT_CACHE_TTL`` or
``FORCE_PROMPT_CACHING_5M`` in the environment or the agent's ``env``, or
``promptCacheTtl`` in a settings file the CLI reads (the project's
``.claude/settings.local.json`` and ``.claude/settings.json``, the user's
``settings.json``, an administrator's ``/etc/claude-code/managed-settings.json``); flower
then pins nothing, not even the hour the rhythm asks for (the
CLI lets its variable beat the setting), and marks with that TTL.

The subagents go with their session. A coordinator's workers are its subagents, and a
round's first worker comes after the same long wait: its prefix (the tools and the
subagent's system prompt, about 6.8K tokens in the bundled CLI, the same for every worker)
was written again at every round. With the hour it is read: measured on HT001's shape
with the judge at 400 s, each round's first worker then reads 6.8K tokens at 0.05x
instead of writing them at 1.25x, for 0.75x more on what each worker writes of its own
(its task and context, about 2.5K tokens). The user's own
``CLAUDE_CODE_SUBAGENT_PROMPT_CACHE_TTL``, or ``subagentPromptCacheTtl`` in a settings
file, wins here too.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from flower.stores.anchor import TTLS
from flower.stores.mask import HOUR

__all__ = [
    "HOUR",
    "SUBAGENT_TTL_VARIABLE",
    "TTL_VARIABLE",
    "CacheRhythm",
    "lifetime",
    "marks_ttl",
    "settings_ttl",
    "settings_ttls",
]

#: The bundled CLI's variable for its main conversation's cache TTL ("5m" or "1h").
TTL_VARIABLE = "CLAUDE_CODE_PROMPT_CACHE_TTL"
#: The same for its subagents (it takes precedence over the settings' own).
SUBAGENT_TTL_VARIABLE = "CLAUDE_CODE_SUBAGENT_PROMPT_CACHE_TTL"
#: The CLI's variables that set its TTL too: five minutes whatever else says (it beats
#: :data:`TTL_VARIABLE`), and the hour when nothing else chose.
FORCE_5M_VARIABLE = "FORCE_PROMPT_CACHING_5M"
HOUR_VARIABLE = "ENABLE_PROMPT_CACHING_1H"
#: The settings key the CLI reads for its main conversation's TTL.
SETTINGS_KEY = "promptCacheTtl"
#: The same for its subagents (and helpers outside the main conversation).
SUBAGENT_SETTINGS_KEY = "subagentPromptCacheTtl"


def lifetime(*envs: Mapping[str, str]) -> float | None:
    """How long a session's cache lives when its environment (the first of ``envs`` that
    names :data:`TTL_VARIABLE`, then the process's) asks for the hour; ``None`` for the
    default. The session store is told, so a load 6 minutes after the last line of such
    a session counts the cache as warm and keeps the old context as it was."""
    for env in (*envs, os.environ):
        value = env.get(TTL_VARIABLE)
        if value:
            return HOUR if value == "1h" else None
    return None


def marks_ttl(*envs: Mapping[str, str], cwd: str | Path | None = None) -> str | None:
    """The TTL the CLI's cache marks carry in a session whose environment is ``envs``
    (then the process's), in the CLI's own order: ``FORCE_PROMPT_CACHING_5M``, then
    :data:`TTL_VARIABLE`, then a settings file's ``promptCacheTtl`` (of ``cwd``'s
    project, then the user's). ``None`` when none of them says: the CLI's default then
    depends on more than flower sees, and the store places no mark of its own."""
    every = (*envs, os.environ)
    if any(env.get(FORCE_5M_VARIABLE) for env in every):
        return "5m"
    for env in every:
        value = env.get(TTL_VARIABLE)
        if value:
            return value if value in TTLS else None
    chosen = settings_ttl(cwd)
    return chosen if chosen in TTLS else None


#: Where the CLI reads an administrator's settings on Linux (``managed-settings.json``,
#: and ``managed-settings.d/*.json`` drop-ins); they outrank every other file.
MANAGED_DIR = Path("/etc/claude-code")


def settings_ttl(cwd: str | Path | None = None, key: str = SETTINGS_KEY) -> str | None:
    """``key`` (``promptCacheTtl``, or :data:`SUBAGENT_SETTINGS_KEY`) from the first
    settings file the CLI reads that names it (see :func:`settings_ttls`)."""
    return settings_ttls(cwd, (key,)).get(key)


def settings_ttls(
    cwd: str | Path | None = None, keys: tuple[str, ...] = (SETTINGS_KEY, SUBAGENT_SETTINGS_KEY)
) -> dict[str, str]:
    """Each of ``keys`` that a settings file the CLI reads names, from the first that does,
    every file read once: the administrator's (:data:`MANAGED_DIR`: the drop-ins, the
    last in name order first, then ``managed-settings.json``), the project's (``cwd``)
    local then shared settings, then the user's (``CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""
    config = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    places = [Path(config) / "settings.json"]
    if cwd is not None:
        places[:0] = [Path(cwd) / ".claude" / "settings.local.json"]
        places[1:1] = [Path(cwd) / ".claude" / "settings.json"]
    try:
        drop_ins = sorted((MANAGED_DIR / "managed-settings.d").glob("*.json"), reverse=True)
    except OSError:
        drop_ins = []
    places[:0] = [*drop_ins, MANAGED_DIR / "managed-settings.json"]
    found: dict[str, str] = {}
    for place in places:
        try:
            data = json.loads(place.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        for key in keys:
            value = data.get(key)
            if key not in found and isinstance(value, str) and value:
                found[key] = value
        if len(found) == len(keys):
            break
    return found


@dataclass
class CacheRhythm:
    """When a step's sessions ask the API for the 1-hour prompt cache.

    Attributes:
        enabled: ``False`` never asks (every session keeps the CLI's default).
        threshold: Seconds: a median wait above this asks for the hour.
        recent: How many of the step's latest waits the median is taken over.
    """

    enabled: bool = True
    threshold: float = 240.0
    recent: int = 3
    _ends: dict[str, float] = field(default_factory=dict, init=False, repr=False)
    _waits: dict[str, list[float]] = field(
        default_factory=lambda: defaultdict(list), init=False, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def started(self, step: str, session_id: str | None, now: float) -> None:
        """``step`` starts, resuming ``session_id`` (``None``: a new session)."""
        with self._lock:
            ended = self._ends.get(session_id) if session_id else None
            if ended is not None and now >= ended:
                self._waits[_base(step)].append(now - ended)

    def ended(self, session_id: str | None, now: float) -> None:
        """A session ran until ``now`` (its last request's answer)."""
        if session_id:
            with self._lock:
                self._ends[session_id] = now

    def ttl(self, step: str) -> str | None:
        """``"1h"`` when ``step``'s sessions should ask for the hour, else ``None``."""
        if not self.enabled:
            return None
        with self._lock:
            waits = self._waits.get(_base(step), [])[-max(self.recent, 1) :]
        if waits and statistics.median(waits) > self.threshold:
            return "1h"
        return None

    def env(
        self, step: str, given: Mapping[str, str], cwd: str | Path | None = None
    ) -> dict[str, str]:
        """What to add to a session's environment (``given``: the agent's own ``env``;
        ``cwd``: its folder, whose settings may name a TTL): the TTL pinned for the
        session (the hour when the rhythm asks, for its subagents too), unless the user
        chose one (see the module's docstring)."""
        if not self.enabled or _chosen(TTL_VARIABLE, given) or _chosen(FORCE_5M_VARIABLE, given):
            return {}
        chosen = settings_ttls(cwd)
        if SETTINGS_KEY in chosen:  # the CLI's variable would beat the user's setting
            return {}
        hour = self.ttl(step)
        if hour:
            out = {TTL_VARIABLE: hour}
            if not _chosen(SUBAGENT_TTL_VARIABLE, given) and SUBAGENT_SETTINGS_KEY not in chosen:
                out[SUBAGENT_TTL_VARIABLE] = hour
            return out
        return {TTL_VARIABLE: "1h" if _chosen(HOUR_VARIABLE, given) else "5m"}


def _chosen(variable: str, given: Mapping[str, str]) -> bool:
    """Whether the user chose ``variable`` (in the agent's ``env`` or the environment)."""
    return variable in given or bool(os.environ.get(variable))


def _base(step: str) -> str:
    """A step's name without the round or retry a guarded step's label carries
    (``干活#round3`` is ``干活``'s third round: one rhythm)."""
    return step.split("#", 1)[0]
