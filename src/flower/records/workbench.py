"""The workbench: where agents put what should outlive one reply.

Long tool results, scripts worth running twice and key decisions go to disk instead of
staying in the conversation, so the context stays small and the next session (or the
next agent) still finds them. The workbench is three folders and an index; the index is
put into the session's system prompt, so an agent knows from its first turn what is
already there.

The index does not reach subagents (they have their own system prompt), which is why the
coordinator must restate "long results go to artifacts/" and "the workbench is at <path>"
in every task it hands out, and why flower's Claude Code plugin ships a skill with the
conventions.

Every file flower itself writes here goes through :meth:`Workbench.place` and
:func:`atomic_write`: a name that a tool or a step supplies can never move the write out
of the workbench (``..``, absolute paths and symlinked folders are refused), a reader
never sees a half-written file, and no known secret value reaches the disk
(:mod:`flower.kernel.redact`).
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from flower.kernel.files import NAME_MAX_BYTES as NAME_MAX_BYTES  # re-exported
from flower.kernel.files import LinkedWrite as LinkedWrite  # re-exported
from flower.kernel.files import WorkbenchError as WorkbenchError  # re-exported
from flower.kernel.files import atomic_write as atomic_write  # re-exported
from flower.kernel.files import check_write as check_write  # re-exported
from flower.kernel.files import keep_out_of_git as keep_out_of_git  # re-exported
from flower.kernel.files import register
from flower.kernel.files import relative_posix as relative_posix  # re-exported
from flower.kernel.files import safe_name as safe_name  # re-exported
from flower.records.bench_index import DESC_HEAD_CHARS as DESC_HEAD_CHARS  # re-exported
from flower.records.bench_index import DESC_LINES as DESC_LINES  # re-exported
from flower.records.bench_index import DESC_MAX as DESC_MAX  # re-exported
from flower.records.bench_index import describe, render_index, rules_block, size_text
from flower.records.bench_index import describe_text as describe_text  # re-exported
from flower.records.filelock import LOCK_SUFFIX

#: The three folders, in the order the index lists them.
FOLDERS = ("scripts", "artifacts", "notes")
INDEX_NAME = "INDEX.md"
SPILL_DIRNAME = "spill"
#: Below ``notes/`` old handoffs and archived lineage live here; they are history, not
#: something the next agent needs to be pointed at.
ARCHIVE_DIRNAME = "archive"


@dataclass
class Workbench:
    """Three folders and an index for the things an agent should keep on disk.

    Attributes:
        workspace: The project folder the agents work in.
        dirname: The workbench folder inside ``workspace`` when ``home`` is not given
            (a relative path without ``..``).
        max_index_entries: Most files the index lists (the newest win); the rest are
            counted in one line, so a busy workbench cannot flood the system prompt.
        home: Put the workbench here instead, typically outside the repository: an
            agent isolated in a git worktree cannot write into the shared checkout, so
            isolation needs an outside workbench (``starter_flow(isolate=True)`` uses
            ``<ws>.parent/.flower-<ws.name>``).
    """

    workspace: Path
    dirname: str = ".flower"
    max_index_entries: int = 40
    home: Path | None = None

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).expanduser().absolute()
        rel = Path(self.dirname)
        if not self.dirname or rel.is_absolute() or ".." in rel.parts:
            raise WorkbenchError(
                f"Workbench dirname {self.dirname!r} must be a relative folder name inside the"
                " workspace; to put the workbench elsewhere pass home=<absolute path>"
            )
        if self.max_index_entries < 0:
            raise WorkbenchError("Workbench max_index_entries must be 0 or more")
        if self.home is not None:
            self.home = Path(self.home).expanduser().absolute()
        register(self)

    # --- where things are -------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The workbench folder (absolute)."""
        return self.home if self.home is not None else self.workspace / self.dirname

    @property
    def scripts(self) -> Path:
        return self.root / "scripts"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def notes(self) -> Path:
        return self.root / "notes"

    @property
    def spill(self) -> Path:
        """Where ``spill_guard`` puts over-long tool results (not indexed)."""
        return self.root / SPILL_DIRNAME

    @property
    def index(self) -> Path:
        return self.root / INDEX_NAME

    @property
    def external(self) -> bool:
        """True when the workbench is outside the workspace, so relative paths miss it."""
        return not _is_within(self.root.resolve(), self.workspace.resolve())

    def display(self, path: Path | None = None) -> str:
        """How to name ``path`` (default: the root) to an agent: relative when it lives in
        the workspace, absolute when the workbench is external."""
        target = self.root if path is None else path
        if not self.external:
            for base, here in (
                (self.workspace, target),
                (self.workspace.resolve(), target.resolve()),
            ):
                if _is_within(here, base):
                    return here.relative_to(base).as_posix()
        return str(target)

    def contains(self, path: str | Path) -> bool:
        """Whether ``path`` (relative to the workspace) resolves inside the workbench."""
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        try:
            resolved = candidate.resolve()
        except (OSError, RuntimeError):
            return False
        return _is_within(resolved, self.root.resolve())

    # --- writing safely ---------------------------------------------------------------

    def ensure(self) -> Path:
        """Create the root and the three folders (and ``spill/``); return the root.

        A folder that is a symlink is left alone, with a one-line note on stderr: flower
        writes nothing through it (not even the spill folder's ``.gitignore``), and a
        session must still start.
        """
        for folder in (*FOLDERS, SPILL_DIRNAME):
            path = self.place(folder)
            if path.is_symlink():
                _note_link(path)
                continue
            path.mkdir(parents=True, exist_ok=True)
            if folder == SPILL_DIRNAME:
                keep_out_of_git(path)
        return self.root

    def place(self, *parts: str) -> Path:
        """A path below the root for flower to write, built from names others supply.

        Raises :class:`WorkbenchError` for no name, an absolute part, a ``..`` part, or a
        folder below the root that is a symlink (wherever it leads: even a link to another
        folder of the workspace would put flower's file where the link says, and an agent
        can plant one). The root itself is the user's choice when given as ``home=``;
        inside the workspace it must stay inside (an agent could replace ``.flower`` with
        a link). A link in the last place is allowed: :func:`atomic_write` replaces it,
        never follows it.
        """
        rel = Path()
        for part in parts:
            p = Path(part)
            if p.is_absolute() or p.drive or ".." in p.parts:
                raise WorkbenchError(
                    f"{part!r} would leave the workbench {self.root}: use a plain relative name"
                )
            rel = rel / p
        target = self.root / rel
        root = self.root.resolve()
        if self.home is None and not _is_within(root, self.workspace.resolve()):
            raise WorkbenchError(
                f"{self.root} leads outside the workspace {self.workspace} (a symlink?);"
                " remove the link, or pass home= to keep the workbench elsewhere on purpose"
            )
        # The folder must resolve inside; the last name itself may be a planted link,
        # since atomic_write replaces a link instead of writing through it.
        if not rel.parts or not _is_within(target.parent.resolve() / target.name, root):
            raise WorkbenchError(
                f"{self.root / rel} leads outside the workbench {self.root} (a symlink?);"
                " remove the link and try again"
            )
        for depth in range(1, len(rel.parts)):
            folder = self.root.joinpath(*rel.parts[:depth])
            if folder.is_symlink():
                raise WorkbenchError(
                    f"{folder} is a symlink: flower writes nothing through a link in the"
                    " workbench; make it a real folder and try again"
                )
        return target

    def write(self, text: str, *parts: str) -> Path:
        """Write ``text`` to ``place(*parts)`` atomically and return the path."""
        target = self.place(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text)
        return target

    # --- the index --------------------------------------------------------------------

    def entries(self) -> list[tuple[str, str, float]]:
        """``(relative path, description, mtime)`` of every indexed file, newest first."""
        return [(rel, _describe(path, size), mtime) for rel, path, size, mtime in self._files()]

    def _files(self) -> list[tuple[str, Path, int, float]]:
        """``(relative path, path, size, mtime)`` of every indexed file, newest first;
        nothing is opened (describing is left to what is shown)."""
        found: list[tuple[str, Path, int, float]] = []
        root = self.root
        for folder in FOLDERS:
            base = root / folder
            if not base.is_dir() or base.is_symlink():
                continue
            for dirpath, dirnames, filenames in os.walk(base):
                here = Path(dirpath)
                dirnames[:] = sorted(
                    d
                    for d in dirnames
                    if not d.startswith(".")
                    and not (here == root / "notes" and d == ARCHIVE_DIRNAME)
                    and not (here / d).is_symlink()
                )
                for name in filenames:
                    if name.startswith(".") or name.endswith((".tmp", LOCK_SUFFIX)):
                        continue  # hidden, half-written, or a file's lock (filelock)
                    path = here / name
                    try:
                        st = path.lstat()
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    found.append((path.relative_to(root).as_posix(), path, st.st_size, st.st_mtime))
        found.sort(key=lambda e: (-e[3], e[0]))
        return found

    def render_index(self) -> str:
        """The index as Markdown: the newest ``max_index_entries`` files, by folder. Only
        those are opened for a description: every write into the workbench refreshes the
        index, and a busy workbench must not make that slow."""
        files = self._files()
        shown = [
            (rel, _describe(path, size)) for rel, path, size, _ in files[: self.max_index_entries]
        ]
        return render_index(shown, FOLDERS, total=len(files))

    def refresh(self) -> str:
        """Rebuild ``INDEX.md`` from what is on disk; return its text."""
        self.ensure()
        text = self.render_index()
        path = self.place(INDEX_NAME)
        try:
            if path.is_file() and not path.is_symlink() and path.read_text("utf-8") == text:
                return text
        except (OSError, UnicodeDecodeError):
            pass
        atomic_write(path, text)
        return text

    def prompt_block(self) -> str:
        """What goes into a session's system prompt: where the workbench is, its three
        rules and the current index."""
        index = self.refresh()
        rules = rules_block(
            where=self.display(),
            external=self.external,
            scripts=self.display(self.scripts),
            artifacts=self.display(self.artifacts),
            notes=self.display(self.notes),
            index=self.display(self.index),
        )
        return rules + index


#: Links already reported by :meth:`Workbench.ensure` (one note per link and process:
#: every write into the workbench refreshes the index, and with it ensure()).
_noted_links: set[str] = set()


def _note_link(path: Path) -> None:
    if str(path) in _noted_links:
        return
    _noted_links.add(str(path))
    print(
        f"flower: {path} is a symlink; flower writes nothing through it"
        " (make it a real folder to use it)",
        file=sys.stderr,
    )


def _describe(path: Path, size: int) -> str:
    """An index line's description: the file's own, else its size."""
    return describe(path) or size_text(size)


def _is_within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
