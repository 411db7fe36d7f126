"""The glance gate against the project's two corpora (tests/corpora/).

``decide`` lets a coordinator run a command unsupervised, so one wrong ``True`` is a hole:
the dangerous corpus (writes, execution, network, secrets, never-returning commands...) must be
refused line for line, with no tolerance. A wrong ``False`` only costs a worker launch, so the
glance corpus (what coordinators really type to look around) has a small budget of refusals.

Each corpus is one test with a full listing rather than hundreds of test ids: a failure shows
every accepted dangerous line (with its corpus line number and section) or every refused glance
(with ``explain()``'s reason when the module has one) in one message.

Only the public decision is used (``decide``, ``explain`` if present); the rules' internals may
change under these tests. ``decide`` rather than ``is_ephemeral``: a crash inside the checker is
reported as such instead of passing silently as a fail-closed ``False``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from flower.roles import ephemeral

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
DANGEROUS = CORPORA / "dangerous.txt"
GLANCES = CORPORA / "glances.txt"

MIN_DANGEROUS = 500
MIN_GLANCES = 150
#: share of the glance corpus the gate may refuse (a refusal costs a worker, not safety)
MAX_REFUSED_SHARE = 0.02


class CorpusError(ValueError):
    """A corpus file breaks its format (a duplicate line): fix the file, not the test."""


@dataclass(frozen=True)
class Entry:
    """One command of a corpus, with where it stands (for failure listings)."""

    command: str
    line: int
    section: str

    def where(self) -> str:
        section = f" [{self.section}]" if self.section else ""
        return f"line {self.line}{section}"


def load_corpus(path: Path) -> list[Entry]:
    """The commands of ``path``: one per line, blank lines and ``#`` comments skipped.

    A ``# == name ==`` comment starts a section (kept for the listings). Surrounding whitespace
    is not part of a command. A command that appears twice is an error: duplicates would only
    inflate the counts the tests rely on.
    """
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    duplicates: list[str] = []
    section = ""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        command = raw.strip()
        if command.startswith("# =="):
            section = command.strip("# =").strip()
            continue
        if not command or command.startswith("#"):
            continue
        if command in seen:
            duplicates.append(f"  line {number} repeats line {seen[command]}: {command}")
            continue
        seen[command] = number
        entries.append(Entry(command, number, section))
    if duplicates:
        raise CorpusError(f"{path.name} has duplicate commands:\n" + "\n".join(duplicates))
    return entries


def _explain() -> Callable[[str], str | None] | None:
    """``ephemeral.explain`` when the module has it (it is being added), else ``None``."""
    explain = getattr(ephemeral, "explain", None)
    return explain if callable(explain) else None


def _verdicts(entries: list[Entry]) -> tuple[list[Entry], list[Entry], list[tuple[Entry, str]]]:
    """Split ``entries`` into accepted, refused and crashed (with the exception) by ``decide``."""
    accepted: list[Entry] = []
    refused: list[Entry] = []
    crashed: list[tuple[Entry, str]] = []
    for entry in entries:
        try:
            verdict = ephemeral.decide(entry.command)
        except Exception as exc:  # a checker bug: listed, never counted as a decision
            crashed.append((entry, f"{type(exc).__name__}: {exc}"))
            continue
        (accepted if verdict is True else refused).append(entry)
    return accepted, refused, crashed


def test_loader_skips_comments_and_blank_lines_and_keeps_sections(tmp_path: Path) -> None:
    """Comments group and attribute lines; they must never be judged as commands."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("# intro\n\n# == reads ==\n  ls -la  \n# note\ngit status\n")
    assert load_corpus(corpus) == [Entry("ls -la", 4, "reads"), Entry("git status", 6, "reads")]


def test_loader_refuses_duplicates(tmp_path: Path) -> None:
    """A repeated line would count twice towards the sizes and the 2 % budget."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("ls\ngit status\n ls\n")
    with pytest.raises(CorpusError, match="line 3 repeats line 1: ls"):
        load_corpus(corpus)


def test_corpora_are_large_enough() -> None:
    """Small lists prove little: the floors keep pruning from hollowing the corpora out."""
    assert len(load_corpus(DANGEROUS)) >= MIN_DANGEROUS
    assert len(load_corpus(GLANCES)) >= MIN_GLANCES


def test_corpora_do_not_overlap() -> None:
    """A command cannot be both harmless and dangerous: one of the two files is wrong."""
    dangerous = {entry.command: entry for entry in load_corpus(DANGEROUS)}
    both = [entry for entry in load_corpus(GLANCES) if entry.command in dangerous]
    assert not both, "in both corpora (glances.txt / dangerous.txt):\n" + "\n".join(
        f"  {e.where()} / {dangerous[e.command].where()}: {e.command}" for e in both
    )


def test_no_dangerous_command_is_accepted() -> None:
    """One accepted line is one way for a coordinator to act without a worker: none may pass."""
    entries = load_corpus(DANGEROUS)
    accepted, _, crashed = _verdicts(entries)
    lines = [f"decide() accepted {len(accepted)} of {len(entries)} dangerous commands:"]
    lines += [f"  {entry.where()}: {entry.command}" for entry in accepted]
    if crashed:
        lines.append(
            f"decide() crashed on {len(crashed)} (a checker bug, even if it fails closed):"
        )
        lines += [f"  {entry.where()}: {entry.command}  -> {error}" for entry, error in crashed]
    assert not accepted and not crashed, "\n".join(lines)


def test_realistic_glances_are_accepted() -> None:
    """A refused glance costs a worker launch; more than a few means the gate is unusable."""
    entries = load_corpus(GLANCES)
    _, refused, crashed = _verdicts(entries)
    budget = math.floor(len(entries) * MAX_REFUSED_SHARE)
    explain = _explain()
    lines = [
        f"decide() refused {len(refused)} of {len(entries)} glances "
        f"(budget {budget} = {MAX_REFUSED_SHARE:.0%}):"
    ]
    for entry in refused:
        reason = explain(entry.command) if explain else None
        lines.append(f"  {entry.where()}: {entry.command}" + (f"  -- {reason}" if reason else ""))
    if crashed:
        lines.append(f"decide() crashed on {len(crashed)}:")
        lines += [f"  {entry.where()}: {entry.command}  -> {error}" for entry, error in crashed]
    assert len(refused) <= budget and not crashed, "\n".join(lines)
