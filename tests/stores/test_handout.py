"""A copy of a loaded view, written back under another key (a fork), is stored as the
original: contents and links as stored, the lines the policies left out put back, the
lines they made up left out. Synthetic transcripts in the CLI's shape; the real CLI's
fork is ``test_fork_e2e.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flower.stores.handout import Handouts
from flower.stores.prune import ORPHAN_NOTE, PrunePolicy, PruningSessionStore
from flower.stores.trim import EphemeralPolicy, TrimPolicy

from .builder import Transcript, chain, results

pytestmark = pytest.mark.anyio

A = {"project_key": "p", "session_id": "sess-a"}
B = {"project_key": "p", "session_id": "sess-b"}


def messy() -> Transcript:
    """Every policy has something to do: two denials (one dropped), three ``ls`` (two
    expire), a large old result (spilled), a storm (dropped), a call left without a
    result (healed), and a metadata line."""
    t = Transcript()
    t.prompt("go")
    t.denied("rm -rf build")
    t.call("seq 1 3000", "\n".join(str(n) for n in range(3000)))
    t.call("make install", "ok")
    del t.lines[-1]  # this call's result was never written (a killed process)
    t._parent = t.lines[-1]["uuid"]
    t.last_prompt()  # metadata between the lines
    t.prompt("go on")
    for _ in range(3):
        t.call("ls", "a.txt b.txt")
    t.denied("rm -rf dist")
    t.say("carrying on")
    t.storm()  # the transcript ends in a storm: left out after the last copied line
    return t


@pytest.fixture
def store(tmp_path: Path, workspace: Path) -> Any:
    opened = PruningSessionStore(
        tmp_path / "s.db",
        workspace=workspace,
        policy=TrimPolicy(keep_recent=2),
        ephemeral=EphemeralPolicy(keep_recent=1),
        prune=PrunePolicy(keep_denials=1),
    )
    yield opened
    opened.close()


def fork_copy(view: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    """What the CLI mirrors for a fork: every line of the view with a uuid, the new
    session id, its own prompt id."""
    return [
        {**line, "sessionId": session_id, "promptId": "p-new"} for line in view if "uuid" in line
    ]


async def test_a_fork_copy_is_stored_as_the_original_history(store: Any) -> None:
    await store.append(A, messy().lines)
    original = await store.stored(A)
    view = await store.load(A)
    report = store.last_report
    assert report["denials"] == 1 and report["expired"] == 2 and report["trimmed"] == 1
    assert report["api_errors"] == 3 and report["orphans"] == 1
    healed = [line for line in view if line.get("flowerHealed")]
    assert len(healed) == 1

    await store.append(B, fork_copy(view, "sess-b"))
    copied = await store.stored(B)

    handed = {line["uuid"] for line in view if "uuid" in line}
    renewed = {"promptId": "p-new"}  # what the CLI set on the lines it copied stays
    expected = [
        {**row, "sessionId": "sess-b", **(renewed if row["uuid"] in handed else {})}
        for row in original
        if "uuid" in row
    ]
    assert copied == expected  # every stored line, as stored, in order; no made-up line
    # the fork's next load heals the same call with the same line (same uuid): the lines
    # the CLI hung under the healed result keep their parent
    again = await store.load(B)
    assert [line["uuid"] for line in again if line.get("flowerHealed")] == [healed[0]["uuid"]]
    assert chain(again) == [line["uuid"] for line in again if "uuid" in line]
    assert ORPHAN_NOTE in results(again).values()
    assert await store.stored(A) == original  # the source is untouched


async def test_lines_stored_after_the_load_are_not_part_of_the_fork(store: Any) -> None:
    t = messy()
    await store.append(A, t.lines)
    view = await store.load(A)
    later = {"type": "user", "uuid": "later", "parentUuid": t.lines[-2]["uuid"],
             "message": {"role": "user", "content": "written by another process"}}  # fmt: skip
    await store.append(A, [later])
    await store.append(B, fork_copy(view, "sess-b"))
    assert "later" not in {line.get("uuid") for line in await store.stored(B)}


def test_only_copies_under_another_key_of_a_remembered_load_change() -> None:
    handouts = Handouts(keep=1)
    row = {"type": "assistant", "uuid": "u1", "parentUuid": None, "message": {"content": "v"}}
    stored = {"type": "assistant", "uuid": "u1", "parentUuid": None, "message": {"content": "s"}}
    a, b, c = ("p", "a", ""), ("p", "b", ""), ("p", "c", "")

    def read(key: tuple[str, str, str]) -> list[dict[str, Any]]:
        return [stored] if key == a else []

    handouts.record(a, 1, [row])
    same = [dict(row)]
    assert handouts.restore(a, same, read) is same  # its own key: a duplicate, as it comes
    stranger = [{"type": "user", "uuid": "zz"}]
    assert handouts.restore(b, stranger, read) is stranger
    assert handouts.restore(b, [{**row, "sessionId": "b"}], read) == [{**stored, "sessionId": "b"}]
    elsewhere = [dict(row)]  # another transcript (a subagent's) or project: not a fork
    assert handouts.restore(("p", "b", "subagents/agent-x"), elsewhere, read) is elsewhere
    assert handouts.restore(("q", "b", ""), elsewhere, read) is elsewhere
    handouts.record(c, 0, [])  # keep=1: the load of a is forgotten
    copy = [{**row, "sessionId": "b"}]
    assert handouts.restore(b, copy, read) is copy


async def test_a_made_up_line_is_stored_once_a_line_hangs_under_it(store: Any) -> None:
    """A session killed mid-tool: the view ends in flower's healed result, and the CLI
    hangs its next prompt under it, in the session itself or in a fork. The healed line
    goes into the store just before, so the stored chain needs no healing to hold."""
    t = Transcript()
    t.prompt("go")
    t.call("make install", "ok")
    del t.lines[-1]  # killed before the result was written
    await store.append(A, t.lines)
    view = await store.load(A)
    (healed,) = [line for line in view if line.get("flowerHealed")]
    for key, sid in ((B, "sess-b"), (A, "sess-a")):
        if key is B:
            await store.append(B, fork_copy(view, "sess-b"))
        after = {"type": "user", "uuid": f"next-{sid}", "parentUuid": healed["uuid"],
                 "sessionId": sid, "message": {"role": "user", "content": "go on"}}  # fmt: skip
        await store.append(key, [after])
        rows = await store.stored(key)
        assert [r["uuid"] for r in rows if r.get("flowerHealed")] == [healed["uuid"]]
        assert chain(rows)[-2:] == [healed["uuid"], f"next-{sid}"]  # no broken link
        assert chain(rows)[0] == t.lines[0]["uuid"]
        await store.append(key, [{**after, "uuid": f"again-{sid}"}])  # nothing twice
        assert len([r for r in await store.stored(key) if r.get("flowerHealed")]) == 1
