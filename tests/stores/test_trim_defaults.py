"""``TrimmingSessionStore(path, workspace, policy=None, ephemeral=None)``: the seed's
signature, and what ``None`` means: the default policies, both on."""

from __future__ import annotations

import copy
import inspect
from pathlib import Path
from typing import Any

import pytest

from flower.stores.trim import EphemeralPolicy, TrimmingSessionStore, TrimPolicy

from .builder import Transcript, results

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}


def test_the_signature_is_the_seeds() -> None:
    params = list(inspect.signature(TrimmingSessionStore).parameters.values())
    assert [(p.name, p.default) for p in params[:4]] == [
        ("path", inspect.Parameter.empty),
        ("workspace", inspect.Parameter.empty),
        ("policy", None),
        ("ephemeral", None),
    ]
    assert all(p.default is not inspect.Parameter.empty for p in params[2:])  # extras optional


def test_none_means_the_default_policies(tmp_path: Path, workspace: Path) -> None:
    for store in (
        TrimmingSessionStore(tmp_path / "a.db", workspace),
        TrimmingSessionStore(tmp_path / "b.db", workspace, None, None),
        TrimmingSessionStore(tmp_path / "c.db", str(workspace), policy=None, ephemeral=None),
    ):
        assert store.policy == TrimPolicy() and store.policy.enabled
        assert store.ephemeral == EphemeralPolicy() and store.ephemeral.enabled
        assert store.workspace == workspace and store.last_report == {}
        assert store.spill_dir == (workspace / ".flower" / "spill").resolve()
        store.close()


def busy() -> tuple[Transcript, list[str], list[str]]:
    """Seven ``git status`` results (one-off, one too many to keep) and 22 large build logs."""
    t = Transcript()
    t.prompt("build it")
    statuses = [t.call("git status", f"On branch main, change {n}") for n in range(7)]
    logs = [t.call("make build", f"log {n}\n" + "x" * 3000) for n in range(22)]
    return t, statuses, logs


async def load(store: TrimmingSessionStore, t: Transcript) -> dict[str, Any]:
    await store.append(KEY, copy.deepcopy(t.lines))
    out = await store.load(KEY)
    assert out is not None
    return results(out)


async def test_the_defaults_load_exactly_as_the_explicit_default_policies(
    tmp_path: Path, workspace: Path
) -> None:
    t, statuses, logs = busy()
    default = TrimmingSessionStore(tmp_path / "a.db", workspace)
    explicit = TrimmingSessionStore(tmp_path / "b.db", workspace, TrimPolicy(), EphemeralPolicy())
    off = TrimmingSessionStore(
        tmp_path / "c.db", workspace, TrimPolicy(enabled=False), EphemeralPolicy(enabled=False)
    )
    got = await load(default, t)
    assert got == await load(explicit, t)
    assert default.last_report == explicit.last_report
    # and they do something: the oldest status expired, the oldest large logs trimmed
    assert "已过期" in got[statuses[0]] and got[statuses[-1]] == "On branch main, change 6"
    assert got[logs[0]] != f"log 0\n{'x' * 3000}" and got[logs[-1]] == f"log 21\n{'x' * 3000}"
    report = default.last_report  # trimmed, or masked where observation masking is on
    assert report.get("expired") == 1 and report.get("trimmed", 0) + report.get("masked", 0) > 0
    untouched = await load(off, t)
    assert untouched[statuses[0]] == "On branch main, change 0"
    for store in (default, explicit, off):
        store.close()
