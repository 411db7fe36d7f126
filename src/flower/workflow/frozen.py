"""The shape clarify_step and goal_step share: a step whose answer is frozen as a document.

Ask an agent, parse its answer into a document, and when the document is complete write
it to disk (the freeze) and load it into ``ctx``; a complete document already on disk
skips the step but is loaded all the same (later steps need it either way); what is handed
on is the parsed document, never the model's raw text. Every freeze is kept in the run's
store and every load first compares the file with that copy (:mod:`flower.records.frozen_copy`):
a document changed behind flower's back is put back before anyone reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

from flower.records.frozen_copy import check, keep
from flower.records.sections import save_text
from flower.workflow.base import Ctx, Prompt, Step

if TYPE_CHECKING:
    from flower.kernel.agent_spec import AgentSpec
    from flower.runtime.runner import StepResult


class Document(Protocol):
    """What a frozen document offers (``Brief``, ``Goal``)."""

    @classmethod
    def parse(cls, text: str) -> Self: ...

    @classmethod
    def load(cls, path: str | Path) -> Self | None: ...

    def complete(self) -> bool: ...

    def write(self, path: str | Path) -> Path: ...

    def prompt_block(self) -> str: ...


def frozen_step(
    name: str,
    agent: AgentSpec,
    prompt: Prompt,
    *,
    document: type[Document],
    path: Path,
    key: str,
    always: bool,
    on_loaded: Callable[[Any, Ctx], None] | None = None,
    on_frozen: Callable[[Any, Ctx], None] | None = None,
    on_incomplete: Callable[[Any, Ctx], None] | None = None,
    **fields: Any,
) -> Step:
    """A Step that freezes its answer as ``document`` at ``path``.

    ``ctx[key]`` gets the document and ``ctx[name]`` its prompt block, whether it was
    frozen now or found complete on disk (``on_loaded`` runs then too). ``always`` never
    skips. ``on_frozen`` runs after a new freeze, ``on_incomplete`` when the answer lacks
    something (the attempt fails). ``fields`` are the Step's other fields.
    """

    def load_into(ctx: Ctx, doc: Document) -> None:
        protect = getattr(ctx.get("_runtime"), "protect", None)
        if protect is not None:  # frozen: no agent writes it from now on
            protect(path)
        ctx[key] = doc
        ctx[name] = doc.prompt_block()
        if on_loaded is not None:
            on_loaded(doc, ctx)

    def when(ctx: Ctx) -> bool:
        runtime = ctx.get("_runtime")
        if runtime is not None:  # as it was frozen, or put back (records/frozen_copy.py)
            check(runtime, path, step=name, on_event=ctx.get("_on_event"))
        if always:
            return True
        found = document.load(path)
        if found is not None and found.complete():
            load_into(ctx, found)
            return False
        return True

    def gate(result: StepResult, ctx: Ctx) -> bool:
        doc = document.parse(result.text)
        if not doc.complete():
            missing: list[str] = list(getattr(doc, "missing", list)())
            ctx["_gate_why"] = "the answer lacked " + (", ".join(missing) or "a section")
            if on_incomplete is not None:
                on_incomplete(doc, ctx)
            return False
        ctx.pop("_gate_why", None)
        doc = _freeze(document, doc, path)
        if ctx.get("_runtime") is not None:
            keep(ctx["_runtime"], path)
        load_into(ctx, doc)
        if on_frozen is not None:
            on_frozen(doc, ctx)
        return True

    def reduce(result: StepResult, ctx: Ctx) -> str:
        doc = ctx.get(key)
        return doc.prompt_block() if isinstance(doc, document) else result.text

    return Step(name, agent, prompt, gate=gate, when=when, reduce=reduce, **fields)


def _freeze(document: type[Document], doc: Document, path: Path) -> Document:
    """Write ``doc`` to ``path``, keeping the amendments the file already holds.

    A human's remark sent while the step ran (an inbox line typed in the terminal or on
    the page while the request is being clarified) was appended to this very file by
    ``HumanChannel.amend``; writing the new document over it would drop the remark from
    the brief that every later step reads. Both hold the file's lock, so no remark lands
    between the read and the write. Returns the document as it now stands on disk.
    """
    from flower.records.filelock import locked
    from flower.records.sections import amendments, load_text

    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        carried = amendments(load_text(path) or "")
        doc.write(path)
        if carried:
            written = load_text(path) or ""
            if carried not in written:
                save_text(path, written.rstrip("\n") + "\n\n" + carried + "\n")
                doc = document.load(path) or doc
    return doc


__all__ = ["Document", "frozen_step"]
