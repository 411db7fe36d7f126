"""What an outage cut off: the workers that were mid-task, read from their own transcripts.

When the CLI gives up on an outage, the Runtime waits for the network and resumes the
coordinator's session with ``Resilience.resume_prompt``. A worker (a subagent the
coordinator started with the Agent tool) that was mid-task is not resumed with it: the
coordinator holds an error for its Agent call ("Agent terminated early due to an API
error"), or nothing at all for a background worker, and nothing in its context says what
the worker had already done. The work is then redone from scratch, or, worse, half-done
work (a file written, a migration run) goes unnoticed.

The worker's own transcript is in the session store, under the session's subkeys
(``subagents/agent-<id>``, listed by ``list_subkeys``), mirrored line by line while it
worked. :func:`read_cut_off` reads the coordinator's transcript and every worker's as
stored (``stored()``, before the load policies reshape them) and finds the workers that
were active during the attempt that failed and never delivered their final answer;
:func:`flower.runtime.cutoff_words.cut_off_report`, which the
Runtime calls, words that into a short report for the resume prompt: what each was asked,
the files it changed, the commands that wrote, its last calls and their results, its last
words. This module holds the data and never imports its words.

A call that was running when the attempt ended (a ``tool_use`` without a ``tool_result``)
is never treated as done nor as not done: the report lists it as "may or may not have taken
effect: verify", the same words the pruning store gives such a call in a resumed context
(:data:`flower.stores.prune.ORPHAN_NOTE`).

Which workers count as cut off: those with a line written since the failed attempt's
prompt (the newest prompt the SDK sent in the coordinator's transcript), whose transcript
does not end with a model reply free of tool calls (it ends on an API error, a tool result
the model never answered, or a call that never got its result). A worker cut off in an
earlier attempt was reported then, in the prompt that is now in the session's history.

Can the CLI resume the worker itself? Measured with the bundled CLI 2.1.332 and the
scripted model: yes, when the coordinator may use ``SendMessage``. ``SendMessage(to=<agent
id>)`` from the resumed coordinator resumes the worker from its transcript (the SDK
materialises the subagent transcripts from the store with the main one; the worker's next
request carries its whole history, cut-off calls healed by the pruning store). flower's
roles do not offer ``SendMessage`` (``roles/walls.py``: a read-only role could reach a live
session with it), so the report is what a coordinator gets; a spec that lists it is also
told the id to send to.

Everything here is best effort: a report that cannot be made is an empty string, never an
exception, because a resume must not fail for the sake of its footnote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from flower.kernel.text import one_line
from flower.stores.transcript import Entry, blocks, is_synthetic, result_text

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec

__all__ = [
    "Call",
    "Cutoff",
    "Worker",
    "can_message",
    "find_cut_off",
    "read_cut_off",
    "writes_files",
]

#: Where the CLI keeps a subagent's transcript, under the session's key.
WORKER_SUBPATH = "subagents/agent-"
#: Tools whose input names a file they change (NotebookEdit names a notebook).
FILE_TOOLS: Mapping[str, tuple[str, ...]] = {
    "Write": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path", "file_path"),
}
#: Tools whose input is best shown by one of its fields.
_SHOWN_FIELD: Mapping[str, str] = {
    "Bash": "command",
    "Read": "file_path",
    "Glob": "pattern",
    "Grep": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "Agent": "description",
}
#: ``toolDenialKind`` of a result the CLI made up for a call that never finished.
_CLI_HEALED = "interrupted"


@dataclass
class Call:
    """One tool call in a transcript, and what came back.

    Attributes:
        tool: The tool's name.
        input: Its input, as the model gave it.
        result: The result's text; ``None`` when no result was recorded (the call was
            cut off mid-flight: it may or may not have taken effect).
        error: Whether the result is an error (a refusal, a failed command).
    """

    tool: str
    input: Mapping[str, Any]
    result: str | None = None
    error: bool = False

    @property
    def cut(self) -> bool:
        return self.result is None

    @property
    def file(self) -> str | None:
        """The file a Write/Edit/NotebookEdit call changes, else ``None``."""
        for name in FILE_TOOLS.get(self.tool, ()):
            value = self.input.get(name)
            if isinstance(value, str) and value:
                return value
        return None

    @property
    def command(self) -> str | None:
        value = self.input.get("command") if self.tool == "Bash" else None
        return value if isinstance(value, str) else None

    def shown(self, limit: int = 160) -> str:
        """``Bash: <command>``, ``Write <path>``, ``Grep <pattern>``: the call in one line."""
        key = _SHOWN_FIELD.get(self.tool)
        value = self.input.get(key) if key else None
        if self.file is not None:
            return one_line(f"{self.tool} {self.file}", limit)
        if isinstance(value, str) and value:
            sep = ": " if self.tool == "Bash" else " "
            return one_line(f"{self.tool}{sep}{value}", limit)
        import json

        return one_line(f"{self.tool} {json.dumps(dict(self.input), ensure_ascii=False)}", limit)


@dataclass
class Worker:
    """A subagent's transcript, read for what it did.

    Attributes:
        agent_id: The CLI's id for it (``SendMessage`` takes it as ``to``).
        kind: Its ``subagent_type`` (``agentType``), "" when unknown.
        description: The short description the coordinator gave its Agent call.
        prompt: What it was asked: the first message of its transcript.
        calls: Every tool call, in order.
        last_text: The last thing the model said in it ("" if nothing).
        finished: Whether its transcript ends with a model reply free of tool calls.
        tool_use_id: The coordinator's Agent call that started it ("" when unknown).
    """

    agent_id: str
    kind: str = ""
    description: str = ""
    prompt: str = ""
    calls: list[Call] = field(default_factory=list)
    last_text: str = ""
    finished: bool = False
    tool_use_id: str = ""

    @property
    def changed(self) -> list[str]:
        """Files its Write/Edit/NotebookEdit calls changed (a result that is no error)."""
        return _unique(c.file for c in self.calls if c.file and not c.cut and not c.error)

    @property
    def writing_commands(self) -> list[str]:
        """Its Bash commands that obviously write (redirections, rm, mv, git commit...)."""
        return _unique(
            c.command for c in self.calls if c.command and not c.cut and writes_files(c.command)
        )

    @property
    def cut_calls(self) -> list[Call]:
        """Calls that were running when it was cut off: no result recorded."""
        return [c for c in self.calls if c.cut]


@dataclass
class Cutoff:
    """What the failed attempt cut off."""

    workers: list[Worker] = field(default_factory=list)
    #: The coordinator's own calls without a result, Agent calls of reported workers aside.
    calls: list[Call] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.workers or self.calls)


async def read_cut_off(store: Any, project_key: str, session_id: str) -> Cutoff:
    """What the failed attempt of session ``session_id`` cut off, read from the store.

    ``store`` is the Runtime's session store; its ``stored(key)`` (the rows as stored)
    is used when it has one, else ``load(key)`` (whose healed results still read as
    cut off). May raise: the report's entry,
    :func:`flower.runtime.cutoff_words.cut_off_report`, turns any failure into no report.
    """
    key = {"project_key": project_key, "session_id": session_id}
    main = await _read(store, key) or []
    workers: dict[str, list[Entry]] = {}
    lister = getattr(store, "list_subkeys", None)
    if lister is not None:
        for subpath in await lister(key):
            if isinstance(subpath, str) and subpath.startswith(WORKER_SUBPATH):
                workers[subpath] = await _read(store, {**key, "subpath": subpath}) or []
    return find_cut_off(main, workers)


async def _read(store: Any, key: Mapping[str, str]) -> list[Entry] | None:
    reader = getattr(store, "stored", None) or store.load
    rows = await reader(dict(key))
    return [e for e in rows or [] if isinstance(e, dict)]


def can_message(spec: AgentSpec | None) -> bool:
    """Whether ``spec``'s coordinator may use ``SendMessage`` (the report then says how to
    resume each worker)."""
    if spec is None:
        return False
    from flower.roles.walls import tool_names

    return "SendMessage" in tool_names(spec.allowed_tools)


def find_cut_off(main: list[Entry], workers: Mapping[str, list[Entry]]) -> Cutoff:
    """The workers active since the coordinator's latest prompt that never finished, and
    the coordinator's own calls since then that have no result."""
    since = _latest_prompt(main)
    found = Cutoff()
    for subpath, entries in sorted(workers.items()):
        if not entries or not _active_since(entries, since):
            continue
        worker = read_worker(subpath, entries)
        if not worker.finished:
            found.workers.append(worker)
    recent = main[since[0] :] if since is not None else main
    reported = {w.tool_use_id for w in found.workers} - {""}
    for call_id, call in _calls(recent).items():
        if call.cut and not (call.tool in ("Agent", "Task") and call_id in reported):
            found.calls.append(call)
    found.workers.sort(key=lambda w: _first_time(workers, w.agent_id))
    return found


