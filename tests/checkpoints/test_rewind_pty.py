"""``flower rewind``'s questions on a real terminal, answered with real keystrokes.

``flower rewind N`` on a terminal asks before it overwrites what someone other than
flower changed since the newest checkpoint (No leaves everything as it was), then asks
what to tell the agents (a line, or Enter: the round again as it was). The run is made
without a model (a lineage naming the run, its store, checkpoints taken on the real git
store as the workflow takes them) and ``--no-run`` stops after going back: each process
costs a second, and what is asserted is the world: the files, the checkpoints, the
rewind left for the step (``rewind.json``), the ledger's row in the store and its notes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from flower.records.checkpoints import Checkpoint, Checkpoints
from flower.stores.database import StoreDatabase
from flower.workflow.rewind import pending

from ..commands.terminal import Flower

pytestmark = pytest.mark.e2e

RUN = "run-pty-rewind"
EXCLUDE = ["runs", ".flower"]
WORDS = "REWIND-WORDS 这次别删 keep.txt"
ROUND2 = "ROUND-2 PROMPT: carry on"


@pytest.fixture(autouse=True)
def _own_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLOWER_STORE_URL", raising=False)  # the run folder's sessions.db


def tree_hash(ws: Path) -> str:
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(ws):
        rel = Path(folder).relative_to(ws)
        dirs[:] = sorted(d for d in dirs if not (rel == Path(".") and d in ("runs", ".flower")))
        h.update(f"D {rel.as_posix()}\n".encode())
        for name in sorted(files):
            h.update(f"F {rel / name} ".encode() + (Path(folder) / name).read_bytes())
    return h.hexdigest()


def a_run(ws: Path) -> Checkpoints:
    """Three rounds as checkpoints: round 2 deleted keep.txt and wrote new.txt, round 3
    wrote r3.txt; then the human wrote human.txt, after the newest checkpoint."""
    runs = ws / "runs"
    runs.mkdir(parents=True)
    (runs / "lineage.json").write_text(json.dumps({"workspace": str(ws), "run": RUN}))
    StoreDatabase(runs / "sessions.db").close()  # the run's store, its ledger empty
    store = Checkpoints(ws, runs, RUN)

    def take(kind: str, round_: int | None = None, prompt: str | None = None) -> None:
        step = "设定目标" if kind == "step" else "干活"
        label = step if kind == "step" else f"干活#round{round_}" if round_ else "end"
        store.take(Checkpoint(n=0, kind=kind, step=step, label=label, round=round_,
                              prompt=prompt, exclude=EXCLUDE))  # fmt: skip

    (ws / "keep.txt").write_text("the human's file\n")
    take("step")
    take("round", 1, "ROUND-1 PROMPT")
    (ws / "hello.txt").write_text("hi")
    take("round", 2, ROUND2)
    (ws / "keep.txt").unlink()
    (ws / "new.txt").write_text("new")
    take("round", 3, "ROUND-3 PROMPT")
    (ws / "r3.txt").write_text("three")
    take("end")
    (ws / "human.txt").write_text("written after the run by the human\n")
    return store


def refs(store: Checkpoints) -> str:
    return subprocess.run(
        ["git", f"--git-dir={store.git_dir}", "for-each-ref"], capture_output=True, text=True
    ).stdout


def rewinds(ws: Path) -> list[dict[str, object]]:
    ledger = StoreDatabase(ws / "runs" / "sessions.db")
    try:
        return [r for r in ledger.rulings(RUN) if r["kind"] == "rewind"]
    finally:
        ledger.close()


def test_rewind_asks_before_overwriting_then_what_to_tell_the_agents(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    store = a_run(ws)
    before, ref = tree_hash(ws), refs(store)

    # No: the human's file is named, nothing changes at all
    refused = Flower("-w", str(ws), "rewind", "2", "--no-run", cwd=tmp_path)
    refused.expect(r"Rewind anyway\? \[y/N\]", timeout=30)
    assert "human.txt (added)" in refused.text and "--undo brings it back" in refused.text
    refused.type("n")
    assert refused.finish(timeout=30) == 0, refused.text[-2000:]
    assert "nothing changed" in refused.text
    assert "What should the agents be told" not in refused.text
    assert tree_hash(ws) == before and refs(store) == ref
    assert pending(ws / "runs") is None and rewinds(ws) == []

    # Yes, then a line for the agents: round 2's folder, the rewind left for its step
    back = Flower("-w", str(ws), "rewind", "2", "--no-run", cwd=tmp_path)
    back.expect(r"Rewind anyway\? \[y/N\]", timeout=30)
    back.type("y")
    back.expect(r"What should the agents be told\? \(a line; Enter = retry the round", timeout=30)
    back.type(WORDS)
    assert back.finish(timeout=30) == 0, back.text[-2000:]
    assert "rewound to round 2 (checkpoint #3)" in back.text, back.text[-2000:]
    assert (ws / "keep.txt").read_text() == "the human's file\n"
    assert (ws / "hello.txt").read_text() == "hi"
    assert not any((ws / f).exists() for f in ("new.txt", "r3.txt", "human.txt"))
    left = pending(ws / "runs")
    assert left is not None
    assert (left["step"], left["words"], left["prompt"], left["checkpoint"], left["present"]) == (
        "干活", WORDS, ROUND2, 3, 6
    )  # fmt: skip
    (row,) = rewinds(ws)
    assert (row["state"], row["said"], row["round"]) == ("#3", WORDS, 2)
    notes = (ws / ".flower" / "notes" / "判定记录.md").read_text(encoding="utf-8")
    assert "倒回 #3" in notes and WORDS in notes
    every = store.all()
    assert [c.kind for c in every][-1] == "rewind" and every[-1].became == every[2].tree

    # --undo: the folder is as the rewind left it, so nothing to ask; human.txt is back
    undone = Flower("-w", str(ws), "rewind", "--undo", cwd=tmp_path)
    assert undone.finish(timeout=30) == 0, undone.text[-2000:]
    assert "Rewind anyway" not in undone.text and "What should" not in undone.text
    assert tree_hash(ws) == before

    # Enter: the round again as it was (no words), and no question about the folder
    again = Flower("-w", str(ws), "rewind", "2", "--no-run", cwd=tmp_path)
    again.expect(r"What should the agents be told\?", timeout=30)
    again.type("")
    assert again.finish(timeout=30) == 0, again.text[-2000:]
    assert "Rewind anyway" not in again.text
    left = pending(ws / "runs")
    assert left is not None and (left["words"], left["prompt"]) == ("", ROUND2)
    assert not (ws / "human.txt").exists() and (ws / "keep.txt").exists()
    assert [r["said"] for r in rewinds(ws)] == [WORDS, "", ""]
