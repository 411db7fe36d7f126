"""``GET /doc/{name}``: the run's documents read and rendered off the server's loop, one
render per document at a time, and none twice for the same version.

A render can cost up to a second of CPU (``render.py`` stops it there) in the process
the run shares, and every click or reload of a page asks for one: the requests once
queued without bound, each rendering again. Here a document being rendered is rendered
once for everyone asking meanwhile (they share the answer), so at most one render per
document (four documents) waits or runs, two at a time in threads of their own; and a
version already rendered (the same file, size and modification time: ``docs.Read``'s
stamp) is answered from memory.
"""

from __future__ import annotations

import asyncio
import html
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from flower_plugin_web.docs import Read, read_document
from flower_plugin_web.render import shown

#: A document's answer: ``(status, html)``.
Answer = tuple[int, str]


class Documents:
    """The documents of one page's server; :meth:`get` on its loop only."""

    def __init__(self, workers: int = 2) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="flower-web-doc")
        self.flying: dict[str, asyncio.Future[Answer]] = {}  # by name: the render under way
        self.kept: dict[str, tuple[tuple[int, int, int, int], Answer]] = {}  # by name
        self.renders = 0  # how many were rendered (the cache and sharing left out)

    async def get(self, workbench: Path, name: str, limit: int) -> Answer:
        """Document ``name`` as HTML; whoever asks while it is being read and rendered
        gets that same answer."""
        flying = self.flying.get(name)
        if flying is None:
            loop = asyncio.get_running_loop()
            flying = loop.run_in_executor(self.pool, self._answer, workbench, name, limit)
            self.flying[name] = flying
            flying.add_done_callback(lambda _: self.flying.pop(name, None))
        return await asyncio.shield(flying)  # a page gone does not cancel the others'

    def _answer(self, workbench: Path, name: str, limit: int) -> Answer:
        """In a worker thread: read, then render unless this version was rendered."""
        read = read_document(workbench, name, limit)
        if read.text is None or read.stamp is None:
            status = 403 if read.refused else 200
            return status, f'<p class="dim">({html.escape(read.note)})</p>'
        kept = self.kept.get(name)
        if kept is not None and kept[0] == read.stamp:
            return kept[1]
        answer = 200, _rendered(read, limit)
        self.renders += 1
        self.kept[name] = (read.stamp, answer)
        return answer


def _rendered(read: Read, limit: int) -> str:
    assert read.text is not None
    body, why = shown(read.text)
    notes = []
    if read.cut:
        mb = 1024 * 1024
        notes.append(f"showing the first {limit / mb:.0f} MB of {read.size / mb:.1f} MB")
    if why:
        notes.append(why)
    head = "".join(f'<p class="dim">({html.escape(note)})</p>' for note in notes)
    return head + body