def read_worker(subpath: str, entries: list[Entry]) -> Worker:
    """What one subagent transcript says the worker was asked, did and said."""
    worker = Worker(agent_id=subpath.removeprefix(WORKER_SUBPATH))
    for entry in entries:
        if entry.get("type") == "agent_metadata":
            worker.kind = str(entry.get("agentType") or worker.kind)
            worker.description = str(entry.get("description") or worker.description)
            worker.tool_use_id = str(entry.get("toolUseId") or worker.tool_use_id)
    worker.prompt = next(
        (text for e in entries if (text := _prompt_text(e)) is not None), worker.prompt
    )
    worker.calls = list(_calls(entries).values())
    for entry in entries:
        if entry.get("type") == "assistant" and not is_synthetic(entry):
            said = _said(entry)
            if said:
                worker.last_text = said
    worker.finished = _finished(entries)
    return worker


def _calls(entries: list[Entry]) -> dict[str, Call]:
    """``tool_use_id -> Call`` in call order, each with its result when one was recorded
    (a result the pruning store or the CLI made up for an unfinished call is none)."""
    from flower.stores.prune import ORPHAN_NOTE, ORPHAN_NOTE_EN

    calls: dict[str, Call] = {}
    for entry in entries:
        kind = entry.get("type")
        for block in blocks(entry):
            if not isinstance(block, dict):
                continue
            if kind == "assistant" and block.get("type") == "tool_use":
                given = block.get("input")
                calls[str(block.get("id"))] = Call(
                    tool=str(block.get("name") or "?"),
                    input=given if isinstance(given, dict) else {},
                )
            elif kind == "user" and block.get("type") == "tool_result":
                call = calls.get(str(block.get("tool_use_id")))
                text = result_text(block.get("content"))
                made_up = (
                    entry.get("flowerHealed") is True
                    or entry.get("toolDenialKind") == _CLI_HEALED
                    or text in (ORPHAN_NOTE, ORPHAN_NOTE_EN)
                )
                if call is not None and not made_up:
                    call.result, call.error = text, bool(block.get("is_error"))
    return calls


