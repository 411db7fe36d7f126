"""Named objects that hooks take and return.

Hooks return these instead of bare tuples or dicts (the conda idiom), so adding a field
later does not break a plugin, and ``flower plugins list`` can describe what each
plugin contributes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec
    from flower.kernel.events import Event
    from flower.kernel.policies import EphemeralPolicy, PrunePolicy, TrimPolicy

#: How the resilience layer treats an error text: wait and resume, stop, or decide
#: by ``Resilience.retry_unknown``.
ErrorClass = Literal["transient", "fatal", "unknown"]


@dataclass(frozen=True)
class RoleFactory:
    """A named way to build an agent for one role.

    Attributes:
        name: The role's name (``"coordinator"``, ``"worker"``, ``"clarify"``,
            ``"judge"``, ``"oracle"``, or a plugin's own).
        factory: The callable; its signature is the role's documented one.
        returns: ``"spec"`` when it builds an ``AgentSpec`` (the role runs its own
            session) or ``"agent"`` when it builds an ``AgentDefinition`` (the role runs
            as a subagent of a coordinator).
        description: One line for ``flower plugins list`` and docs.
    """

    name: str
    factory: Callable[..., Any]
    returns: Literal["spec", "agent"] = "spec"
    description: str = ""


@dataclass
class HandoffRequest:
    """Everything a handoff writer needs when a session's context is full.

    Attributes:
        runtime: The Runtime running the step (use ``runtime.run`` for the handoff round).
        spec: The agent whose session is full.
        step: The step name (the document goes to ``<notes>/交接-<step>.md``).
        session_id: The full session; the handoff round resumes it, since only that
            session holds the context to summarise.
        prompt: The step's original task, used by ``degraded()`` when no round works.
        used: Tokens in the context when the handoff was triggered.
        window: The context window the policy assumes.
        overflow: True when the API already refused the prompt as too long, so a
            round on the same session will likely fail and a degraded document is due.
        generation: How many handoffs this step has done before this one.
        ask: Runs one more round of the full session with a prompt and returns its
            ``StepResult`` (budget lifted, no UI events, no handoff of its own, no
            manifest row; its cost is added to the step's). ``None`` when no round can
            run. The default writer sends ``HANDOFF_PROMPT`` through it.
        extra: Free-form details for plugins that need more.
    """

    runtime: Any
    spec: AgentSpec
    step: str
    session_id: str
    prompt: str
    used: int = 0
    window: int = 0
    overflow: bool = False
    generation: int = 0
    ask: Callable[[str], Awaitable[Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OpenItem:
    """Something still open when a session is retired, which its handoff must carry.

    Attributes:
        kind: What sort of item: ``"failed_check"``, ``"mail"``, ``"question"``,
            ``"changed_file"``, ``"unknown"``, or a plugin's own word.
        text: The item as the successor should read it (one line).
        needles: Strings any one of which, found in the handoff document, counts as the
            document mentioning the item (compared case-folded, whitespace collapsed).
            Empty: ``text`` itself.
        carried: Called once the handoff carries the item (the document mentions it or
            the audit appended it), so its source can settle it: a remark that reached
            the successor this way is not handed out again by the inbox.
    """

    kind: str
    text: str
    needles: tuple[str, ...] = ()
    carried: Callable[[], object] | None = field(default=None, compare=False, repr=False)


@dataclass
class AuditRequest:
    """What the handoff audit knows when a full session is about to be retired.

    Attributes:
        runtime: The Runtime running the step.
        step: The step name.
        doc: The handoff document as the writer produced it (possibly degraded).
        ctx: The ``ctx`` of the workflow running on the Runtime (the last verdict, the
            brief, the channel), or ``None`` when the step runs outside a workflow.
        workspace: The project folder (``None`` when the Runtime has none).
        run_dir: The run directory, where the last step's workspace picture is kept.
    """

    runtime: Any
    step: str
    doc: Any
    ctx: dict[str, Any] | None = None
    workspace: Path | None = None
    run_dir: Path | None = None


@dataclass(frozen=True)
class StoreSettings:
    """Where and how a Runtime keeps its sessions, as the session-store hook receives it.

    Attributes:
        run_dir: The run directory (``runs/`` by default); the embedded store lives at
            ``run_dir/sessions.db``.
        workspace: The project folder; trimmed text spills under it.
        url: ``FLOWER_STORE_URL`` or ``None``; a storage plugin answers when it
            recognises the scheme.
        trim: Trimming of large old results at load time (``TrimPolicy``;
            ``enabled=False`` when the Runtime was built with ``trim=False``).
        ephemeral: Expiry of stale one-off command results (``EphemeralPolicy``).
        prune: Removal of retry-storm errors, old denials and interruption leftovers
            (``PrunePolicy``); applies whatever ``trim`` says.
    """

    run_dir: Path
    workspace: Path
    trim: TrimPolicy
    ephemeral: EphemeralPolicy
    prune: PrunePolicy
    url: str | None = None


@dataclass
class SessionRequest:
    """One CLI session about to start, as the ``flower_session_scope`` hook receives it.

    Every attempt of a step is one session of the bundled Claude Code CLI (so is the
    handoff round). A plugin that wraps sessions (a tracer making its span the active
    one, so the SDK passes it to the CLI as ``TRACEPARENT``) learns here which one.

    Attributes:
        runtime: The Runtime running the step (``run_dir``, ``workspace``, ``run_id``).
        spec: The agent whose session this is.
        step: The step's label as events carry it (``干活#round2``, ``干活·判定#1``).
        attempt: Which attempt of the step this is (1 for the first; a retry counts, an
            interrupt or a handoff does not).
        generation: Handoffs the step has done before this session.
        resume: The session id this one continues, or ``None`` for a fresh session.
        fork: Whether it continues ``resume`` under a new id.
        watch: ``False`` for the handoff round (no events of its own), else ``True``.
        env: The CLI's environment from the options (the spec's and the policies'
            variables). A scope may add variables before the session starts; it should
            leave alone a key already here or in ``os.environ``, which the user chose.
        outcome: What the session reported so far (``session_id``, ``ok``, ``error``,
            ``cost_usd``, ``num_turns``, ``model``, ``usage``); final when the scope is
            exited normally.
    """

    runtime: Any
    spec: AgentSpec
    step: str
    attempt: int = 1
    generation: int = 0
    resume: str | None = None
    fork: bool = False
    watch: bool = True
    env: dict[str, str] = field(default_factory=dict)
    outcome: Any = None


class View(Protocol):
    """What a driver needs from a run view (what ``flower_renderer`` returns; the
    terminal's is :class:`flower.ui.render.Renderer`). Here, with the other types hooks
    take and return, so the hookspecs name it without reaching into the terminal code."""

    def __call__(self, event: Event) -> None: ...

    def banner(self, state: dict[str, Any], *, context: int, workspace: Path) -> None: ...

    def closing(
        self,
        *,
        ok: bool,
        cost: float,
        manifest: Path,
        failed_at: str | None,
        aborted: str | None,
    ) -> None: ...


class HandoffDocument(Protocol):
    """What a ``flower_handoff_writer`` resolves to: in flower, a
    :class:`flower.records.handoff.Handoff` (``from flower import Handoff``). Named here by
    the parts the relay reads, since the plugin system imports no run record."""

    doing: str
    next: str
    step: str
    degraded: bool

    def to_markdown(self) -> str:
        """The document as the next session reads it."""
        ...


class WorkbenchView(Protocol):
    """What a ``flower_guards`` hook is handed of the run's workbench: in flower, a
    :class:`flower.records.workbench.Workbench`, named here by its shape (the plugin system
    imports no run record)."""

    workspace: Path

    @property
    def root(self) -> Path:
        """The workbench's folder (``workspace/.flower`` by default)."""
        ...
