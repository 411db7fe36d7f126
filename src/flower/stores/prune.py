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
  :data:`INTERRUPTED_NOTE`;
- a ``tool_use`` that never got its ``tool_result`` (the process was killed while the
  tool ran) gets one, an error carrying :data:`ORPHAN_NOTE`, in the user message right
  after the call, so the API never sees a dangling call.

What the bundled CLI (2.1.x) does with such an orphan, measured by killing a session
mid-``Bash`` and resuming it from the store in a fresh HOME: when the orphan is the
last message it heals it itself, with an English result ("[Tool call interrupted: the
session ended before this call's result was recorded…]", ``toolDenialKind:
"interrupted"``) and a placeholder reply, and writes both back; a call with a result
beside it in the same message is healed the same way. When anything follows the orphan
(a later prompt, written by a process that died before the CLI could heal) the CLI
silently drops the whole assistant message with the call: the model no longer knows it
ran the command. Healing at load time covers both cases with one wording; the CLI's own
healed results get the same note, so the model reads one language whoever healed.

- the CLI's ``cost-state`` line (its running totals: cost, durations, usage). A CLI
  resumed from a view holding one carries the total on and reports the whole session's
  cost so far as its result's ``total_cost_usd``: flower, which charges that figure to the
  attempt, would count every earlier attempt's cost again (a $5 history made a $0.08
  resume cost $5.08). Without it the CLI counts from zero and the figure is the
  attempt's own. The stored row stays (``store.stored()`` shows it).

Every removal re-links the lines that pointed at a removed line (``parentUuid``, and
``logicalParentUuid``/``leafUuid``) to its nearest surviving ancestor: the transcript is
a chain, and one broken link loses all history before it.

This runs whatever the trim policy says: ``Runtime(trim=False)`` only turns off the
spilling of large results; pruning, expiry and neutralising still happen.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from flower.kernel.lang import localized
from flower.kernel.policies import INTERRUPTED_NOTE as INTERRUPTED_NOTE
from flower.kernel.policies import INTERRUPTED_NOTE_EN as INTERRUPTED_NOTE_EN
from flower.kernel.policies import ORPHAN_NOTE as ORPHAN_NOTE
from flower.kernel.policies import ORPHAN_NOTE_EN as ORPHAN_NOTE_EN
from flower.kernel.policies import UNSURE as UNSURE
from flower.kernel.policies import UNSURE_EN as UNSURE_EN
from flower.kernel.policies import PrunePolicy as PrunePolicy
from flower.stores.mask import MaskPolicy
from flower.stores.scan import Scan, scan
from flower.stores.transcript import (
    LINK_FIELDS,
    Entry,
    blocks,
    text_start,
    tool_results,
)
from flower.stores.trim import EphemeralPolicy, TrimmingSessionStore, TrimPolicy, replace_text

__all__ = [
    "INTERRUPTED_NOTE",
    "INTERRUPTED_NOTE_EN",
    "ORPHAN_NOTE",
    "ORPHAN_NOTE_EN",
    "UNSURE",
    "UNSURE_EN",
    "PrunePolicy",
    "PruningSessionStore",
]

#: Fixed namespace of the ids of healed lines: the same stored transcript heals to the
#: same line every load, so lines the CLI writes after it keep a parent that exists.
_HEAL_NAMESPACE = uuid.UUID("5f0c8a52-7f57-4d0e-9a51-0d3b8f1e6c21")
#: How the CLI answers a call to a tool outside the session's tool set (``--tools``).
_NO_SUCH_TOOL = "<tool_use_error>Error: No such tool available:"
#: ``toolDenialKind`` of the result the CLI itself synthesizes for an orphan on resume.
_CLI_HEALED = "interrupted"
#: Fields a healed line copies from the call's line, so it looks like the CLI's own.
_CONTEXT_FIELDS = (
    "isSidechain", "agentId", "sessionId", "cwd", "version", "gitBranch", "userType",
    "entrypoint", "timestamp",
)  # fmt: skip

#: How the CLI words a result cut short by an interrupt (2.1.x), for transcripts that
#: predate the ``toolDenialKind`` field.
_INTERRUPT_TEXTS = (
    "The user doesn't want to proceed with this tool use.",
    "[Request interrupted by user",
)
_INTERRUPT_CHARS = max(len(t) for t in _INTERRUPT_TEXTS)