def _finished(entries: list[Entry]) -> bool:
    """Whether the last conversational line is a real model reply with no tool call."""
    for entry in reversed(entries):
        kind = entry.get("type")
        if kind not in ("user", "assistant") or not isinstance(entry.get("message"), dict):
            continue
        if kind == "user":
            return False  # a result or a message the model never answered
        if is_synthetic(entry):
            return False  # an API error ended it
        return not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks(entry))
    return False


def _prompt_text(entry: Entry) -> str | None:
    """The text of a user message that is not a tool result or a meta line."""
    if entry.get("type") != "user" or entry.get("isMeta") is True:
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = blocks(entry)
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in parts):
        return None
    texts = [
        str(b.get("text", "")) for b in parts if isinstance(b, dict) and b.get("type") == "text"
    ]
    return "\n".join(texts) if texts else None


def _said(entry: Entry) -> str:
    return "\n".join(
        str(b.get("text", ""))
        for b in blocks(entry)
        if isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip()
    )


def _latest_prompt(main: list[Entry]) -> tuple[int, float | None] | None:
    """``(index, time)`` of the newest prompt the SDK sent in the coordinator's
    transcript: the failed attempt's, which is where its window starts."""
    for index in range(len(main) - 1, -1, -1):
        entry = main[index]
        sent = entry.get("promptSource") == "sdk" or entry.get("turnOrigin") == "sdk"
        if sent and _prompt_text(entry) is not None:
            return index, _time(entry)
    return None


