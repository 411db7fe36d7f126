"""The hook layer: the walls flower puts around every session.

Which tools the main thread may not touch, which over-long results go to disk, which
role runs in its own worktree: all of it is enforced by SDK hooks, not by the prompt,
because a prompt is advice a model may ignore. (Measured: a judge with a goal ran Bash
11 times; an agent with ``allowed_tools=["Read"]`` called Write and Bash; with
"do not use a worktree" in the system prompt the model passed ``isolation=None`` and the
injected ``"worktree"`` still landed.)

Every guard that "only stops the main thread" tells it apart with one function,
:func:`_is_main_thread`: a subagent's tool-lifecycle hook input carries ``agent_id``,
the main thread's does not.

The Runtime installs all of this from an ``AgentSpec`` (through the kernel's
``flower_guards`` hook); install them by hand only when driving the SDK yourself.
The SDK is imported lazily.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.files import keep_out_of_git
from flower.kernel.redact import current, redact_guard, watch
from flower.records.workbench import SPILL_DIRNAME
from flower.roles.deny_texts import GLANCE_REASON as GLANCE_REASON  # re-exported
from flower.roles.deny_texts import SPILL_HEAD as SPILL_HEAD  # re-exported
from flower.roles.deny_texts import (
    confined_text,
    counting_text,
    delegate_text,
    glance_reason,
    missing_text,
    reach_text,
    spill_pointer,
    state_text,
)

if TYPE_CHECKING:
    from claude_agent_sdk import AgentDefinition, HookMatcher

    from flower.kernel.agent_spec import AgentSpec
    from flower.records.workbench import Workbench

HANDS_ON = "Bash|Write|Edit|NotebookEdit"
WRITE_ONLY = "Write|Edit|NotebookEdit"
BULKY = "Bash|Read|Grep|Glob|WebFetch|WebSearch"

ISOLATE_ATTR = "_flower_isolate"

#: A hook callback as the SDK calls it.
HookFn = Callable[[Any, "str | None", Any], Any]

_SPILL_NAME = re.compile(r"[0-9a-f]{16}\.txt")


def _is_main_thread(data: Mapping[str, Any]) -> bool:
    """True for the session's own thread: subagents' hook input carries ``agent_id``."""
    return not data.get("agent_id")


def _deny(reason: str) -> dict[str, Any]:
    return _decide("deny", reason)


def _decide(decision: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }


def _matcher(matcher: str | None, hook: HookFn) -> HookMatcher:
    from claude_agent_sdk import HookMatcher

    return HookMatcher(matcher=matcher, hooks=[hook])


def _tool_names(entries: list[str]) -> set[str]:
    """Tool names of ``allowed_tools`` entries (``"Bash(git:*)"`` counts as Bash)."""
    return {entry.split("(", 1)[0].strip() for entry in entries}


# --- whitelist ---------------------------------------------------------------------------


#: The whitelist guard's text is the wall's for a missing tool (:mod:`flower.roles.deny_texts`,
#: where every deny text lives, in both languages).
whitelist_text = missing_text


def whitelist_guard(allowed: list[str] | None, *, role: str = "这个角色") -> HookMatcher | None:
    """Make ``allowed_tools`` exclusive for the four hands-on tools.

    ``allowed_tools`` only lists tools that run without a prompt; it does not forbid
    the rest. This guard denies, in the main thread, every one of Bash, Write, Edit and
    NotebookEdit that ``allowed`` does not name. Subagents pass (their tools come from
    ``AgentDefinition.tools``). Deriving the set from ``allowed`` means
    ``judge(can_run=True)`` keeps Bash and still loses Write/Edit with no extra switch.

    Returns ``None`` when there is nothing to stop (a full tool set), and also for
    ``allowed=None``, which means "no whitelist given".
    """
    if allowed is None:
        return None
    have = _tool_names(allowed)
    banned = [tool for tool in HANDS_ON.split("|") if tool not in have]
    if not banned:
        return None
    refused = frozenset(banned)

    async def whitelist(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = data.get("tool_name", "")
        if tool in refused and _is_main_thread(data):
            return _deny(whitelist_text(role, tool))
        return {}

    return _matcher("|".join(banned), whitelist)


# --- flower's own state ------------------------------------------------------------------

#: The field each file-writing tool names its target in.
_TARGET_FIELD = {"Write": "file_path", "Edit": "file_path", "NotebookEdit": "notebook_path"}


def state_guard(protected: list[Path]) -> HookMatcher:
    """Keep Write, Edit and NotebookEdit of every thread out of ``protected`` (flower's
    own state: the run folder, the frozen documents, the ledger, the spill folder).

    The path is taken as the CLI would write it (relative to the call's ``cwd``) with its
    links resolved, so a link planted in the workspace that points into the run folder is
    refused too. Bash cannot reach these paths either: the sandbox mounts them read-only
    (:mod:`flower.roles.sandbox`).
    """
    guarded = [_resolve(p) or p for p in protected]

    async def state(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        field_name = _TARGET_FIELD.get(str(data.get("tool_name") or ""))
        target = (data.get("tool_input") or {}).get(field_name) if field_name else None
        if not isinstance(target, str) or not target:
            return {}
        where = _from_cwd(target, data)
        real = _resolve(where) or where
        for path in guarded:
            if real == path or path in real.parents:
                return _deny(state_text(target))
        return {}

    return _matcher(WRITE_ONLY, state)


#: The field each reading tool names what it reads in (Glob and Grep default to the cwd).
_READ_FIELD = {"Read": "file_path", "Glob": "path", "Grep": "path"}


#: Grep's output modes that answer yes/no (or a count) without the matching text, which
#: redaction cannot touch: ``files_with_matches`` is Grep's default.
_COUNTING = frozenset({"count", "files_with_matches", None})


def reach_guard(
    hidden: list[Path], shown: list[Path], *, secret_files: list[Path] | None = None
) -> HookMatcher:
    """Keep Read, Glob and Grep of every thread out of the folders the sandbox hides from
    Bash (:func:`flower.roles.sandbox.read_roots`): the homes with their SSH keys, cloud
    credentials and the CLI's login, and the system's secrets, unless a path also lies in
    a shown folder (the workspace, a toolchain). An allow-list of roots, not a list of
    names: ``~/.s3cfg`` and ``~/.codex/auth.json`` are refused because they are in a
    home, whatever they are called. Links are resolved first.

    With ``secret_files`` (the ``.env`` files that hold the run's keys; given for the
    sealed roles), a Grep that counts or lists matches over a scope holding one of them is
    refused, whatever its pattern: a count cannot be redacted, and patterns asked one
    after another (``KEY=sk-a``, ``KEY=sk-b``...) would spell the key out character by
    character. Content mode stays (its lines are redacted)."""
    from flower.roles.sandbox import hidden_from

    secrets = [_resolve(p) or p for p in secret_files or ()]

    async def reach(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = str(data.get("tool_name") or "")
        field_name = _READ_FIELD.get(tool)
        if field_name is None:
            return {}
        target = (data.get("tool_input") or {}).get(field_name)
        if not isinstance(target, str) or not target:
            target = str(data.get("cwd") or ".")
        where = _from_cwd(target, data)
        if hidden_from(where, hidden, shown):
            return _deny(reach_text(target))
        mode = (data.get("tool_input") or {}).get("output_mode")
        if tool == "Grep" and secrets and mode in _COUNTING:
            scope = _resolve(where) or where
            if any(s == scope or scope in s.parents for s in secrets):
                return _deny(counting_text(target))
        return {}

    return _matcher("Read|Glob|Grep", reach)


# --- delegate ----------------------------------------------------------------------------


def delegate_guard(
    *, tools: str = HANDS_ON, allow_glance: bool = False, artifacts: str = ".flower/artifacts/"
) -> HookMatcher:
    """Stop the main thread from doing hands-on work, and say how to delegate instead.

    The deny text tells the model to send a subagent through the Agent tool with the goal
    and acceptance criteria in the task, and to have it write long output to
    ``artifacts`` and reply with only the path and the conclusion. Subagents always
    pass. Roles with ``delegate_only`` get this guard instead of the whitelist guard:
    two texts for one tool would contradict each other.

    With ``allow_glance``, a Bash command passes when ``is_ephemeral`` accepts it: the
    very function that later marks such results stale, so what the coordinator may run
    itself and what expires are one set (change one, change both). It passes as an
    explicit ``allow``, because the
    coordinator's ``allowed_tools`` has no Bash and the CLI's own list of commands it
    runs unasked is narrower (nobody answers its question in an autonomous run), with
    :data:`~flower.roles.ephemeral.GLANCE_ENV` exported before the command (no pip
    version check over the network, no git index refresh, no pager). A refused command's
    deny text carries ``explain``'s reason, so the model can rephrase a look it got
    wrong instead of paying for a worker.

    ``artifacts`` (an extension of the documented signature) is the artifacts folder as
    the model should name it; ``workbench_hooks`` passes the workbench's real one.
    """
    is_ephemeral = _ephemeral_check() if allow_glance else None
    intercepted = frozenset(tools.split("|"))

    async def delegate(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = data.get("tool_name", "")
        if tool not in intercepted or not _is_main_thread(data):
            return {}
        why = None
        if is_ephemeral is not None and tool == "Bash":
            tool_input = data.get("tool_input") or {}
            command = tool_input.get("command")
            if isinstance(command, str) and is_ephemeral(command):
                return _glance(tool_input, command)
            why = _glance_refusal(command)
        glance = is_ephemeral is not None
        return _deny(delegate_text(tool, artifacts=artifacts, glance=glance, why=why))

    return _matcher(tools, delegate)


def _ephemeral_check() -> Callable[[str], bool]:
    from flower.roles.ephemeral import is_ephemeral

    return is_ephemeral


def _glance_refusal(command: Any) -> str | None:
    """Why ``command`` is no glance, for the deny text (``None`` if no reason is known)."""
    from flower.roles.ephemeral import explain

    if not isinstance(command, str):
        return "not a command"
    return explain(command)


#: What a glance's status becomes in its output when it is not 0 (the command flower hands
#: the CLI always ends with 0: see :func:`_glance`).
GLANCE_STATUS = "(exit status {status})"


def _glance(tool_input: Mapping[str, Any], command: str) -> dict[str, Any]:
    """Allow a glance, run with :data:`~flower.roles.ephemeral.GLANCE_ENV` exported.

    The command runs in a subshell and what the CLI runs always ends with status 0, the
    real status printed after the output as ``(exit status N)``: the CLI hands a failed
    command's output to no hook that could replace it (PostToolUseFailure gets only
    ``additionalContext``), so a glance that failed would reach the model unredacted
    (``cat .env; false`` did). A status of 0 sends every glance's output through the
    redacting PostToolUse hooks.
    """
    import shlex

    from flower.roles.ephemeral import GLANCE_ENV

    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in GLANCE_ENV.items())
    status = shlex.quote(GLANCE_STATUS.replace("{status}", "%s") + "\n")
    wrapped = (
        f"export {exports}; ( {command}\n ); __flower_status=$?;"
        f' [ "$__flower_status" -eq 0 ] || printf {status} "$__flower_status"; true'
    )
    decision = _decide("allow", glance_reason())
    decision["hookSpecificOutput"]["updatedInput"] = {**tool_input, "command": wrapped}
    return decision


# --- spill -------------------------------------------------------------------------------


def spill_guard(
    workbench: Workbench,
    *,
    threshold: int = 4000,
    tools: str = BULKY,
    main_only: bool = False,
) -> HookMatcher:
    """Put over-long tool results on disk at once, leaving a pointer in the conversation.

    Runs on PostToolUse. Every string field of the result longer than ``threshold`` is
    written to ``<workbench>/spill/<first 16 hex of its sha256>.txt`` and replaced by a
    pointer plus its first 400 characters. Only such string fields are replaced, in
    place, so the result keeps the tool's own structure (the CLI ignores an
    ``updatedToolOutput`` of another shape, e.g. a bare string for Bash); lists are never
    spilled (they may hold image blocks). Reading a spilled file (Read of it, or a Bash
    command that names it) is not spilled again: otherwise the text read would be
    spilled again and "read the file" would loop forever.

    Every result of ``tools`` is also redacted (:mod:`flower.kernel.redact`), spilled or
    not, main thread or not: the spill file, the head left in the conversation and an
    unspilled result hold no known secret. The CLI does not chain two hooks' updated
    outputs (the last update wins, each saw the original), so ``redact_guard`` skips
    these tools and this guard answers for both.

    ``main_only`` spills only the main thread's results.
    """
    intercepted = frozenset(tools.split("|"))

    async def spill(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = data.get("tool_name", "")
        if tool not in intercepted or "tool_response" not in data:
            return {}
        response = data.get("tool_response")
        try:
            updated = clean = current().tool_value(response)
        except Exception as exc:  # a broken redactor must not fail the tool
            print(f"flower: could not redact a {tool} result: {exc!r}", file=sys.stderr)
            updated = clean = response
        if not (main_only and not _is_main_thread(data)) and not _reads_spill(
            workbench, tool, data.get("tool_input") or {}
        ):
            try:
                updated = _spill_value(workbench, clean, threshold)
            except (OSError, ValueError) as exc:  # no spill beats a failed tool
                print(f"flower: could not spill a {tool} result: {exc}", file=sys.stderr)
        if updated is response:
            return {}
        return {
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": updated}
        }

    return _matcher(tools, spill)


def _reads_spill(workbench: Workbench, tool: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether this call reads a file ``spill_guard`` wrote (Read of it, Bash naming it)."""
    if tool == "Read":
        path = tool_input.get("file_path")
        if not isinstance(path, str) or not _SPILL_NAME.fullmatch(Path(path).name):
            return False
        resolved = _resolve(Path(path))
        return resolved is not None and resolved.parent == _resolve(workbench.spill)
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return False
        return any((workbench.spill / name).is_file() for name in _SPILL_NAME.findall(command))
    return False