def _orphan_note(policy: PrunePolicy) -> str:
    return localized(policy.orphan_note, ORPHAN_NOTE, ORPHAN_NOTE_EN)


class PruningSessionStore(TrimmingSessionStore):
    """The store a Runtime uses: prune, then expire, then trim, all inside ``load()``.

    :param prune: The :class:`PrunePolicy` (default ``PrunePolicy()``: keep one denial).
    :param mask: The :class:`~flower.stores.mask.MaskPolicy` (default: on when trimming is).
    """

    def __init__(
        self,
        path: str | Path,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
        prune: PrunePolicy | None = None,
        mask: MaskPolicy | None = None,
    ) -> None:
        self.prune_policy = prune if prune is not None else PrunePolicy()
        super().__init__(path, workspace, policy=policy, ephemeral=ephemeral, mask=mask)

    def _prepare(self, entries: list[Any], found: Scan) -> tuple[list[Any], Scan]:
        return self._prune(entries, found)

    def prune(self, entries: list[Entry]) -> list[Entry]:
        """Drop synthetic errors and old denials, neutralise interrupts, re-link the
        chain, then heal orphaned calls."""
        return self._prune(entries, scan(entries))[0]

    def _prune(self, entries: list[Entry], found: Scan) -> tuple[list[Entry], Scan]:
        """:meth:`prune`, reading the lines' facts from ``found`` (:func:`scan` of
        ``entries``); the pruned lines and their scan (walked again only when a line or
        a block went)."""
        policy = self.prune_policy
        removed: set[int] = set(found.totals)
        if policy.drop_api_errors:
            errors = found.synthetic
            removed.update(errors)
            if errors:
                self._count("api_errors", len(errors))
        denials: list[tuple[int, Entry, dict[str, Any]]] = []
        for index, entry, block in found.results:
            if index in removed:
                continue
            if _is_denial(entry, block):
                denials.append((index, entry, block))
            elif policy.heal_orphans and entry.get("toolDenialKind") == _CLI_HEALED:
                block["content"] = replace_text(block.get("content"), _orphan_note(policy))
                self._count("orphans")
            elif policy.neutralize_interrupts and _is_interrupted(entry, block):
                note = localized(policy.note, INTERRUPTED_NOTE, INTERRUPTED_NOTE_EN)
                block["content"] = replace_text(block.get("content"), note)
                self._count("interrupted")
        old = denials[: max(len(denials) - max(policy.keep_denials, 0), 0)]
        partly = False  # a block went from a line that stays
        if old:
            uses = found.uses
            for index, entry, block in old:
                if _drop_block(entry, block):
                    removed.add(index)
                else:
                    partly = True
                use = uses.get(str(block.get("tool_use_id")))
                if use is not None:
                    if _drop_block(entries[use[0]], use[1]):
                        removed.add(use[0])
                    else:
                        partly = True
            self._count("denials", len(old))
        if removed:
            kept = relink([e for i, e in enumerate(entries) if i not in removed], entries, removed)
            # whole lines went: their facts go from the scan, no second walk
            less = None if partly else found.without(entries, removed)
            entries, found = kept, (scan(kept) if less is None else less)
        elif partly:
            found = scan(entries)
        if policy.heal_orphans:
            healed = self._heal(entries, found)
            if healed is not entries:
                entries, found = healed, scan(healed)
        return entries, found

    def heal(self, entries: list[Entry]) -> list[Entry]:
        """Answer every ``tool_use`` that has no ``tool_result`` with an error result.

        The results of one assistant message go where the API wants them, in the user
        message right after it: into the line already holding a result of that message
        when there is one (parallel calls, one finished), else into a new user line
        hung under the message's last line, whose other children move under the new
        line so the chain runs call -> result -> whatever came next.
        """
        return self._heal(entries, scan(entries))

    def _heal(self, entries: list[Entry], found: Scan) -> list[Entry]:
        """:meth:`heal` with the facts of ``found``; ``entries`` itself when nothing was
        healed (else a new list, or the same lines with a host's content changed: then
        a copy of the list, so the caller knows to scan again)."""
        answered = {str(block.get("tool_use_id")) for _, _, block in found.results}
        if all(call in answered for _, call in found.calls):  # the usual case: no maps
            return entries
        last_line: dict[str, int] = {}
        calls: dict[str, list[str]] = {}
        orphans: dict[str, list[str]] = {}
        for index, entry in enumerate(entries):
            if entry.get("type") != "assistant" or not entry.get("uuid"):
                continue
            key = _message_key(entry)
            last_line[key] = index
            for block in blocks(entry):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    call = str(block.get("id"))
                    calls.setdefault(key, []).append(call)
                    if call not in answered:
                        orphans.setdefault(key, []).append(call)
        if not orphans:
            return entries
        note = _orphan_note(self.prune_policy)
        inserted: dict[int, Entry] = {}
        for key, ids in orphans.items():
            results = [_orphan_result(call, note) for call in ids]
            host = _result_line(entries, set(calls[key]))
            if host is not None:
                host["message"]["content"].extend(results)
            else:
                anchor = entries[last_line[key]]
                inserted[last_line[key]] = _healed_line(anchor, results, entries)
            self._count("orphans", len(ids))
        healed: list[Entry] = []  # a new list even when only a host grew (see above)
        for index, entry in enumerate(entries):
            healed.append(entry)
            if index in inserted:
                healed.append(inserted[index])
        return healed


