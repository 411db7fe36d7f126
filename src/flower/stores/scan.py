"""One walk over a loaded transcript, collecting what every load policy asks of it.

Why: pruning, expiry, masking and trimming each walked all the lines for their own few
facts (which lines are API errors, where the tool results are, which call each result
answers, which user lines are prompts, which replies follow a line). With the fork
record's, on a session of 1 KB lines those ten walks cost two thirds of ``json.loads``
of the same JSONL: a load's budget is 1.5x (issue 23). :func:`scan` makes one walk (at
load time, the walk that shares strings as the rows are parsed:
:class:`ScanningStrings`); each policy reads its facts from the :class:`Scan`. Pruning,
which drops and heals lines, takes the dropped lines' facts out (:meth:`Scan.without`)
or scans again; the others change blocks' ``content`` only, which no fact here depends
on. The fork record (:mod:`flower.stores.handout`) keeps its own pass over the view: its
uuid sets beside these facts would lift the load's peak of memory.

Each fact is what the function it replaces returned (:func:`~flower.stores.transcript.
tool_results`, :func:`~flower.stores.transcript.tool_uses`, :func:`~flower.stores.transcript.
counted_results`, :func:`~flower.stores.transcript.is_synthetic`,
:func:`~flower.stores.mask.is_prompt`); ``tests/stores/test_scan.py`` checks them against
those functions on generated transcripts.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flower.stores.lines import _REPEATED, _REPEATED_IN_MESSAGE, RepeatedStrings
from flower.stores.transcript import Entry, Uses

T = TypeVar("T")

#: Lines a resumed CLI restores its running totals from (``stores/prune.py``, which drops
#: them: a resumed session would count earlier sessions' cost as its own).
RUNNING_TOTALS = frozenset({"cost-state"})
#: ``(line index, line, tool_result block)``.
Result = tuple[int, Entry, dict[str, Any]]


@dataclass
class Scan:
    """What one walk over ``entries`` found (indexes are into that list).

    Attributes:
        results: Every ``tool_result`` block of a user line, in order (``tool_results``).
        uses: ``tool_use`` id -> (line index, block) (``tool_uses``: the last one wins).
        synthetic: Lines :func:`~flower.stores.transcript.is_synthetic` accepts.
        prompts: User lines :func:`~flower.stores.mask.is_prompt` accepts.
        reply_lines, reply_ids: The line index and the message id (or ``None``) of every
            assistant line that is not synthetic: what expiry counts rounds by (two flat
            lists: a tuple a reply was a thirtieth of a 1 KB-line transcript's size).
        calls: ``(line index, id)`` of the ``tool_use`` blocks of assistant lines that
            have a uuid (the calls healing answers).
        totals: Lines of a :data:`RUNNING_TOTALS` type (which pruning drops).
    """

    results: list[Result] = field(default_factory=list)
    uses: Uses = field(default_factory=dict)
    synthetic: list[int] = field(default_factory=list)
    prompts: list[int] = field(default_factory=list)
    reply_lines: list[int] = field(default_factory=list)
    reply_ids: list[Any] = field(default_factory=list)
    calls: list[tuple[int, str]] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    side_results: int = 0  # results on sidechain lines
    main_user: int = 0  # user lines not on a sidechain
    repeats: bool = False  # a tool_use id seen twice: see :meth:`without`

    def counted(self) -> list[Result]:
        """:func:`~flower.stores.transcript.counted_results`: the main chain's results,
        unless every user line is a sidechain's (a subagent's own transcript)."""
        if self.side_results and self.main_user:
            return [r for r in self.results if r[1].get("isSidechain") is not True]
        return self.results

    def rounds_after(self) -> RoundsAfter:
        return RoundsAfter(self.reply_lines, self.reply_ids)

    def without(self, entries: list[Entry], removed: set[int]) -> Scan | None:
        """The scan of ``entries`` less the lines at ``removed``, from this one (a merge
        over the facts, not a walk over the lines); ``None`` when it cannot be told
        without a walk (an id repeats: a removed line's call may hide another's).
        Changes this scan in place (and returns it)."""
        if self.repeats:
            return None
        gone = sorted(removed)
        out = Scan(repeats=False)
        side = 0
        k, n = 0, len(gone)
        for item in self.results:
            i = item[0]
            if i in removed:
                continue
            while k < n and gone[k] < i:
                k += 1
            out.results.append((i - k, item[1], item[2]))
            if item[1].get("isSidechain") is True:
                side += 1
        out.side_results = side
        # a dict keeps the order ids were first seen: line order, as no id repeats
        uses = _kept(self.uses.items(), lambda u: u[1][0], gone)
        out.uses = {c: (i - s, b) for (c, (i, b)), s in uses}
        out.synthetic = [i - s for i, s in _kept(self.synthetic, int, gone)]
        out.prompts = [i - s for i, s in _kept(self.prompts, int, gone)]
        replies = _kept(zip(self.reply_lines, self.reply_ids, strict=True), _first, gone)
        for (i, m), s in replies:
            out.reply_lines.append(i - s)
            out.reply_ids.append(m)
        out.calls = [(i - s, c) for (i, c), s in _kept(self.calls, _first, gone)]
        out.totals = [i - s for i, s in _kept(self.totals, int, gone)]
        main_user = self.main_user
        for i in gone:
            entry = entries[i]
            if entry.get("type") == "user" and entry.get("isSidechain") is not True:
                main_user -= 1
        out.main_user = main_user
        # in place: the callers' frames still hold this scan, and two at once were a
        # tenth of a 1 KB-line transcript's size at the load's peak
        self.__dict__.update(out.__dict__)
        return self


class RoundsAfter:
    """For a line index, how many distinct model replies (assistant messages that are not
    synthetic) follow it: expiry's ``{age}``. Built from the replies alone, not a walk
    over every line."""

    def __init__(self, lines: list[int], ids: list[Any]) -> None:
        self.lines = lines
        self.distinct = [0] * (len(lines) + 1)  # distinct replies from position j on
        seen: set[Any] = set()
        for j in range(len(lines) - 1, -1, -1):
            index, msg_id = lines[j], ids[j]
            seen.add(msg_id or ("line", index))
            self.distinct[j] = len(seen)

    def __getitem__(self, index: int) -> int:
        return self.distinct[bisect.bisect_right(self.lines, index)]


def _kept(items: Iterable[T], line: Callable[[T], int], gone: list[int]) -> Iterator[tuple[T, int]]:
    """Each of ``items`` (ordered by ``line(item)``, its line index) whose line is not in
    ``gone`` (sorted), with the number of ``gone`` lines before it."""
    removed = set(gone)
    k, n = 0, len(gone)
    for item in items:
        i = line(item)
        if i in removed:
            continue
        while k < n and gone[k] < i:
            k += 1
        yield item, k


def scan(entries: list[Entry]) -> Scan:
    """Walk ``entries`` once (see the module doc)."""
    found = Scan()
    repeats = False
    results, uses, synthetic = found.results, found.uses, found.synthetic
    prompts, calls = found.prompts, found.calls
    reply_lines, reply_ids = found.reply_lines, found.reply_ids
    side_results = main_user = 0
    for index, entry in enumerate(entries):
        uid = entry.get("uuid")
        kind = entry.get("type")
        error = entry.get("isApiErrorMessage") is True
        if error:
            synthetic.append(index)
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "user":
            side = entry.get("isSidechain") is True
            if not side:
                main_user += 1
            if isinstance(content, list):
                answers = 0
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        results.append((index, entry, block))
                        answers += 1
                if not answers:
                    prompts.append(index)
                elif side:
                    side_results += answers
            elif isinstance(content, str):
                prompts.append(index)
        elif kind == "assistant":
            if not error:
                reply_lines.append(index)
                reply_ids.append(message.get("id") if isinstance(message, dict) else None)
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        call = str(block.get("id"))
                        if call in uses:
                            repeats = True
                        uses[call] = (index, block)
                        if uid:
                            calls.append((index, call))
        elif kind == "system" and not error and entry.get("subtype") == "api_error":
            synthetic.append(index)
        elif kind in RUNNING_TOTALS:
            found.totals.append(index)
    found.side_results, found.main_user, found.repeats = side_results, main_user, repeats
    return found


def _first(pair: tuple[int, Any]) -> int:
    return pair[0]


class ScanningStrings(RepeatedStrings):
    """:class:`~flower.stores.lines.RepeatedStrings` whose walk over each parsed chunk
    also :func:`scan` s it: a load's lines are walked once between the parser and the
    policies (``found`` is the scan of every line passed so far, in order)."""

    def __init__(self) -> None:
        super().__init__()
        self.found = Scan()
        self.count = 0  # lines passed so far: the index of the next one

    def __call__(self, entries: list[Any]) -> list[Any]:
        pool, previous, usage, reply = self.pool, self.previous, self.usage, self.reply
        share = pool.setdefault
        found = self.found
        results, uses, synthetic = found.results, found.uses, found.synthetic
        prompts, calls = found.prompts, found.calls
        reply_lines, reply_ids = found.reply_lines, found.reply_ids
        side_results, main_user, repeats = found.side_results, found.main_user, found.repeats
        index = self.count - 1
        for entry in entries:
            index += 1
            if not isinstance(entry, dict):
                continue
            for name in _REPEATED:
                value = entry.get(name)
                if value.__class__ is str:
                    entry[name] = share(value, value)
            uid = entry.get("uuid")
            kind = entry.get("type")
            error = entry.get("isApiErrorMessage") is True
            if error:
                synthetic.append(index)
            message = entry.get("message")
            content = None
            if isinstance(message, dict):
                for name in _REPEATED_IN_MESSAGE:
                    value = message.get(name)
                    if value.__class__ is str:
                        message[name] = share(value, value)
                spent = message.get("usage")
                if spent.__class__ is dict:
                    if spent == usage and message.get("id") == reply[0]:
                        # the same reply, split by block: one usage, one id, one request (a
                        # field the line lacks stays missing, not null)
                        message["usage"] = usage
                        if "id" in message:
                            message["id"] = reply[0]
                        if "requestId" in entry and entry["requestId"] == reply[1]:
                            entry["requestId"] = reply[1]
                    else:
                        usage, reply = spent, (message.get("id"), entry.get("requestId"))
                content = message.get("content")
            if kind == "user":
                side = entry.get("isSidechain") is True
                if not side:
                    main_user += 1
                if isinstance(content, list):
                    answers = 0
                    for block in content:
                        if isinstance(block, dict):
                            block_kind = block.get("type")
                            if block_kind.__class__ is str:
                                block["type"] = block_kind = share(block_kind, block_kind)
                            if block_kind == "tool_result":
                                results.append((index, entry, block))
                                answers += 1
                    if not answers:
                        prompts.append(index)
                    elif side:
                        side_results += answers
                elif isinstance(content, str):
                    prompts.append(index)
            elif kind == "assistant":
                if not error:
                    reply_lines.append(index)
                    reply_ids.append(message.get("id") if isinstance(message, dict) else None)
                if isinstance(content, list):
                    for block in content:
                        if isinstance(block, dict):
                            block_kind = block.get("type")
                            if block_kind.__class__ is str:
                                block["type"] = block_kind = share(block_kind, block_kind)
                            if block_kind == "tool_use":
                                call = str(block.get("id"))
                                if call in uses:
                                    repeats = True
                                uses[call] = (index, block)
                                if uid:
                                    calls.append((index, call))
            else:
                if kind == "system" and not error and entry.get("subtype") == "api_error":
                    synthetic.append(index)
                elif kind in RUNNING_TOTALS:
                    found.totals.append(index)
                if content.__class__ is list:
                    for block in content:
                        if block.__class__ is dict:
                            block_kind = block.get("type")
                            if block_kind.__class__ is str:
                                block["type"] = share(block_kind, block_kind)
            if previous is not None and entry.get("parentUuid") == previous:
                entry["parentUuid"] = previous
                if entry.get("sourceToolAssistantUUID") == previous:
                    entry["sourceToolAssistantUUID"] = previous
            previous = uid
        self.count = index + 1
        self.previous, self.usage, self.reply = previous, usage, reply
        found.side_results, found.main_user, found.repeats = side_results, main_user, repeats
        return entries

    def scan(self) -> Scan:
        """The scan of every line passed; handed over, not kept (pruning changes it, and
        nothing else may hold it meanwhile)."""
        found, self.found = self.found, Scan()
        return found
