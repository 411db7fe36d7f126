"""Trimming at resume time: stale one-off results expire, large old results move to files.

Nothing stored changes: :class:`TrimmingSessionStore` reshapes what ``load()`` returns,
which is what the SDK writes to the temporary transcript the CLI resumes from. A fork
copies that view back to the store under its new session; ``append`` recognises the copy
and stores the original lines instead (:mod:`flower.stores.handout`). The
order inside ``load()`` is the seed's: ``super().load()`` → clear ``last_report`` →
``expire()`` if ``ephemeral.enabled`` → ``trim()`` if ``policy.enabled``.

Two structural red lines hold for both steps: a ``tool_result`` block is never removed
(only its ``content`` changes, or the API answers "Missing Tool Result Block"), and
lines marked ``isCompactSummary`` are never touched. Only plain text is replaced:
image and document blocks inside a result stay as they are.

Choices the seed leaves open, made here:

- a "round" (the ``{age}`` of the expiry note) is one model reply: the number of
  distinct assistant messages written after the result;
- ``EphemeralPolicy.max_chars``: an ephemeral result longer than this is not thrown
  away (a long ``git diff`` may still matter); trimming spills it instead, so it is
  kept on disk rather than lost;
- ``TrimPolicy.keep_recent`` counts tool results: the newest 20 are never trimmed,
  and a result is trimmed when its text has at least ``min_chars`` characters;
- the pointer left in place names the spill file by absolute path, its size and its
  first lines; the file holds the original text byte for byte (UTF-8), named by the
  tool call id and a content hash, so reloading the session rewrites nothing;
- trimming only saves context, so a result whose spill file cannot be written (the
  folder cannot be made, or a folder on its way is a symlink, wherever it leads) stays
  whole and is counted as ``spill_failed``: a resume never fails, and nothing is lost,
  for it;
- the spill file and the pointer's head are redacted (:mod:`flower.kernel.redact`): no
  known secret value reaches the spill folder or the resumed context through them.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from claude_agent_sdk.types import SessionKey, SessionStoreEntry

from flower.kernel.lang import EN, current
from flower.kernel.policies import TrimPolicy as TrimPolicy
from flower.kernel.redact import current as current_redactor
from flower.kernel.redact import watch
from flower.stores.anchor import TTLS, first_long, settle
from flower.stores.boundaries import draw
from flower.stores.expire import CMD_CHARS as CMD_CHARS
from flower.stores.expire import EXPIRED_TEXT as EXPIRED_TEXT
from flower.stores.expire import EXPIRED_TEXT_EN as EXPIRED_TEXT_EN
from flower.stores.expire import EphemeralPolicy, ResultBlocks, expire, replace_text
from flower.stores.handout import Handouts
from flower.stores.marks import Mark, MarkBook, copy_marks, mark_of, place
from flower.stores.mask import (
    MASKED_NAME,
    MaskPolicy,
    boundary,
    maskable,
    masked_text,
    never_masked,
    placeholder,
)
from flower.stores.mask_calls import mask_input
from flower.stores.mask_rulings import kept_below, mask_rulings, rulings
from flower.stores.move_cost import MoveCost
from flower.stores.report import trim_report as trim_report
from flower.stores.scan import Scan, ScanningStrings, scan
from flower.stores.spill_folder import SpillFolder
from flower.stores.spill_memo import SpillMemo
from flower.stores.sqlite import SqliteSessionStore
from flower.stores.statements import key_of
from flower.stores.transcript import Entry, Uses, counted_results, text_length, tool_uses

__all__ = [
    "EphemeralPolicy",
    "TrimPolicy",
    "TrimmingSessionStore",
    "replace_text",
    "trim_report",
]

#: A session key as the store's rows hold it: ``(project_key, session_id, subpath)``.
_Key = tuple[str, str, str]
#: Text blocks shorter than this stay in place: a pointer would not be shorter.
SMALL_TEXT = 200
#: How much of a spilled result the pointer quotes.
HEAD_LINES = 3
HEAD_CHARS = 200


class TrimmingSessionStore(SqliteSessionStore):
    """:class:`SqliteSessionStore` whose ``load()`` expires and trims.

    Attributes:
        workspace: The project folder; spill files go under it.
        policy: The :class:`TrimPolicy`.
        ephemeral: The :class:`EphemeralPolicy`.
        mask: The :class:`~flower.stores.mask.MaskPolicy` (observation masking, in chunks
            the prompt cache survives); by default on exactly when trimming is.
        now: The clock a load compares the session's last line with (seconds since the
            epoch), to tell a cold prompt cache from a warm one.
        last_report: What the latest ``load()`` did, e.g. ``{"expired": 3,
            "trimmed": 2, "trimmed_chars": 48211}`` (pruning adds its own counts).
    """

    def __init__(
        self,
        path: str | Path,
        workspace: str | Path,
        policy: TrimPolicy | None = None,
        ephemeral: EphemeralPolicy | None = None,
        mask: MaskPolicy | None = None,
    ) -> None:
        self.workspace = Path(workspace)
        self.policy = policy if policy is not None else TrimPolicy()
        self.ephemeral = ephemeral if ephemeral is not None else EphemeralPolicy()
        self.mask = mask if mask is not None else MaskPolicy()
        self.now: Callable[[], float] = time.time
        #: Session id -> seconds its prompt cache lives, when longer than the mask
        #: policy's ``cold_after`` (a session that asked for the 1-hour cache, told by
        #: the Runtime: ``runtime/cache_rhythm.py``). A load within that time is warm.
        self.cache_lifetimes: dict[str, float] = {}
        #: Session id -> the TTL (``"5m"``/``"1h"``) the CLI's cache marks carry in the
        #: session's next requests, when the Runtime pinned it
        #: (:mod:`flower.runtime.cache_rhythm`): a load then places flower's own mark
        #: (:mod:`flower.stores.anchor`), which must carry the same.
        self.cache_ttls: dict[str, str] = {}
        #: The same for every session without an entry there: set it when you drive the
        #: CLI yourself with ``CLAUDE_CODE_PROMPT_CACHE_TTL`` pinned to it (``None``: no
        #: mark of flower's in such a session).
        self.cache_ttl: str | None = None
        #: Prices a warm move of masking's boundary (and keeps each line's size).
        self._moves = MoveCost()
        self.last_report: dict[str, int] = {}
        self._redactor = current_redactor()
        self._english = current() == EN  # the language now; each load looks again
        #: What recent loads handed out: a fork's copy of it is stored as the original.
        self.handouts = Handouts()
        # Checked by name here; links are checked at every write (an agent can plant one
        # at any time, and one planted before flower started must not stop it starting).
        base = self.workspace.absolute()
        spill = Path(os.path.normpath(base / self.policy.spill_dirname))
        if spill == base or not spill.is_relative_to(base):
            raise ValueError(
                f"TrimPolicy.spill_dirname {self.policy.spill_dirname!r} leaves the workspace "
                f"{self.workspace}: use a folder inside it, such as '.flower/spill'"
            )
        self._folder = SpillFolder(self.workspace, self.policy.spill_dirname)
        #: What earlier loads spilled (``stores/spill_memo.py``).
        self._memo = SpillMemo(self._folder)
        watch(workspace=self.workspace)  # its .env holds secrets to redact too
        super().__init__(path)
        #: Each session's marks, as this store last read or wrote them (``stores/marks.py``).
        self._marks = MarkBook(self._engine)

    @property
    def spill_dir(self) -> Path:
        return self._folder.path

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        return await self._in_thread(self._load_view, key)

    def _load_view(self, key: SessionKey) -> list[Any] | None:
        """Read, then reshape, in one worker thread; the walk that shares repeated strings
        as the rows are parsed scans them too (:class:`~flower.stores.scan.ScanningStrings`)."""
        walk = ScanningStrings()
        entries: list[Any] | None = self._load(key, share=walk)
        if entries is None:
            self.last_report = {}
            return None
        return self._hand_out(key, entries, walk.scan())

    def _hand_out(
        self, key: SessionKey, entries: list[Any], found: Scan | None = None
    ) -> list[Any]:
        """The reshaped view, remembered so that a fork's copy of it is stored as the
        original (:mod:`flower.stores.handout`). ``found``: :func:`~flower.stores.scan.scan`
        of ``entries`` when the caller has it."""
        stored = len(entries)
        view, _ = self._reshaped(entries, found, key=key_of(key))
        self.handouts.record(key_of(key), stored, view)
        return view

    def _append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Store a fork's copy of a reshaped view as the original lines (see
        :mod:`flower.stores.handout`); everything else as it comes."""
        rows: list[Any] = list(entries)
        restored: list[Any] = self.handouts.restore(key_of(key), rows, self._stored_rows)
        super()._append(key, self.handouts.anchored(key_of(key), restored))
        parent = self.handouts.forked_from.pop(key_of(key), None)
        if parent is not None:  # a fork's first request was its parent's view
            with contextlib.suppress(Exception):
                copy_marks(self._engine, parent, key_of(key))

    def _delete(self, key: SessionKey) -> None:
        super()._delete(key)
        self._marks.forget(*key_of(key))

    def _stored_rows(self, key: tuple[str, str, str]) -> list[Any] | None:
        project_key, session_id, subpath = key
        rows: list[Any] | None = self._load(
            {"project_key": project_key, "session_id": session_id, "subpath": subpath}
        )
        return rows

    def _reshaped(
        self, entries: list[Any], found: Scan | None = None, *, key: _Key | None = None
    ) -> tuple[list[Any], Scan]:
        """Everything ``load()`` does after reading, in the seed's order (runs in a thread):
        prune, expire, mask, trim. The view and its :func:`~flower.stores.scan.scan`
        (``found``: the scan of ``entries``, when the caller has it). ``key``: the session
        loaded, whose boundaries never come nearer than its last load drew them
        (:mod:`flower.stores.marks`)."""
        self.last_report = {}
        # One walk collects what every policy asks (:mod:`flower.stores.scan`); pruning
        # walks again only when it dropped or added something.
        entries, found = self._prepare(entries, scan(entries) if found is None else found)
        # Expiry, masking and trimming change blocks in place, never lines: the walk
        # serves all three, and they count the main chain's results only.
        results = found.counted()
        uses = found.uses
        lines = [i for i, _, _ in results]
        ids = [str(block.get("tool_use_id")) for _, _, block in results]
        marks = self._marks.get(key)
        drawn: dict[str, Mark] = {}
        lives = self.cache_lifetimes.get(key[1], 0.0) if key is not None else 0.0
        # flower's own cache mark (:mod:`flower.stores.anchor`), with the CLI's TTL when
        # the Runtime pinned it: a move then rewrites only what follows the anchor. Only
        # in the main transcript: a subagent's requests carry its own TTL, not pinned.
        ttl = (
            self.cache_ttls.get(key[1], self.cache_ttl) if key is not None and not key[2] else None
        )
        anchoring = ttl in TTLS and (self.masking or self.ephemeral.enabled)
        anchor = place(marks.get("anchor"), ids) if anchoring else 0
        at = draw(
            mask=self.mask, ephemeral=self.ephemeral, masking=self.masking, entries=entries,
            found=found, results=results, lines=lines, ids=ids, marks=marks, now=self.now,
            lives=lives, moves=self._moves, start=results[anchor - 1][0] if anchor else 0,
        )  # fmt: skip
        reach, below = at.reach, at.below
        if self.ephemeral.enabled:
            self._expire_below(entries, results, uses, below, at.keep, found)
            drawn["expiry"] = mark_of(ids, below) or marks.get("expiry")  # type: ignore[assignment]
        # Below ``edge`` no later load changes anything: masking's and expiry's
        # boundaries, a ruling kept whole, trimming's next result (the anchor's place).
        edge = min([len(results), *([reach] if self.masking else []),
                    *([below] if self.ephemeral.enabled else [])])  # fmt: skip
        if self.masking:
            if reach:
                entries = self.apply_mask(entries, results[:reach], uses=uses)
                newest_masked = results[reach - 1][0]
                ruling = rulings(entries, found.prompts)
                if anchoring:  # a ruling kept whole below the boundary changes later
                    kept = kept_below(ruling, newest_masked)
                    if kept is not None:
                        edge = min(edge, bisect.bisect_left(lines, kept))
                ruled = mask_rulings(ruling, newest_masked, self._english)
                if ruled:
                    self._count("superseded_rulings", ruled)
            drawn["mask"] = mark_of(ids, reach) or marks.get("mask")  # type: ignore[assignment]
        if self.policy.enabled:
            # Trimming keeps its window (the newest 20 stay), judged as the results
            # stood at masking's last move when batched: between moves it changes
            # nothing either, and it only meets what masking leaves (a human's answers,
            # a failed spill). With chunks, masking's reach (newest 6 plus less than a
            # chunk) is always past trimming's newest 20.
            upto = None
            if self.masking and self.mask.chunk is None:
                upto = reach + max(self.mask.keep_recent, 0) - max(self.policy.keep_recent, 0)
            entries = self.trim(entries, results=results, upto=upto)
            if anchoring:  # a long result trimming has yet to reach (it took all before)
                window = len(results) - max(self.policy.keep_recent, 0)
                edge = first_long(results, window if upto is None else upto, edge,
                                  self.policy.min_chars)  # fmt: skip
        if anchoring:
            assert ttl is not None
            placed, count = settle(results, ids, anchor, edge, at.moved or at.cold, ttl)
            if count:
                self._count("cache_marks", count)
            if placed is not None:
                drawn["anchor"] = placed
        elif "anchor" in marks:
            drawn["anchor"] = marks["anchor"]
        self._marks.put(key, marks, {k: v for k, v in drawn.items() if v is not None})
        return entries, found

    @property
    def masking(self) -> bool:
        """Whether ``load()`` masks old results (:attr:`mask`; by default, as trimming)."""
        enabled = self.mask.enabled
        return self.policy.enabled if enabled is None else enabled

    def _prepare(self, entries: list[Any], found: Scan) -> tuple[list[Any], Scan]:
        """A step before expiry, for subclasses (pruning): the lines and their scan
        (``found`` is :func:`~flower.stores.scan.scan` of ``entries``); none here."""
        return entries, found

    def _look_around(self) -> None:
        """What spilling needs, looked up once per pass, not per result (each looks at
        files: the spill folder's links, the watched ``.env`` files, the language saved
        by ``flower setup``)."""
        self._folder.forget()
        self._memo.start()
        redactor = current_redactor()
        if redactor is not self._redactor:  # other secrets: what was spilled is redone
            self._memo.clear()
        self._redactor = redactor
        self._english = current() == EN

    def _count_saved(self, kind: str, saved: int) -> None:
        """Count one ``kind`` (masked, trimmed, masked_inputs) and the characters it saved."""
        self._count(kind)
        self._count(f"{kind}_chars", saved)

    def _count(self, name: str, n: int = 1) -> None:
        self.last_report[name] = self.last_report.get(name, 0) + n

    # --- expiry -----------------------------------------------------------------------

    def expire(
        self,
        entries: list[Entry],
        *,
        results: ResultBlocks | None = None,
        uses: Uses | None = None,
        cold: list[int] | None = None,
        found: Scan | None = None,
    ) -> list[Entry]:
        """Replace stale ephemeral Bash results with ``ephemeral.text`` (in place;
        :func:`flower.stores.expire.expire`).

        ``results``: ``counted_results(entries)`` when the caller has it already (the main
        chain's: an old transcript's inline subagent lines are never sent, so they neither
        count nor change). Expiry waits for a boundary drawn as masking's is, masking on or
        off (:func:`~flower.stores.mask.boundary`, with ``mask``'s chunk and cold
        threshold): it judges the results as they stood when the boundary last moved and
        changes only those below it, so while the cache is warm a glance expires when a
        chunk moves, not a little at every resume (each change makes the API write
        everything after it again); on a cold cache the boundary is all the way and the
        seed's rule holds exactly. With
        ``mask.supersede`` a glance that ran again later expires too, below the boundary.
        ``uses``, ``cold``, ``found``: ``tool_uses(entries)``,
        :func:`~flower.stores.mask.cold_points` and :func:`~flower.stores.scan.scan` of
        ``entries`` when the caller has them already.
        """
        pool = counted_results(entries) if results is None else results
        keep = max(min(self.mask.keep_recent, self.ephemeral.keep_recent), 0)
        lines = [i for i, _, _ in pool]
        below = boundary(self.mask, entries, lines, self.now(), keep=keep, cold=cold)
        self._expire_below(entries, pool, uses, below, keep, found)
        return entries

    def _expire_below(
        self,
        entries: list[Entry],
        pool: ResultBlocks,
        uses: Uses | None,
        below: int,
        keep: int,
        found: Scan | None,
    ) -> None:
        """Expire among the oldest ``below`` results, judged as they stood when the
        boundary reached there (the newest ``keep`` after it count as newer)."""
        expired = expire(
            entries,
            pool[: below + keep],
            self.ephemeral,
            below=below,
            supersede=self.masking and self.mask.supersede,
            uses=uses,
            facts=found,
        )
        if expired:
            self._count("expired", expired)

    # --- masking ----------------------------------------------------------------------

    def apply_mask(
        self, entries: list[Entry], results: ResultBlocks, *, uses: Uses | None = None
    ) -> list[Entry]:
        """Replace the text of each of ``results`` (the oldest, below the boundary) that is
        long enough with a placeholder naming its spill file (in place).

        A result trimming would spill (``policy.min_chars`` or more) is counted as
        trimming's. With chunks (``mask.chunk`` a number) it gets trimming's pointer,
        which quotes the result's first lines, so a large result reads the same whether
        masking or trimming reached it first. Batched (``mask.chunk`` ``None``) trimming
        waits for masking's boundary and never reaches a result before it, and every
        masked result is the one-line placeholder: a quoted head was a third of what a
        masked round of HT001's coordinator carried (a worker's report begins with the
        CLI's hand-back preamble, not with what it found), and the pointer's longer
        wording and file name (the call's id) another sixth.
        """
        self._look_around()
        uses = tool_uses(entries) if uses is None else uses
        large = self.policy.min_chars if self.policy.enabled else None
        quote = self.mask.chunk is not None
        for _index, entry, block in results:
            call = str(block.get("tool_use_id") or "result")
            use = uses.get(call)
            if entry.get("isCompactSummary") is True:
                continue
            if use is not None and (saved := mask_input(use[1], self._english)):
                self._count_saved("masked_inputs", saved)
            if not maskable(block, self.mask):
                continue
            if use is not None and never_masked(use[1].get("name")):
                continue
            content = block.get("content")
            length = text_length(content) if large is not None else 0
            kind = "trimmed" if large is not None and length >= large else "masked"
            try:
                if kind == "trimmed":  # counted as trimming's: it reads as trimming's
                    block["content"] = self._spill(call, content, quote)
                    saved = length - text_length(block["content"])
                else:
                    block["content"], saved = masked_text(content, self._mask_line)
            except (OSError, ValueError):  # ValueError: keep_out_of_git met a link
                self._count("spill_failed")
                continue
            self._count_saved(kind, saved)
        return entries

    def _mask_line(self, body: str) -> str:
        """The placeholder of ``body``, whose spill file holds it (redacted, as every
        spill file is)."""
        key = ("m", "", len(body), hash(body), self._english)
        hit = self._memo.recall(key)
        if hit is not None:
            return hit[0]
        path = self._folder.write(MASKED_NAME, self._redactor.redact(body))
        line = placeholder(len(body), path, self._english)
        self._memo.remember(key, line, path)
        return line

    # --- trimming ---------------------------------------------------------------------

    def trim(
        self,
        entries: list[Entry],
        *,
        results: ResultBlocks | None = None,
        upto: int | None = None,
    ) -> list[Entry]:
        """Spill large old tool results to files and leave pointers (in place).

        ``results``: ``counted_results(entries)`` when the caller has it already.
        ``upto``: only the oldest this many may be trimmed (masking's batched boundary).
        """
        self._look_around()
        policy = self.policy
        results = counted_results(entries) if results is None else results
        last = max(len(results) - max(policy.keep_recent, 0), 0)
        if upto is not None:
            last = min(last, max(upto, 0))
        old = results[:last]
        for _index, entry, block in old:
            if entry.get("isCompactSummary") is True:
                continue
            content = block.get("content")
            before = text_length(content)
            if before < policy.min_chars:
                continue
            try:
                block["content"] = self._spill(str(block.get("tool_use_id") or "result"), content)
            except (OSError, ValueError):  # ValueError: keep_out_of_git met a link
                self._count("spill_failed")
                continue
            self._count("trimmed")
            self._count("trimmed_chars", before - text_length(block["content"]))
        return entries

    def _spill(self, tool_use_id: str, content: Any, head: bool = True) -> Any:
        """``content`` with its text spilled to files, each replaced by a pointer that
        quotes the text's first lines (``head`` false: by masking's one-line placeholder)."""
        if isinstance(content, str):
            return self._pointer(tool_use_id, content) if head else self._mask_line(content)
        out = []
        for n, item in enumerate(content):
            if isinstance(item, dict) and item.get("type") == "text":
                body = str(item.get("text", ""))
                if len(body) >= SMALL_TEXT:
                    name = f"{tool_use_id}.{n}"
                    line = self._pointer(name, body) if head else self._mask_line(body)
                    item = {**item, "text": line}
            out.append(item)
        return out

    def _pointer(self, name: str, original: str) -> str:
        key = ("p", name, len(original), hash(original), self._english)
        hit = self._memo.recall(key)
        if hit is not None:
            return hit[0]
        body = self._redactor.redact(original)  # the file and the head alike
        path = self._folder.write(name, body)
        # the first lines of a prefix: enough for HEAD_CHARS (a separator is at most 2
        # characters), without splitting all of a large result into lines
        head = "\n".join(body[: 4 * HEAD_CHARS].splitlines()[:HEAD_LINES])[:HEAD_CHARS]
        pointer = self._pointer_text(body, path, head)
        self._memo.remember(key, pointer, path)
        return pointer

    def _pointer_text(self, body: str, path: Path, head: str) -> str:
        if self._english:
            return (
                f"[An older tool output ({len(body)} characters) was moved out of the context;"
                f" all of it is kept in {path} . Read that file when you need it. It begins:"
                f"\n{head}\n…]"
            )
        return (
            f"[较早的工具输出({len(body)} 字符)已移出上下文,原文完整保存在 {path} ,"
            f"需要时读取该文件。开头:\n{head}\n…]"
        )