def relink(kept: list[Entry], original: list[Entry], removed: set[int]) -> list[Entry]:
    """Point links at removed lines to the nearest surviving ancestor instead (in place)."""
    # only a removed line's parent is ever looked up (the walk stops at a survivor)
    parent: dict[Any, Any] = {
        original[i]["uuid"]: original[i].get("parentUuid") for i in removed if "uuid" in original[i]
    }
    gone = set(parent) - {None}
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


def _message_key(entry: Entry) -> str:
    """Which API message a line belongs to (one line per content block, one id)."""
    message = entry.get("message")
    if isinstance(message, dict) and message.get("id"):
        return f"id:{message['id']}"
    return f"line:{entry.get('uuid')}"


def _orphan_result(call: str, note: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call, "content": note, "is_error": True}


def _result_line(entries: list[Entry], calls: set[str]) -> Entry | None:
    """The first user line holding a result of one of ``calls``."""
    for _, entry, block in tool_results(entries):
        if str(block.get("tool_use_id")) in calls:
            return entry
    return None


def _healed_line(anchor: Entry, results: list[dict[str, Any]], entries: list[Entry]) -> Entry:
    """A user line with ``results`` under ``anchor``; ``anchor``'s children move under it."""
    parent = anchor["uuid"]
    own = str(
        uuid.uuid5(_HEAL_NAMESPACE, f"{parent}:{','.join(r['tool_use_id'] for r in results)}")
    )
    for entry in entries:
        if entry.get("parentUuid") == parent:
            entry["parentUuid"] = own
        if entry.get("leafUuid") == parent:
            entry["leafUuid"] = own
    line: Entry = {k: anchor[k] for k in _CONTEXT_FIELDS if k in anchor}
    line.update(
        {
            "type": "user",
            "uuid": own,
            "parentUuid": parent,
            "message": {"role": "user", "content": results},
            "toolUseResult": results[0]["content"],
            "sourceToolAssistantUUID": parent,
            "flowerHealed": True,
        }
    )
    return line


def _is_denial(entry: Entry, block: dict[str, Any]) -> bool:
    """A call refused before it ran: a deny hook, a rule, a permission not granted, or a
    tool outside the session's tool set (the CLI's "No such tool available", which the
    role's allow-list makes the usual answer to a tool it does not have)."""
    decision = entry.get("permissionDecision")
    if isinstance(decision, dict) and decision.get("decision") == "reject":
        return True
    if entry.get("toolDenialKind") == "permission-rule":
        return True
    return bool(block.get("is_error")) and text_start(
        block.get("content"), len(_NO_SUCH_TOOL)
    ).startswith(_NO_SUCH_TOOL)


def _is_interrupted(entry: Entry, block: dict[str, Any]) -> bool:
    if entry.get("toolDenialKind") == "user-rejected":
        return True  # not a denial (checked first): the human interrupted a running call
    return text_start(block.get("content"), _INTERRUPT_CHARS).startswith(_INTERRUPT_TEXTS)


def _drop_block(entry: Entry, block: dict[str, Any]) -> bool:
    """Remove ``block`` from ``entry``'s content; ``True`` when nothing is left of it."""
    message = entry.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return True
    message["content"] = [b for b in message["content"] if b is not block]
    return not message["content"]
