"""What the session store says in a resumed context follows the language in effect at load
time: a stale one-off result, a call killed mid-run, an interrupted call, a large old
output moved to a file. The policies keep the seed's Chinese as their defaults; a text
set on a policy is said as given, in any language."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from flower.kernel.lang import using
from flower.stores.prune import (
    INTERRUPTED_NOTE,
    INTERRUPTED_NOTE_EN,
    ORPHAN_NOTE,
    ORPHAN_NOTE_EN,
    PrunePolicy,
    PruningSessionStore,
)
from flower.stores.trim import EphemeralPolicy, TrimPolicy

from ..stores.builder import Transcript, results
from ..stores.test_heal_orphans import orphan

pytestmark = pytest.mark.anyio

KEY: Any = {"project_key": "proj", "session_id": "s1"}  # the SDK's SessionKey


def transcript() -> tuple[Transcript, dict[str, str]]:
    t = Transcript()
    t.prompt("keep an eye on the repo")
    ids = {"stale": t.call("git status", "On branch main")}
    for n in range(8):
        t.call("git log -1", f"commit {n}")
        t.say(f"noted {n}")
    ids["stopped"] = t.interrupted("make test")
    ids["big"] = t.call("make build", "x" * 5000)
    for n in range(22):
        t.call(f"make step{n}", "ok")
    (ids["cut"],) = orphan(t, "make deploy")
    t.last_prompt()
    return t, ids


async def load(tmp_path: Path, lang: str, **policies: Any) -> dict[str, Any]:
    t, ids = transcript()
    store = PruningSessionStore(
        tmp_path / f"{lang}.db", workspace=tmp_path, policy=TrimPolicy(), **policies
    )
    try:
        lines: Any = copy.deepcopy(t.lines)
        await store.append(KEY, lines)
        with using(lang):
            loaded: Any = await store.load(KEY)
    finally:
        store.close()
    assert loaded is not None
    got = results(loaded)
    return {name: str(got[call]) for name, call in ids.items()}


async def test_the_store_speaks_the_language_of_the_load(tmp_path: Path) -> None:
    zh, en = await load(tmp_path, "zh"), await load(tmp_path, "en")
    assert "的结果已过期" in zh["stale"] and "is out of date" in en["stale"]
    assert en["stale"].startswith("[The result of git status is out of date (from ")
    assert (zh["cut"], en["cut"]) == (ORPHAN_NOTE, ORPHAN_NOTE_EN)
    assert (zh["stopped"], en["stopped"]) == (INTERRUPTED_NOTE, INTERRUPTED_NOTE_EN)
    assert "已移出上下文" in zh["big"] and "moved out of the context" in en["big"]


async def test_a_text_set_on_a_policy_is_said_as_given(tmp_path: Path) -> None:
    mine = await load(
        tmp_path,
        "en",
        ephemeral=EphemeralPolicy(text="[{cmd}: stale, {age} ago]"),
        prune=PrunePolicy(note="[stopped]", orphan_note="[lost]"),
    )
    assert mine["stale"].startswith("[git status: stale, ")
    assert (mine["stopped"], mine["cut"]) == ("[stopped]", "[lost]")
