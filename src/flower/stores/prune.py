"""Pruning at resume time: what a retry storm, a refusal or an interrupt left behind.

Three things go before the transcript is fed back to the model (001, «Устойчивость»):

- synthetic API-error lines (``isApiErrorMessage``, and the CLI's ``system/api_error``
  retry notices). Left in, the last one is the session's leaf and the model resumes
  "discussing" a network failure;
- refused tool calls beyond the newest ``keep_denials`` (a refused call never ran, its
  result carries no information, and a pile of them teaches the model helplessness;
  the newest one stops it repeating the same call at once). The call and its result
  go together, so no ``tool_use`` is left without its ``tool_result``;
- results left by an interrupt keep their record; only their text becomes the neutral
  :data:`INTERRUPTED_NOTE`.

Every removal re-links the lines that pointed at a removed line (``parentUuid``, and
``logicalParentUuid``/``leafUuid``) to its nearest surviving ancestor: the transcript is
a chain, and one broken link loses all history before it.

This runs whatever the trim policy says: ``Runtime(trim=False)`` only turns off the
spilling of large results; pruning, expiry and neutralising still happen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.stores.transcript import (
    LINK_FIELDS,
    Entry,
    is_synthetic,
    result_text,
    tool_results,
    tool_uses,
)
from flower.stores.trim import EphemeralPolicy, TrimmingSessionStore, TrimPolicy, replace_text

__all__ = ["INTERRUPTED_NOTE", "PrunePolicy", "PruningSessionStore"]

#: What an interrupted call's result says after pruning.
INTERRUPTED_NOTE = "[上一轮在此处被中断,该工具结果未产生]"

#: How the CLI words a result cut short by an interrupt (2.1.x), for transcripts that
#: predate the ``toolDenialKind`` field.
_INTERRUPT_TEXTS = (
    "The user doesn't want to proceed with this tool use.",
    "[Request interrupted by user",
)


@dataclass
class PrunePolicy:
    """What pruning removes or neutralises.

    Attributes:
        keep_denials: The newest refused tool calls that stay (``Runtime(keep_denials=1)``).
        drop_api_errors: Remove synthetic API-error lines.
        neutralize_interrupts: Replace interrupted results' text with ``note``.
        note: The neutral text for an interrupted result.
    """

    keep_denials: int = 1
    drop_api_errors: bool = True
    neutralize_interrupts: bool = True
    note: str = INTERRUPTED_NOTE


class PruningSessionStore(TrimmingSessionStore):
    """The store a Runtime uses: prune, then expire, then trim, all inside ``load()``.

    :param prune: The :class:`PrunePolicy` (default ``PrunePolicy()``: keep one denial).
    """

    def __init__(
        self,
        path: str | Path,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
        prune: PrunePolicy | None = None,
    ) -> None:
        self.prune_policy = prune if prune is not None else PrunePolicy()
        super().__init__(path, workspace, policy=policy, ephemeral=ephemeral)

    def _prepare(self, entries: list[Any]) -> list[Any]:
        return self.prune(entries)

    def prune(self, entries: list[Entry]) -> list[Entry]:
        """Drop synthetic errors and old denials, neutralise interrupts, re-link the chain."""
        policy = self.prune_policy
        removed: set[int] = set()
        if policy.drop_api_errors:
            errors = [i for i, e in enumerate(entries) if is_synthetic(e)]
            removed.update(errors)
            if errors:
                self._count("api_errors", len(errors))
        denials: list[tuple[int, Entry, dict[str, Any]]] = []
        for index, entry, block in tool_results(entries):
            if index in removed:
                continue
            if _is_denial(entry):
                denials.append((index, entry, block))
            elif policy.neutralize_interrupts and _is_interrupted(entry, block):
                block["content"] = replace_text(block.get("content"), policy.note)
                self._count("interrupted")
        old = denials[: max(len(denials) - max(policy.keep_denials, 0), 0)]
        if old:
            uses = tool_uses(entries)
            for index, entry, block in old:
                if _drop_block(entry, block):
                    removed.add(index)
                use = uses.get(str(block.get("tool_use_id")))
                if use is not None and _drop_block(entries[use[0]], use[1]):
                    removed.add(use[0])
            self._count("denials", len(old))
        if not removed:
            return entries
        return relink([e for i, e in enumerate(entries) if i not in removed], entries, removed)


def relink(kept: list[Entry], original: list[Entry], removed: set[int]) -> list[Entry]:
    """Point links at removed lines to the nearest surviving ancestor instead (in place)."""
    parent: dict[Any, Any] = {e["uuid"]: e.get("parentUuid") for e in original if "uuid" in e}
    gone = {original[i].get("uuid") for i in removed} - {None}
    resolved: dict[Any, Any] = {}

    def survivor(uid: Any) -> Any:
        path: list[Any] = []
        while uid in gone and uid not in resolved and uid not in path:
            path.append(uid)
            uid = parent.get(uid)
        found = resolved.get(uid, uid)
        for step in path:
            resolved[step] = found
        return found

    for entry in kept:
        for field in LINK_FIELDS:
            value = entry.get(field)
            if value is not None and value in gone:
                entry[field] = survivor(value)
    return kept


def _is_denial(entry: Entry) -> bool:
    """A call refused before it ran: a deny hook, a rule, or a permission not granted."""
    decision = entry.get("permissionDecision")
    if isinstance(decision, dict) and decision.get("decision") == "reject":
        return True
    return entry.get("toolDenialKind") == "permission-rule"


def _is_interrupted(entry: Entry, block: dict[str, Any]) -> bool:
    if entry.get("toolDenialKind") == "user-rejected":
        return True  # not a denial (checked first): the human interrupted a running call
    return result_text(block.get("content")).startswith(_INTERRUPT_TEXTS)


def _drop_block(entry: Entry, block: dict[str, Any]) -> bool:
    """Remove ``block`` from ``entry``'s content; ``True`` when nothing is left of it."""
    message = entry.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return True
    message["content"] = [b for b in message["content"] if b is not block]
    return not message["content"]
