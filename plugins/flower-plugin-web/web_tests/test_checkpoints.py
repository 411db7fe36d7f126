"""The page lists the run's checkpoints as ``flower rewind`` does (issue 35): ``/state``
carries them (``flower.workflow.going_back.listing``, the same function ``flower status`` and
``flower rewind`` read), and the page shows them, in real headless Chromium, again after
a step once a new one was taken.

The run is made without a model: a lineage naming the run, a store with one verdict,
checkpoints taken on the real git store (no run of flower at all: seconds, not a session).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from flower.records.checkpoints import Checkpoint, Checkpoints
from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

from flower_plugin_web.hub import Hub, Where  # noqa: E402

from .pages import TOKEN, client, hub_with_question, served  # noqa: E402

WITH_TOKEN = {"X-Flower-Token": TOKEN}
RUN = "run-checkpoints-1"
EXCLUDE = ["runs", ".flower"]


@pytest.fixture(autouse=True)
def _own_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLOWER_STORE_URL", raising=False)  # the run folder's sessions.db


def a_run(ws: Path) -> Checkpoints:
    """A run of ``ws`` with three checkpoints: before the goal step, round 1 (ruled
    ``not_yet``), round 2 (after round 1 deleted ``a.txt`` and wrote ``b.txt``)."""
    from flower.stores.database import StoreDatabase

    runs = ws / "runs"
    runs.mkdir(exist_ok=True)
    (runs / "lineage.json").write_text(json.dumps({"workspace": str(ws), "run": RUN}))
    ledger = StoreDatabase(runs / "sessions.db")
    ledger.record_ruling({"run_id": RUN, "workspace": str(ws), "host": "h", "step": "干活",
                          "round": 1, "kind": "verdict", "state": "not_yet",
                          "reason": "R1-MISSING"})  # fmt: skip
    ledger.close()
    store = Checkpoints(ws, runs, RUN)
    (ws / "a.txt").write_text("a")
    store.take(Checkpoint(n=0, kind="step", step="设定目标", exclude=EXCLUDE))
    store.take(Checkpoint(n=0, kind="round", step="干活", round=1, exclude=EXCLUDE))
    (ws / "a.txt").unlink()
    (ws / "b.txt").write_text("b")
    store.take(Checkpoint(n=0, kind="round", step="干活", label="干活#round2", round=2,
                          exclude=EXCLUDE))  # fmt: skip
    return store


def test_state_lists_the_checkpoints_as_flower_rewind_does(tmp_path: Path) -> None:
    from flower.workflow.going_back import rows

    hub, _, _ = hub_with_question(tmp_path)
    page = client(hub, headers=WITH_TOKEN)
    assert page.get("/state").json()["checkpoints"] is None  # no run yet: none
    store = a_run(tmp_path)
    kept = page.get("/state").json()["checkpoints"]
    assert kept["count"] == 3 and kept["newest"] == "round 2"
    assert kept["bytes"] is None  # the size is status's: it walks every object
    listed = [(r["n"], r["kind"], r["title"], r["step"], r["round"], r["judge"], r["differ"])
              for r in kept["rows"]]  # fmt: skip
    assert listed == [
        (1, "step", "设定目标", "设定目标", None, "", 2),  # a.txt gone, b.txt new since
        (2, "round", "round 1", "干活", 1, "not_yet", 2),  # what the judge said of it
        (3, "round", "round 2", "干活", 2, "", 0),
    ]
    assert all(abs(r["at"] - time.time()) < 120 for r in kept["rows"])
    # one piece of code: what `flower rewind` lists (and status counts) is the same rows
    assert kept["rows"] == json.loads(json.dumps(rows(store, tmp_path, tmp_path / "runs")))


def test_checkpoints_git_cannot_read_are_said_and_the_rest_of_the_state_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub, _, _ = hub_with_question(tmp_path)
    a_run(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # git gone from this machine
    state = client(hub, headers=WITH_TOKEN).get("/state").json()
    assert state["checkpoints"] == {"error": "git is not installed: checkpoints need it"}
    assert [a["question"] for a in state["pending"]] == ["LF or CRLF?"]
    monkeypatch.undo()
    empty = Hub(enabled=True)
    empty.where = Where(workspace=tmp_path / "nowhere", run_dir=tmp_path / "nowhere" / "runs",
                        workbench=tmp_path / "nowhere" / ".flower")  # fmt: skip
    assert client(empty, headers=WITH_TOKEN).get("/state").json()["checkpoints"] is None


@pytest.mark.e2e
def test_the_page_shows_the_checkpoints_and_a_new_one_after_a_step(
    tmp_path: Path, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    hub, _, _ = hub_with_question(tmp_path)
    store = a_run(tmp_path)
    wait = WebDriverWait(browser, 30, poll_frequency=0.1)

    def shown() -> list[list[str]]:  # read at once: the page redraws the table as it asks
        return list(browser.execute_script(
            "return [...document.querySelectorAll('#checkpoints tr')].slice(1)"
            ".map((tr) => [...tr.children].map((td) => td.textContent + '|' + td.className))"
        ))  # fmt: skip

    with served(hub) as running:
        browser.get(f"{running.url}/#token={TOKEN}")
        wait.until(lambda _: len(shown()) == 3)
        table = [[cell.split("|")[0] for cell in row] for row in shown()]
        assert [row[0] for row in table] == ["1", "2", "3"]
        assert table[0][1] == "设定目标 (set the goal)"  # the step's gloss, as elsewhere
        assert [row[1] for row in table[1:]] == ["round 1", "round 2"]
        assert [row[3] for row in table] == ["", "not_yet", ""]
        assert [row[4] for row in table] == ["2 file(s)", "2 file(s)", ""]
        assert all(row[2] for row in table)  # a time on each
        assert shown()[1][3] == "not_yet|not_yet"  # coloured as the verdict's state
        assert "flower rewind N" in browser.find_element(By.ID, "checkpoints").text
        # round 3 begins: a checkpoint is taken, the step event makes the page ask again
        (tmp_path / "c.txt").write_text("c")
        store.take(Checkpoint(n=0, kind="round", step="干活", label="干活#round3", round=3,
                              exclude=EXCLUDE))  # fmt: skip
        hub.publish("step", {"index": 3, "total": 3}, "干活")
        wait.until(lambda _: len(shown()) == 4)
        table = [[cell.split("|")[0] for cell in row] for row in shown()]
        assert table[3][1] == "round 3" and table[2][4] == "1 file(s)"
