"""The scripted starter run through real ``flower`` processes, into a real backend.

One story (otel_tests/scenario.py: clarify with a question nobody answers, a goal, a
work round that hands off, the judge's "not yet", then a wake in a second process for
round 2 and the judge's "achieved"), told three times and shared by every assertion:

- with the plugin off, and with it on but the collector down for the whole run: the
  exit codes and the output are the same, the only difference one warning line per
  process (the timing ratio is the benchmark's: benchmarks/overhead.py);
- into Arize Phoenix on loopback (started here, from its own virtualenv): read back
  through Phoenix's REST API, the two processes are two traces of one run, with the
  expected span tree and attributes, the CLI's own spans children of flower's sessions,
  and no prompt, tool output or key anywhere in what Phoenix stored.

``FLOWER_OTEL_SCREENSHOT=<png>`` also saves the first trace as Phoenix shows it
(headless Chromium), the README's picture.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from flower.testing import ScriptedModel, need

from . import scenario as SC
from .backend import INSTALL, Phoenix, free_port, phoenix_executable
from .conftest import NOT_INSTALLED, PLUGIN

pytestmark = pytest.mark.e2e

WARNING = "flower-otel: the collector at"


def normal(text: str, workspace: Path) -> str:
    """Output with what differs between two runs of one script taken out: paths, seconds,
    and dollars (the CLI prices the scripted model's token estimates, which are not the
    same from one run to the next even without the plugin)."""
    text = text.replace(str(workspace), "<ws>").replace(workspace.parent.name, "<story>")
    text = re.sub(r"\$\d+(\.\d+)?", "$<c>", text)
    return re.sub(r"\b\d+(\.\d+)?s\b", "<t>", text)


def spans_by_trace(spans: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    traces: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        traces[span["context"]["trace_id"]].append(span)
    return traces


class Tree:
    """One trace's spans, walkable by parent."""

    def __init__(self, spans: list[dict[str, Any]]) -> None:
        self.spans = spans
        self.by_id = {s["context"]["span_id"]: s for s in spans}
        self.kids: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
        for s in sorted(spans, key=lambda s: s["start_time"]):
            self.kids[s["parent_id"]].append(s)
        (self.root,) = [s for s in spans if s["parent_id"] is None]

    def children(self, span: dict[str, Any], prefix: str = "") -> list[dict[str, Any]]:
        found = self.kids[span["context"]["span_id"]]
        return [s for s in found if s["name"].startswith(prefix)]

    def names(self, span: dict[str, Any], *, flower_only: bool = True) -> list[str]:
        return [
            s["name"]
            for s in self.children(span)
            if not (flower_only and s["name"].startswith("claude_code."))
        ]

    def ancestors(self, span: dict[str, Any]) -> list[dict[str, Any]]:
        chain = []
        while span["parent_id"] in self.by_id:
            span = self.by_id[span["parent_id"]]
            chain.append(span)
        return chain

    def show(self, span: dict[str, Any] | None = None, depth: int = 0) -> str:
        span = span or self.root
        a = span["attributes"]
        notes = [
            f"{key.split('.')[-1]}={a[key]}"
            for key in ("flower.verdict.state", "flower.ask.state", "flower.attempt",
                        "flower.generation", "flower.kind", "flower.interrupted")
            if key in a
        ]  # fmt: skip
        line = "  " * depth + span["name"] + (f"  [{', '.join(notes)}]" if notes else "")
        return "\n".join([line, *(self.show(c, depth + 1) for c in self.children(span))])


@dataclass
class Story:
    """The story told three times (see the module's docstring), and what Phoenix got."""

    off: tuple[SC.Ran, SC.Ran]
    dead: tuple[SC.Ran, SC.Ran]
    live: tuple[SC.Ran, SC.Ran]
    dead_url: str
    root: Path
    phoenix: Phoenix
    spans: list[dict[str, Any]]
    traces: dict[str, Tree]

    @property
    def ours(self) -> list[Tree]:
        """flower's traces (a root named ``flower run``), in segment order."""
        found = [t for t in self.traces.values() if t.root["name"] == "flower run"]
        return sorted(found, key=lambda t: t.root["attributes"]["flower.run.segment"])

    def workspace(self, name: str) -> Path:
        return self.root / f"tell-{name}" / "proj"