def _resolve(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _spill_value(workbench: Workbench, value: Any, threshold: int) -> Any:
    """``value`` with over-long strings spilled; the same object when nothing changed."""
    if isinstance(value, str):
        if len(value) <= threshold:
            return value
        return spill_pointer(spill_text(workbench, value), value)
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for key, item in value.items():
            new = _spill_value(workbench, item, threshold)
            changed = changed or new is not item
            out[key] = new
        return out if changed else value
    return value  # lists (image blocks) and scalars stay as they are


def spill_text(workbench: Workbench, text: str) -> Path:
    """Write ``text`` to the spill folder under its content hash; return the path.

    The text is redacted first (so the name is the hash of what is on disk); a regular
    file of that name and size is the same text already spilled, and is kept. The spill
    folder must be a real folder of the workbench (:meth:`Workbench.place`), checked
    before the shortcut too, so a pointer never names a file behind a link.
    """
    text = current().redact(text)
    data = text.encode("utf-8", "surrogatepass")
    name = hashlib.sha256(data).hexdigest()[:16] + ".txt"
    path = workbench.place(SPILL_DIRNAME, name)
    try:
        st = path.lstat()
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == len(data):
        return path  # spilled before
    written = workbench.write(text, SPILL_DIRNAME, name)
    keep_out_of_git(written.parent)
    return path


# --- index -------------------------------------------------------------------------------


def index_guard(workbench: Workbench) -> HookMatcher:
    """Refresh ``INDEX.md`` when a Write or Edit lands in the workbench, so the next
    session's prompt lists it. Always returns ``{}``: a side effect, never a decision."""

    async def index(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        path = (data.get("tool_input") or {}).get("file_path")
        if isinstance(path, str) and workbench.contains(_from_cwd(path, data)):
            try:
                workbench.refresh()
            except (OSError, ValueError) as exc:  # an unwritable index must not fail the tool
                print(f"flower: could not refresh {workbench.index}: {exc}", file=sys.stderr)
        return {}

    return _matcher("Write|Edit", index)


def _from_cwd(path: str, data: Mapping[str, Any]) -> Path:
    candidate = Path(path)
    cwd = data.get("cwd")
    if not candidate.is_absolute() and isinstance(cwd, str) and cwd:
        candidate = Path(cwd) / candidate
    return candidate


# --- isolation ---------------------------------------------------------------------------


def isolated(agent: AgentDefinition, flag: bool = True) -> AgentDefinition:
    """Mark a subagent definition as needing its own git worktree; returns it.

    The mark is a Python-side attribute set with ``object.__setattr__``, not a dataclass
    field: the SDK serialises definitions with ``asdict()``, which sees declared fields
    only, so the mark never reaches the CLI. The price: ``dataclasses.replace()`` on the
    definition drops it and isolation is silently off.
    """
    object.__setattr__(agent, ISOLATE_ATTR, bool(flag))
    return agent


def wants_isolation(agent: AgentDefinition | None) -> bool:
    """Whether ``agent`` was marked with :func:`isolated`."""
    return agent is not None and bool(getattr(agent, ISOLATE_ATTR, False))


def isolate_guard(agents: dict[str, AgentDefinition], *, on_inject: Any = None) -> HookMatcher:
    """Give subagents of isolated roles their own git worktree, always.

    On PreToolUse of ``Agent``: when the role named by ``subagent_type`` is marked
    :func:`isolated`, the call is allowed with ``isolation: "worktree"`` and without a
    ``cwd``. Roles that need no isolation are not touched by a byte.

    Deliberately unlike the reference, which respected a model's own ``cwd`` or
    ``isolation``: ``cwd`` and ``isolation`` exclude each other in the Agent tool, so a
    model that named ``cwd`` (the shared checkout, say) ran an isolated worker straight
    in it. Isolation is the role's property, not the model's choice per call (the tool
    wall refuses ``isolation: "remote"``).

    ``on_inject``, if given, is called as ``on_inject(subagent_type, updated_input)``
    after each injection (to report it); its errors are printed, not raised.
    """

    async def isolate(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if data.get("tool_name") != "Agent":
            return {}
        tool_input = dict(data.get("tool_input") or {})
        role = tool_input.get("subagent_type")
        if not isinstance(role, str) or not wants_isolation(agents.get(role)):
            return {}
        updated = {k: v for k, v in tool_input.items() if k != "cwd"}
        updated["isolation"] = "worktree"
        if on_inject is not None:
            try:
                on_inject(role, updated)
            except Exception as exc:  # reporting must not cost the isolation
                print(f"flower: isolate_guard on_inject failed: {exc!r}", file=sys.stderr)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": updated,
            }
        }

    return _matcher("Agent", isolate)


def confine_guard(
    workspace: Path,
    roles: frozenset[str],
    quarantine: Path,
    *,
    on_moved: Callable[[str], None] | None = None,
) -> dict[str, list[HookMatcher]]:
    """Move out what an isolated worker's Bash left at the top of the shared checkout.

    The sandbox mounts every existing entry of the checkout read-only for a session
    whose workers all run in worktrees (:func:`flower.roles.sandbox.checkout_entries`),
    but the checkout's own folder stays writable (the worktrees and ``.git`` are below
    it), so a command could still create a new file or folder there. PreToolUse notes
    the entries before a worker's Bash (``roles``: the isolated ones); PostToolUse moves
    any new one into ``quarantine/<time>/`` (nothing is deleted), tells the model with
    ``additionalContext`` and calls ``on_moved(text)`` (the Runtime records a refusal).
    """
    before: dict[str, set[str]] = {}

    def names() -> set[str]:
        try:
            return {entry.name for entry in os.scandir(workspace)}
        except OSError:
            return set()

    async def note(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if tool_use_id and data.get("agent_id") and data.get("agent_type") in roles:
            before[tool_use_id] = names()
        return {}

    async def sweep(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen = before.pop(tool_use_id, None) if tool_use_id else None
        new = sorted(names() - seen) if seen is not None else []
        if not new:
            return {}
        import shutil
        import time

        place = quarantine / time.strftime("%Y%m%d-%H%M%S")
        moved: list[str] = []
        for name in new:
            try:
                place.mkdir(parents=True, exist_ok=True)
                shutil.move(str(workspace / name), str(place / name))
                moved.append(name)
            except OSError as exc:
                print(f"flower: could not move {workspace / name} out: {exc}", file=sys.stderr)
        text = confined_text(moved or new, str(place), str(data.get("cwd") or ""))
        if on_moved is not None:
            try:
                on_moved(text)
            except Exception as exc:  # reporting must not fail the tool
                print(f"flower: confine_guard on_moved failed: {exc!r}", file=sys.stderr)
        event = str(data.get("hook_event_name") or "PostToolUse")
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}

    return {
        "PreToolUse": [_matcher("Bash", note)],
        "PostToolUse": [_matcher("Bash", sweep)],
        "PostToolUseFailure": [_matcher("Bash", sweep)],
    }


# --- assembling --------------------------------------------------------------------------


def workbench_hooks(
    workbench: Workbench,
    *,
    delegate_only: bool = True,
    spill_threshold: int | None = 4000,
    agents: dict[str, AgentDefinition] | None = None,
    allow_glance: bool = False,
) -> dict[str, list[HookMatcher]]:
    """Every hook a workbench needs, in one call.

    - PreToolUse: ``delegate_guard(allow_glance=...)`` when ``delegate_only``, then
      ``isolate_guard(agents)`` when any role in ``agents`` is marked isolated.
    - PostToolUse: ``index_guard`` always, then ``spill_guard`` when
      ``spill_threshold`` is truthy.

    Events with no hook are left out.
    """
    pre: list[HookMatcher] = []
    if delegate_only:
        pre.append(
            delegate_guard(
                allow_glance=allow_glance,
                artifacts=workbench.display(workbench.artifacts) + "/",
            )
        )
    if agents and any(wants_isolation(a) for a in agents.values()):
        pre.append(isolate_guard(agents))
    post: list[HookMatcher] = [index_guard(workbench)]
    if spill_threshold:
        post.append(spill_guard(workbench, threshold=spill_threshold))
    return {event: hooks for event, hooks in (("PreToolUse", pre), ("PostToolUse", post)) if hooks}


def spec_guards(
    spec: AgentSpec, workbench: Workbench | None, spill_threshold: int | None
) -> dict[str, list[HookMatcher]]:
    """The default guard set for ``spec`` (what the default ``flower_guards`` returns).

    As the Runtime documents it: ``whitelist_guard(spec.allowed_tools)`` unless the spec
    is ``delegate_only``, plus ``workbench_hooks(...)`` when there is a workbench.

    Before all of them, the tool wall (:mod:`flower.roles.walls`): every thread may use
    only the tools its role lists, and ``Agent`` starts only the role's named workers.

    One deliberate difference: without a workbench the seed leaves a ``delegate_only``
    main thread with no wall at all and isolated roles silently unisolated. Neither
    guard needs a workbench, so here they are installed anyway.
    """
    from flower.roles.walls import tool_wall, wall_for

    groups: list[dict[str, list[HookMatcher]] | None] = [
        {"PreToolUse": [tool_wall(wall_for(spec))]}
    ]
    if not spec.delegate_only:
        wall = whitelist_guard(spec.allowed_tools, role=spec.name or "这个角色")
        if wall is not None:
            groups.append({"PreToolUse": [wall]})
    agents = spec.agents or {}
    if workbench is not None:
        groups.append(
            workbench_hooks(
                workbench,
                delegate_only=spec.delegate_only,
                spill_threshold=spill_threshold,
                agents=agents,
                allow_glance=spec.glance,
            )
        )
    else:
        pre: list[HookMatcher] = []
        if spec.delegate_only:
            pre.append(delegate_guard(allow_glance=spec.glance))
        if any(wants_isolation(a) for a in agents.values()):
            pre.append(isolate_guard(agents))
        if pre:
            groups.append({"PreToolUse": pre})

    groups.append(redact_hooks(spec, workbench, spill_threshold))
    return merge_hooks(*groups)


def merge_hooks(*groups: dict[str, list[Any]] | None) -> dict[str, list[Any]]:
    """Join hook configurations by event name, in order.

    Uses ``extend`` and removes nothing: pass one guard twice and it runs twice.
    ``None`` and empty groups are skipped; events with no hooks are left out.
    """
    merged: dict[str, list[Any]] = {}
    for group in groups:
        if not group:
            continue
        for event, matchers in group.items():
            if matchers:
                merged.setdefault(event, []).extend(matchers)
    return merged


def redact_hooks(
    spec: AgentSpec, workbench: Workbench | None, spill_threshold: int | None
) -> dict[str, list[HookMatcher]]:
    """The redaction guard (:func:`flower.kernel.redact.redact_guard`) for ``spec`` as
    :func:`spec_guards` installs it, for every agent.

    Watches the spec's ``env`` and the workbench's workspace, and skips the tools that
    ``spill_guard`` handles when ``workbench_hooks`` installs one (a workbench and a
    threshold): that guard redacts what it returns.
    """
    watch(env=spec.env, workspace=workbench.workspace if workbench is not None else None)
    spilling = workbench is not None and bool(spill_threshold)
    return {"PostToolUse": [redact_guard(skip=BULKY if spilling else "")]}
