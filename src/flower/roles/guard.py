"""The hook layer: the walls flower puts around every session.

Which tools the main thread may not touch, which over-long results go to disk, which
role runs in its own worktree: all of it is enforced by SDK hooks, not by the prompt,
because a prompt is advice a model may ignore. (Measured: a judge with a goal ran Bash
11 times; an agent with ``allowed_tools=["Read"]`` called Write and Bash; with
"do not use a worktree" in the system prompt the model passed ``isolation=None`` and the
injected ``"worktree"`` still landed.)

Every guard that "only stops the main thread" tells it apart with one function,
:func:`~flower.roles.hook_parts.is_main_thread`: a subagent's tool-lifecycle hook
input carries ``agent_id``, the main thread's does not.

The Runtime installs all of this from an ``AgentSpec`` (through the kernel's
``flower_guards`` hook); install them by hand only when driving the SDK yourself.
The SDK is imported lazily.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flower.kernel.redact import redact_guard, watch
from flower.roles.deny_texts import GLANCE_REASON as GLANCE_REASON  # re-exported
from flower.roles.deny_texts import SPILL_HEAD as SPILL_HEAD  # re-exported
from flower.roles.deny_texts import (
    counting_text,
    delegate_text,
    glance_reason,
    missing_text,
    reach_text,
    state_text,
)
from flower.roles.hook_parts import BULKY as BULKY  # re-exported
from flower.roles.hook_parts import HANDS_ON as HANDS_ON  # re-exported
from flower.roles.hook_parts import ISOLATE_ATTR as ISOLATE_ATTR  # re-exported
from flower.roles.hook_parts import WRITE_ONLY as WRITE_ONLY  # re-exported
from flower.roles.hook_parts import (
    decide,
    deny_call,
    from_cwd,
    hook_matcher,
    is_main_thread,
    resolve_path,
    tool_names,
)
from flower.roles.isolation import confine_guard as confine_guard  # re-exported
from flower.roles.isolation import isolate_guard as isolate_guard  # re-exported
from flower.roles.isolation import isolated as isolated  # re-exported
from flower.roles.isolation import wants_isolation as wants_isolation  # re-exported
from flower.roles.workbench_guards import index_guard as index_guard  # re-exported
from flower.roles.workbench_guards import spill_guard as spill_guard  # re-exported
from flower.roles.workbench_guards import spill_text as spill_text  # re-exported

if TYPE_CHECKING:
    from claude_agent_sdk import AgentDefinition, HookMatcher

    from flower.kernel.agent_spec import AgentSpec
    from flower.records.workbench import Workbench


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
    have = tool_names(allowed)
    banned = [tool for tool in HANDS_ON.split("|") if tool not in have]
    if not banned:
        return None
    refused = frozenset(banned)

    async def whitelist(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = data.get("tool_name", "")
        if tool in refused and is_main_thread(data):
            return deny_call(whitelist_text(role, tool))
        return {}

    return hook_matcher("|".join(banned), whitelist)


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
    guarded = [resolve_path(p) or p for p in protected]

    async def state(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        field_name = _TARGET_FIELD.get(str(data.get("tool_name") or ""))
        target = (data.get("tool_input") or {}).get(field_name) if field_name else None
        if not isinstance(target, str) or not target:
            return {}
        where = from_cwd(target, data)
        real = resolve_path(where) or where
        for path in guarded:
            if real == path or path in real.parents:
                return deny_call(state_text(target))
        return {}

    return hook_matcher(WRITE_ONLY, state)


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

    secrets = [resolve_path(p) or p for p in secret_files or ()]

    async def reach(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = str(data.get("tool_name") or "")
        field_name = _READ_FIELD.get(tool)
        if field_name is None:
            return {}
        target = (data.get("tool_input") or {}).get(field_name)
        if not isinstance(target, str) or not target:
            target = str(data.get("cwd") or ".")
        where = from_cwd(target, data)
        if hidden_from(where, hidden, shown):
            return deny_call(reach_text(target))
        mode = (data.get("tool_input") or {}).get("output_mode")
        if tool == "Grep" and secrets and mode in _COUNTING:
            scope = resolve_path(where) or where
            if any(s == scope or scope in s.parents for s in secrets):
                return deny_call(counting_text(target))
        return {}

    return hook_matcher("Read|Glob|Grep", reach)


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
        if tool not in intercepted or not is_main_thread(data):
            return {}
        why = None
        if is_ephemeral is not None and tool == "Bash":
            tool_input = data.get("tool_input") or {}
            command = tool_input.get("command")
            if isinstance(command, str) and is_ephemeral(command):
                return _glance(tool_input, command)
            why = _glance_refusal(command)
        glance = is_ephemeral is not None
        return deny_call(delegate_text(tool, artifacts=artifacts, glance=glance, why=why))

    return hook_matcher(tools, delegate)


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
    decision = decide("allow", glance_reason())
    decision["hookSpecificOutput"]["updatedInput"] = {**tool_input, "command": wrapped}
    return decision


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
