"""Old module paths, kept importable for one release (0.2) after the layering of 0.1.

flower's modules moved out of the flat ``flower.core`` into one subpackage per layer
(ARCHITECTURE.md). A plugin written against the old paths (``from flower.core.agent import
AgentSpec``) still imports: the finder below answers for each old name with the module at
its new path (the same module object, so a monkeypatch through either name patches both)
and warns once with a ``DeprecationWarning`` naming the new path. ``import flower``
installs it; nothing in flower itself imports an old path (a test checks). The
classes are duck-typed to the import protocol: ``importlib.abc`` would pull ``tempfile``
into every start-up of the command line.
"""

from __future__ import annotations

import sys
import warnings
from importlib import import_module
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, cast

#: old dotted path -> the module that lives there now
MOVED: dict[str, str] = {
    "flower.core.agent": "flower.roles.agent",
    "flower.core.assembly": "flower.runtime.assembly",
    "flower.core.attempt": "flower.runtime.attempt",
    "flower.core.audit": "flower.runtime.audit",
    "flower.core.bench_index": "flower.records.bench_index",
    "flower.core.bequest": "flower.workflow.bequest_block",
    "flower.core.brief": "flower.workflow.brief",
    "flower.core.budget": "flower.runtime.budget",
    "flower.core.cache_rhythm": "flower.runtime.cache_rhythm",
    "flower.core.channel": "flower.kernel.channel_protocol",
    "flower.core.checkpoints": "flower.records.checkpoints",
    "flower.core.checkrun": "flower.workflow.check_run",
    "flower.core.checks": "flower.workflow.checks",
    "flower.core.credentials": "flower.kernel.credentials",
    "flower.core.cutoff": "flower.runtime.cutoff",
    "flower.core.cutoff_report": "flower.runtime.cutoff_words",
    "flower.core.deny": "flower.roles.deny_texts",
    "flower.core.drift": "flower.records.drift",
    "flower.core.durable": "flower.stores.calls",
    "flower.core.env": "flower.kernel.env",
    "flower.core.ephemeral": "flower.roles.ephemeral",
    "flower.core.events": "flower.kernel.events",
    "flower.core.filelock": "flower.records.filelock",
    "flower.core.frozen_copy": "flower.records.frozen_copy",
    "flower.core.glance": "flower.roles.glance",
    "flower.core.goal": "flower.workflow.verdicts",
    "flower.core.going_back": "flower.workflow.going_back",
    "flower.core.guard": "flower.roles.guard",
    "flower.core.handoff": "flower.records.handoff",
    "flower.core.held_out": "flower.workflow.held_out",
    "flower.core.human": "flower.human.channel",
    "flower.core.human_records": "flower.human.records",
    "flower.core.human_texts": "flower.human.texts",
    "flower.core.lang": "flower.kernel.lang",
    "flower.core.ledger": "flower.records.ledger",
    "flower.core.lifeline": "flower.runtime.lifeline",
    "flower.core.lineage": "flower.records.lineage",
    "flower.core.manifest": "flower.records.manifest",
    "flower.core.outcome": "flower.records.outcome",
    "flower.core.pending": "flower.records.pending",
    "flower.core.probe": "flower.runtime.probe",
    "flower.core.redact": "flower.kernel.redact",
    "flower.core.refusals": "flower.runtime.refusals",
    "flower.core.relay": "flower.runtime.relay",
    "flower.core.resilience": "flower.runtime.resilience",
    "flower.core.result": "flower.kernel.result",
    "flower.core.resume_texts": "flower.runtime.resume_texts",
    "flower.core.retrying": "flower.runtime.retrying",
    "flower.core.rewind": "flower.workflow.rewind",
    "flower.core.roles": "flower.roles.factory",
    "flower.core.runlock": "flower.records.runlock",
    "flower.core.runstate": "flower.records.runstate",
    "flower.core.runtime": "flower.runtime.runner",
    "flower.core.runtime_records": "flower.runtime.bookkeeping",
    "flower.core.runtime_sessions": "flower.runtime.sessions",
    "flower.core.sandbox": "flower.roles.sandbox",
    "flower.core.scope": "flower.runtime.scope",
    "flower.core.sections": "flower.records.sections",
    "flower.core.signals": "flower.runtime.signals",
    "flower.core.state_copy": "flower.records.state_copy",
    "flower.core.step_events": "flower.runtime.step_events",
    "flower.core.stream_reading": "flower.runtime.stream_reading",
    "flower.core.text": "flower.kernel.text",
    "flower.core.untrusted": "flower.records.untrusted",
    "flower.core.walls": "flower.roles.walls",
    "flower.core.windows": "flower.runtime.windows",
    "flower.core.workbench": "flower.records.workbench",
    "flower.stores.ledger": "flower.stores.ledger_table",
    "flower.stores.cli": "flower.commands.db",
    "flower.ui.formats": "flower.kernel.formats",
    "flower.ui.sanitize": "flower.kernel.sanitize",
    "flower.ui.terminal": "flower.kernel.terminal",
}

#: names that left their module's new home for another one: old path -> name -> module
LEFT: dict[str, dict[str, str]] = {
    "flower.core.events": {"emit": "flower.plugins"},
    "flower.core.redact": {"redact_hooks": "flower.roles.guard"},
}


class _Alias:
    """Loads an old name as the module at its new path."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.new}; import it from there "
            "(the old path goes in flower 0.2)",
            DeprecationWarning,
            # 2: the import statement's frame; warnings skips importlib's own frames
            # (<frozen importlib._bootstrap>) when it counts
            stacklevel=2,
        )
        module = import_module(self.new)
        left = LEFT.get(spec.name)
        return module if left is None else _with_left(spec.name, module, left)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the new module ran when it was imported."""


def _with_left(name: str, module: ModuleType, left: dict[str, str]) -> ModuleType:
    """A stand-in for an old module some of whose names now live elsewhere: every name
    reads through to ``module``, the ones in ``left`` to their new modules."""
    proxy = ModuleType(name, module.__doc__)

    def lookup(attr: str) -> Any:
        if attr in left:
            return getattr(import_module(left[attr]), attr)
        return getattr(module, attr)

    proxy.__getattr__ = lookup  # type: ignore[method-assign]
    return proxy


class OldPaths:
    """Finds the old names of :data:`MOVED`, and no other."""

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        new = MOVED.get(fullname)
        if new is None:
            # a submodule of a moved package (flower.core.glance.awk)
            head = next((o for o in MOVED if fullname.startswith(o + ".")), None)
            if head is None:
                return None
            new = MOVED[head] + fullname[len(head) :]
        return ModuleSpec(fullname, cast(Any, _Alias(new)))


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once."""
    if not any(isinstance(f, OldPaths) for f in sys.meta_path):
        sys.meta_path.insert(0, OldPaths())