def _active_since(entries: list[Entry], since: tuple[int, float | None] | None) -> bool:
    """Whether the transcript has a line written at or after ``since``'s time (any line,
    when the time is unknown)."""
    if since is None or since[1] is None:
        return True
    start = since[1]
    return any((t := _time(e)) is not None and t >= start for e in entries) or all(
        _time(e) is None for e in entries
    )


def _first_time(workers: Mapping[str, list[Entry]], agent_id: str) -> float:
    entries = workers.get(WORKER_SUBPATH + agent_id, [])
    return min((t for e in entries if (t := _time(e)) is not None), default=0.0)


def _time(entry: Entry) -> float | None:
    stamp = entry.get("timestamp")
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _unique(items: Iterable[str | None]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


# --- Bash commands that obviously write ------------------------------------------------

#: Quoted text is dropped before looking: ``awk '$1 > 5'`` compares, it does not write.
_QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")
#: A redirection into something other than a descriptor or /dev/null.
_REDIRECT = re.compile(r"(?:^|[^<>&0-9])(?:\d|&)?>>?(?!&)(?!\|)\s*(?!/dev/null\b)[^\s;&|<>]")
_SEGMENT = re.compile(r"&&|\|\||[;|\n]")
#: Programs that change files whatever their arguments.
_WRITERS = frozenset(
    "rm rmdir mv cp mkdir touch tee ln chmod chown truncate dd install rsync patch unzip"
    " shred mkfs".split()
)
#: Programs that write with these subcommands.
_WRITING_SUBCOMMANDS: Mapping[str, frozenset[str]] = {
    "git": frozenset(
        "add commit checkout switch reset restore rm mv apply am merge rebase cherry-pick"
        " revert stash clean pull init clone tag".split()
    ),
    "pip": frozenset({"install", "uninstall"}),
    "pip3": frozenset({"install", "uninstall"}),
    "uv": frozenset({"add", "remove", "sync", "pip", "lock"}),
    "npm": frozenset({"install", "i", "ci", "uninstall", "update"}),
    "pnpm": frozenset({"install", "add", "remove", "update"}),
    "yarn": frozenset({"add", "remove", "install"}),
    "cargo": frozenset({"add", "remove", "install", "new", "init"}),
    "go": frozenset({"get", "install", "mod"}),
}
_PREFIXES = frozenset({"sudo", "env", "command", "nohup", "time"})


def writes_files(command: str) -> bool:
    """Whether a Bash command obviously writes files: a redirection into a file, ``tee``,
    ``rm``/``mv``/``cp``/``mkdir``..., ``sed -i``, ``git commit``/``checkout``..., a
    package install. "Obviously": a build or a test run that writes as a side effect is
    not counted (the report lists every recent command anyway)."""
    bare = _QUOTED.sub("''", command)
    if _REDIRECT.search(bare):
        return True
    for segment in _SEGMENT.split(bare):
        words = [w for w in segment.split() if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", w)]
        while words and words[0] in _PREFIXES:
            words = words[1:]
        if not words:
            continue
        verb = words[0].rsplit("/", 1)[-1]
        if verb in _WRITERS:
            return True
        if verb in ("sed", "perl") and any(_in_place(w) for w in words[1:]):
            return True
        if verb == "tar" and len(words) > 1 and re.match(r"-?[a-zA-Z]*[xc]", words[1]):
            return True
        if verb in ("python", "python3") and words[1:3] == ["-m", "pip"]:
            words, verb = words[2:], "pip"
        subs = _WRITING_SUBCOMMANDS.get(verb)
        if subs and _subcommand(words[1:]) in subs:
            return True
    return False


def _in_place(option: str) -> bool:
    """``-i``, ``-i.bak``, ``-pi``, ``--in-place``: sed's and perl's edit-in-place."""
    if option.startswith("--"):
        return option.startswith("--in-place")
    if option[1:2] in ("M", "m", "I", "e", "f"):  # those take a value: -Mstrict, -e 'x'
        return False
    return re.fullmatch(r"-[A-Za-z]{0,3}i[A-Za-z]{0,3}(?:\.\S*)?", option) is not None


#: Options of git and the package managers that take the next word as their value.
_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--prefix", "--cwd"})


def _subcommand(args: list[str]) -> str:
    """The first argument that is not an option (or an option's value): ``commit`` in
    ``git -C repo commit -m x``."""
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif not word.startswith("-"):
            return word
    return ""