def clean_env(model: ScriptedModel, home: Path, **extra: str) -> dict[str, str]:
    """The shell's environment without its telemetry and flower settings, then offline
    (built here, not by the function-scoped ``offline`` fixture: the story is shared by
    the module, and set up before any test's fixtures)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "FLOWER_", "CLAUDE_"))}
    for name, value in {**model.env(home=home), "COLUMNS": "200", **extra}.items():
        if value:
            env[name] = value
        else:
            env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Story]:
    """One telling per configuration for the whole module: each costs two ``flower``
    processes and about ten CLI sessions."""
    need(PLUGIN, NOT_INSTALLED)
    executable = phoenix_executable()
    need(executable is not None, INSTALL)
    assert executable is not None
    root = tmp_path_factory.mktemp("otel-story")
    (root / "phoenix").mkdir()
    phoenix = Phoenix(executable, root / "phoenix")  # it starts while the others run
    model = ScriptedModel()
    model.start()
    try:
        home = root / "home"
        dead = f"http://127.0.0.1:{free_port()}"
        told: dict[str, tuple[SC.Ran, SC.Ran]] = {}
        for name, extra in {
            "off": {"FLOWER_DISABLED_PLUGINS": "otel"},
            "dead": {"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": dead},
            "live": {
                "OTEL_SDK_DISABLED": "false",
                "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.url,
                "OTEL_METRICS_EXPORTER": "none",  # Phoenix takes traces only
            },
        }.items():
            if name == "live":
                phoenix.wait()
            workspace = root / f"tell-{name}" / "proj"
            model.play(SC.script(workspace))
            told[name] = SC.both(workspace, clean_env(model, home, **extra))
        spans = arrived(phoenix)
        traces = {tid: Tree(s) for tid, s in spans_by_trace(spans).items()}
        yield Story(told["off"], told["dead"], told["live"], dead, root, phoenix, spans, traces)
    finally:
        model.stop()
        phoenix.stop()


def arrived(phoenix: Phoenix, within: float = 60.0) -> list[dict[str, Any]]:
    """Every span, once both processes' roots are in and the count has settled (Phoenix
    stores what it received a little later)."""
    deadline = time.monotonic() + within
    before = -1
    while True:
        spans = phoenix.spans()
        roots = [s for s in spans if s["name"] == "flower run"]
        if (len(roots) >= 2 and len(spans) == before) or time.monotonic() > deadline:
            return spans
        before = len(spans)
        time.sleep(1.0)


def test_the_story_ran_the_same_with_the_plugin_off_and_on(story: Story) -> None:
    for told in (story.off, story.live):
        assert [r.code for r in told] == [1, 0], [r.err for r in told]  # round 1; done
        assert [r.err for r in told] == ["", ""]
    for off, live in zip(story.off, story.live, strict=True):
        assert normal(live.out, story.workspace("live")) == normal(off.out, story.workspace("off"))


def test_a_collector_down_for_the_whole_run_changes_nothing_but_one_line(
    story: Story,
) -> None:
    for off, dead in zip(story.off, story.dead, strict=True):
        assert dead.code == off.code
        assert normal(dead.out, story.workspace("dead")) == normal(off.out, story.workspace("off"))
        (line,) = dead.err.splitlines()  # one line for the whole process, no traceback
        assert line.startswith(WARNING) and story.dead_url in line


def test_the_two_processes_are_two_traces_of_one_run(story: Story) -> None:
    ours = story.ours
    assert len(ours) == len(story.traces) == 2, [t.root["name"] for t in story.traces.values()]
    print("\n\n" + "\n\n".join(t.show() for t in ours))
    one, two = ours
    run_id = one.root["attributes"]["flower.run.id"]
    assert two.root["attributes"]["flower.run.id"] == run_id
    assert [t.root["attributes"]["flower.run.woke"] for t in ours] == [1, 2]
    # the wake's root points at the first root: a span link, which Phoenix 20 drops on
    # ingest (its REST model: ``links: None``), so as an attribute too
    assert two.root["attributes"]["flower.run.previous_trace_id"] == one.root["context"]["trace_id"]
    assert "flower.run.previous_trace_id" not in one.root["attributes"]
    # every span of both traces found by Phoenix's own attribute query: flower's carry
    # the id, the CLI's have it as a resource attribute (OTEL_RESOURCE_ATTRIBUTES)
    found = httpx.get(
        f"{story.phoenix.url}/v1/projects/default/spans",
        params={"attribute": f"flower.run.id:{run_id}", "limit": 1000},
        timeout=30,
    ).json()["data"]
    assert {s["context"]["span_id"] for s in found} == {
        s["context"]["span_id"] for s in story.spans
    }
    kept = json.loads((story.workspace("live") / "runs" / "otel.json").read_text(encoding="utf-8"))
    assert [s["trace_id"] for s in kept["segments"]] == [
        t.root["context"]["trace_id"] for t in ours
    ]


def test_the_first_process_clarifies_sets_the_goal_hands_off_and_is_judged(
    story: Story,
) -> None:
    the_first_segment(story.ours[0])


def test_the_wake_in_a_second_process_resumes_round_2(story: Story) -> None:
    the_wake(story.ours[1])


def test_the_cli_spans_are_children_of_flower_sessions(story: Story) -> None:
    for tree in story.ours:
        the_cli_nests_under_flower(tree)


def test_every_session_carries_genai_attributes(story: Story) -> None:
    for tree in story.ours:
        sessions_carry_genai_attributes(tree)


def test_no_prompt_tool_output_or_key_in_what_phoenix_stored(story: Story) -> None:
    nothing_of_the_content_left_home(story.phoenix, story.spans)


if os.environ.get("FLOWER_OTEL_SCREENSHOT"):  # the README's picture, taken on request

    def test_screenshot_of_the_first_trace(story: Story) -> None:
        screenshot(story.phoenix, story.ours[0])


def the_first_segment(t: Tree) -> None:
    root = t.root
    assert t.names(root) == ["step 确认需求", "step 设定目标", "step 干活", "收尾"]
    assert "flower.workspace.hash" in root["attributes"]
    assert "flower.workspace.path" not in root["attributes"]
    clarify = t.children(root, "step 确认需求")[0]
    (session,) = t.children(t.children(clarify)[0], "invoke_agent")
    (question,) = t.children(session, "question")
    assert question["attributes"]["flower.ask.state"] == "timeout"
    assert question["attributes"]["flower.ask.options"] == 2
    work_step = t.children(root, "step 干活")[0]
    assert t.names(work_step) == ["干活", "干活·判定#1"]
    work, ruling = t.children(work_step)
    assert t.names(work) == ["invoke_agent 协调者", "handoff 1", "invoke_agent 协调者"]
    full, handoff, successor = t.children(work)
    assert full["attributes"]["flower.interrupted"] is True  # by the handoff, not an error
    assert full["status_code"] != "ERROR"
    assert full["attributes"]["gen_ai.usage.input_tokens"] == SC.FULL["input_tokens"]
    (writer,) = t.children(handoff)
    assert writer["attributes"]["flower.kind"] == "handoff_round"
    assert handoff["attributes"]["flower.handoff.generation"] == 1
    assert handoff["attributes"]["flower.handoff.degraded"] is False
    assert successor["attributes"]["flower.generation"] == 1
    assert ruling["span_kind"] == "EVALUATOR"
    assert ruling["attributes"]["flower.verdict.state"] == "not_yet"
    assert ruling["attributes"]["flower.verdict.failed_count"] == 1
    assert work_step["attributes"]["flower.verdict.state"] == "not_yet"


def the_wake(t: Tree) -> None:
    root = t.root
    assert t.names(root) == ["step 干活", "收尾"]
    assert [e["name"] for e in root["events"]][:2] == ["step skipped", "step skipped"]
    work_step = t.children(root)[0]
    assert work_step["attributes"]["flower.step.resumed"] is True
    assert t.names(work_step) == ["干活", "干活·判定#2"]
    work, ruling = t.children(work_step)
    (session,) = t.children(work, "invoke_agent")
    assert session["attributes"]["flower.resume"] is True
    assert ruling["attributes"]["flower.verdict.state"] == "achieved"


def the_cli_nests_under_flower(t: Tree) -> None:
    cli = [s for s in t.spans if s["name"].startswith("claude_code.")]
    assert cli, "the CLI exported nothing"
    sessions = [s for s in t.spans if s["attributes"].get("flower.kind") in SESSION_KINDS]
    for session in sessions:
        (interaction,) = t.children(session, "claude_code.interaction")
        assert interaction["attributes"]["parent.source"] == "env"  # TRACEPARENT
        assert (
            interaction["attributes"]["session.id"]
            == (session["attributes"]["gen_ai.conversation.id"])
        )
    for span in cli:
        kinds = [a["attributes"].get("flower.kind") for a in t.ancestors(span)]
        assert (kinds[-1] == "run" and "runtime_step" in kinds) or "ruling" in kinds, kinds
    requests = [s for s in cli if s["name"] == "claude_code.llm_request"]
    assert requests and all(s["attributes"]["gen_ai.usage.input_tokens"] > 0 for s in requests)


SESSION_KINDS = ("session", "handoff_round")


def sessions_carry_genai_attributes(t: Tree) -> None:
    for span in t.spans:
        a = span["attributes"]
        if a.get("flower.kind") not in SESSION_KINDS:
            continue
        assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"]
        if a.get("flower.interrupted"):  # stopped mid-turn: the CLI may total nothing
            continue
        read = sum(a[f"gen_ai.usage.{k}"] for k in ("input_tokens", "cache_read.input_tokens",
                                                     "cache_creation.input_tokens"))  # fmt: skip
        assert read > 0 and a["gen_ai.usage.output_tokens"] > 0, a["flower.step"]
        assert a["gen_ai.response.model"] and a["gen_ai.conversation.id"]
        assert a["flower.cost_usd"] > 0 and a["flower.step"]


def nothing_of_the_content_left_home(phoenix: Phoenix, spans: list[dict[str, Any]]) -> None:
    answered = json.dumps(spans, ensure_ascii=False)
    stored = phoenix.stored_bytes()
    assert stored, "Phoenix stored nothing on disk"
    for word in [*SC.MARKERS.values(), SC.KEY]:
        assert word not in answered, word
        assert word.encode() not in stored, word


def screenshot(phoenix: Phoenix, t: Tree) -> None:
    target = os.environ.get("FLOWER_OTEL_SCREENSHOT")
    if not target:
        return
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    need(bool(chromium and driver_path), "no chromium/chromedriver for the screenshot")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(chromium)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1500,1200", "--no-first-run", "--lang=en-US"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)), options=options)
    try:
        project = phoenix.project_id()
        trace_id = t.root["context"]["trace_id"]
        driver.get(f"{phoenix.url}/projects/{project}/traces/{trace_id}")
        deadline = time.monotonic() + 30
        while "claude_code.interaction" not in driver.page_source:
            assert time.monotonic() < deadline, "Phoenix did not show the trace"
            time.sleep(0.5)
        from selenium.webdriver.common.by import By

        for span in driver.find_elements(By.XPATH, "//*[text()='干活·判定#1']"):
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", span)
            span.click()  # the ruling: its state and failed checks beside the tree
            break
        time.sleep(1.5)
        driver.save_screenshot(target)
    finally:
        driver.quit()
