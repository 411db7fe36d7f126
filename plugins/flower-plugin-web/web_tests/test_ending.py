"""The run's end as the page hears it, without a browser: the ``ended`` event (flower's
words for the outcome, the terminal's closing lines, one total with the side questions
labelled), changes refused once the run is over, the stream flushed before the server
stops, how long the page lingers; and the events panel's words (the terminal's own)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from flower.testing import need

from .conftest import NOT_INSTALLED, PLUGIN

need(PLUGIN, NOT_INSTALLED)

import httpx  # noqa: E402 - a test extra, like the plugin: after the check
from flower_plugin_web import ending  # noqa: E402
from flower_plugin_web.hub import Hub  # noqa: E402
from flower_plugin_web.server import OVER  # noqa: E402
from flower_plugin_web.words import ASIDE_STEP, Words  # noqa: E402

from flower.records.outcome import write_outcome  # noqa: E402

from .pages import OWN, TOKEN, client, hub_with_question, port_of, served  # noqa: E402

#: What the terminal's session says as it prints its closing line (``Event("end")``).
END = {"ok": True, "code": 0, "cost": 0.2199, "side_usd": 0.0544, "side_count": 2,
       "failed_at": None, "aborted": None, "manifest": "/ws/runs/manifest.json",
       "duration_s": 9.2}  # fmt: skip


def a_run(hub: Hub) -> None:
    """Two steps and two side questions, one asked on the page, as the hub hears them."""
    hub.publish("result", {"ok": True, "cost_usd": 0.1}, "确认需求")
    hub.publish("aside", {"question": "where?", "answer": None, "via": "page"})
    hub.publish("result", {"ok": True, "cost_usd": 0.03}, ASIDE_STEP)  # counted as its aside
    hub.publish("aside", {"question": "where?", "answer": "here", "ok": True,
                          "cost_usd": 0.03, "via": "page"})  # fmt: skip
    hub.publish("aside", {"question": "when?", "answer": "soon", "ok": True, "cost_usd": 0.02})
    hub.publish("result", {"ok": True, "cost_usd": 0.05}, "干活")


def test_the_hub_counts_steps_and_side_questions_once() -> None:
    hub = Hub(enabled=True)
    a_run(hub)
    assert hub.steps_usd == pytest.approx(0.15)
    assert (hub.side_count, hub.side_usd) == (2, pytest.approx(0.05))


def test_the_ended_event_says_the_terminals_closing_line(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    a_run(hub)
    hub.publish("end", END)
    since = os.path.getmtime(tmp_path) - 1
    write_outcome(tmp_path, "done", why="the goal was met (the judge: achieved)", met=True)
    said = ending.outcome_for(hub, tmp_path, 0, since, stays=60.0)
    assert said["state"] == "done" and said["code"] == 0 and said["stays"] == 60.0
    assert said["said"] == "the run finished: the goal was met (the judge: achieved)"
    ((line, style, _),) = said["lines"]
    assert line.startswith("* done - total $0.2199 (side questions $0.0544) - 9s - manifest: ")
    assert style == "bold green"
    assert said["total"] == "total $0.2199 (side questions $0.0544)"  # the terminal's figures
    assert (said["cost_usd"], said["side_usd"], said["side_count"]) == (0.2199, 0.0544, 2)


def test_a_stopped_run_and_one_that_never_closed(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    a_run(hub)
    hub.publish("end", {**END, "ok": False, "code": 1, "failed_at": "干活", "aborted": "HTTP 400"})
    write_outcome(tmp_path, "stopped", step="干活", why="HTTP 400")
    said = ending.outcome_for(hub, tmp_path, 1, 0.0, stays=0.0)
    assert said["said"] == "the run stopped at 干活: HTTP 400"
    assert said["lines"][0][0] == "x stopped at 干活: HTTP 400"
    # no closing line (a budget's stop before the session could print one): what the
    # pages counted, the side questions labelled; an outcome an earlier process wrote is
    # not this run's
    other = Hub(enabled=True)
    a_run(other)
    said = ending.outcome_for(other, tmp_path, 3, 10.0**12, stays=0.0)
    assert said["said"] == "the run was stopped by its budget: the terminal says how to go on"
    assert said["lines"] == [] and said["state"] == ""
    assert said["total"] == "total $0.2000 (side questions $0.0500)"


def test_how_long_the_page_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ending, "_terminal", lambda: False)
    assert ending.stay_for(None, 0, ran=True) == 0.0  # a pipe never hangs by surprise
    assert ending.stay_for(5, 1, ran=True) == 5.0  # unless asked to
    monkeypatch.setattr(ending, "_terminal", lambda: True)
    assert ending.stay_for(None, 0, ran=True) == ending.STAY
    assert ending.stay_for(0, 0, ran=True) == 0.0
    for code in (2, 130, None):  # nothing ran, a quit, an exception: never
        assert ending.stay_for(30, code, ran=True) == 0.0
    assert ending.stay_for(30, 0, ran=False) == 0.0


def test_once_over_changes_are_refused_and_the_state_says_how_it_ended(
    tmp_path: Path,
) -> None:
    hub, channel, _ = hub_with_question(tmp_path)
    page = client(hub, headers=OWN)
    assert page.get("/state").json()["over"] is None
    hub.end({"state": "done", "said": "the run finished", "total": "total $0.0000"})
    assert page.get("/state").json()["over"]["said"] == "the run finished"
    for path, body in (("/inbox", {"text": "more"}), ("/aside", {"question": "where?"})):
        refused = page.post(path, json=body)
        assert (refused.status_code, refused.json()["error"]) == (409, OVER), path
    assert not channel.mail
    assert hub.recent()[-1].kind == "ended"


def test_a_page_gets_the_ended_event_before_the_server_stops(tmp_path: Path) -> None:
    hub = Hub(enabled=True)
    with served(hub) as running:
        url = f"http://127.0.0.1:{port_of(running)}"
        headers = {"X-Flower-Token": TOKEN}
        with httpx.stream("GET", url + "/events", headers=headers, timeout=10) as stream:
            lines = stream.iter_lines()
            assert next(lines).startswith("event: run")
            hub.end({"state": "done", "said": "the run finished"})
            running.stop()  # the stream sends what is left, then ends
            data = [json.loads(x[6:]) for x in lines if x.startswith("data: ")]
    assert [d.get("kind") for d in data] == [None, "ended"]  # the hello, then the end


def test_the_events_panel_says_what_the_terminal_says() -> None:
    words = Words(0.0)
    result = {"ok": True, "cost_usd": 0.15029199999999998, "num_turns": 1, "duration_s": 4.2}
    ((line, style, _),) = words.say("result", result, "确认需求", 0.0)
    assert line == "* 确认需求 done - 1 turn - $0.1503 - 4s" and style == "green"
    typed = words.say("mail", {"id": "m1", "text": "add a README", "state": "queued"}, None, 0)
    assert typed[0] == ["> add a README", "dim", 0]  # as the input line echoed it
    paged = {"id": "m2", "text": "add tests", "state": "queued", "via": "page"}
    assert words.say("mail", paged, None, 0)[0] == ["> (page) add tests", "dim", 0]
    asked = {"question": "where?", "answer": None, "via": "page"}
    assert words.say("aside", asked, None, 0) == [
        ["? (page) where? (asking on the side; the run goes on)", "dim", 0]
    ]
    # the side question's own session is not the run's: the terminal shows none of it
    assert words.say("result", result, ASIDE_STEP, 0.0) == []


def test_simulated_costs_are_labelled_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``flower demo --web``: no figure on the page reads as real money."""
    monkeypatch.setenv("FLOWER_SIMULATED_COSTS", "1")
    hub = Hub(enabled=True)
    a_run(hub)
    said = ending.outcome_for(hub, tmp_path, 3, 10.0**12, stays=0.0)
    assert said["total"] == "total $0.2000 simulated (side questions $0.0500 simulated)"
    assert client(hub, headers=OWN).get("/state").json()["simulated"] is True
    monkeypatch.delenv("FLOWER_SIMULATED_COSTS")
    assert client(hub, headers=OWN).get("/state").json()["simulated"] is False
