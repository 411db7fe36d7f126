"""The scripted starter run through real ``flower`` processes, into a real backend.

One story (otel_tests/scenario.py: clarify with a question nobody answers, a goal, a
work round that hands off, the judge's "not yet", then a wake in a second process for
round 2 and the judge's "achieved"), told three times once per test session
(otel_tests/story.py, shared by every xdist worker) and asserted on claim by claim:

- with the plugin off, and with it on but the collector down for the whole run: the
  exit codes and the output are the same, the only difference one warning line per
  process (the timing ratio is the benchmark's: benchmarks/overhead.py);
- into Arize Phoenix on loopback (started there, from its own virtualenv): read back
  through Phoenix's REST API, the two processes are two traces of one run, with the
  expected span tree and attributes, the CLI's own spans children of flower's sessions,
  and no prompt, tool output or key anywhere in what Phoenix stored.

``FLOWER_OTEL_SCREENSHOT=<png>`` also saves the first trace as Phoenix shows it
(headless Chromium, otel_tests/screenshot.py), the README's picture.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from flower.testing import need

from . import scenario as SC
from .backend import INSTALL, phoenix_executable
from .conftest import NOT_INSTALLED, PLUGIN
from .story import Story, shared

pytestmark = pytest.mark.e2e

WARNING = "flower-otel: the collector at"


def normal(text: str, workspace: Path) -> str:
    """Output with what differs between two runs of one script taken out: paths, seconds,
    dollars (the CLI prices the scripted model's token estimates, which are not the
    same from one run to the next even without the plugin) and context sizes (the
    request names the workspace many times, the sandbox's rules among them, so its size
    follows the length of the workspace's path: ``off`` is shorter than ``live``)."""
    text = text.replace(str(workspace), "<ws>").replace(workspace.parent.name, "<story>")
    text = re.sub(r"\$\d+(\.\d+)?", "$<c>", text)
    text = re.sub(r"\bcontext \d+(\.\d+)?K\b", "context <k>", text)
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


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Story:
    need(PLUGIN, NOT_INSTALLED)
    need(phoenix_executable() is not None, INSTALL)
    return shared(tmp_path_factory)


def ours(story: Story) -> list[Tree]:
    """flower's traces (a root named ``flower run``), in segment order."""
    traces = [Tree(s) for s in spans_by_trace(story.spans).values()]
    assert all(t.root["name"] == "flower run" for t in traces), [t.root["name"] for t in traces]
    return sorted(traces, key=lambda t: t.root["attributes"]["flower.run.segment"])


def test_the_story_ran_the_same_with_the_plugin_off_and_on(story: Story) -> None:
    off, live = story.told["off"], story.told["live"]
    for told in (off, live):
        assert [r.code for r in told] == [1, 0], [r.err for r in told]  # round 1; done
        assert [r.err for r in told] == ["", ""]
    for a, b in zip(off, live, strict=True):
        assert normal(b.out, story.workspace("live")) == normal(a.out, story.workspace("off"))


def test_a_collector_down_for_the_whole_run_changes_nothing_but_one_line(
    story: Story,
) -> None:
    for off, dead in zip(story.told["off"], story.told["dead"], strict=True):
        assert dead.code == off.code
        assert normal(dead.out, story.workspace("dead")) == normal(off.out, story.workspace("off"))
        (line,) = dead.err.splitlines()  # one line for the whole process, no traceback
        assert line.startswith(WARNING) and story.dead_url in line


def test_the_two_processes_are_two_traces_of_one_run(story: Story) -> None:
    one, two = trees = ours(story)
    print("\n\n" + "\n\n".join(t.show() for t in trees))
    run_id = one.root["attributes"]["flower.run.id"]
    assert two.root["attributes"]["flower.run.id"] == run_id
    assert [t.root["attributes"]["flower.run.woke"] for t in trees] == [1, 2]
    # the wake's root points at the first root: a span link, which Phoenix 20 drops on
    # ingest (its REST model: ``links: None``), so as an attribute too
    assert two.root["attributes"]["flower.run.previous_trace_id"] == one.root["context"]["trace_id"]
    assert "flower.run.previous_trace_id" not in one.root["attributes"]
    # every span of both traces found by Phoenix's own attribute query: flower's carry
    # the id, the CLI's have it as a resource attribute (OTEL_RESOURCE_ATTRIBUTES)
    assert list(story.found_by_run_id) == [run_id]
    assert sorted(story.found_by_run_id[run_id]) == sorted(
        s["context"]["span_id"] for s in story.spans
    )
    assert [s["trace_id"] for s in story.segments_file["segments"]] == [
        t.root["context"]["trace_id"] for t in trees
    ]


def test_the_first_process_clarifies_sets_the_goal_hands_off_and_is_judged(
    story: Story,
) -> None:
    the_first_segment(ours(story)[0])


def test_the_wake_in_a_second_process_resumes_round_2(story: Story) -> None:
    the_wake(ours(story)[1])


def test_the_cli_spans_are_children_of_flower_sessions(story: Story) -> None:
    for tree in ours(story):
        the_cli_nests_under_flower(tree)


def test_every_session_carries_genai_attributes(story: Story) -> None:
    for tree in ours(story):
        sessions_carry_genai_attributes(tree)


def test_no_prompt_tool_output_or_key_in_what_phoenix_stored(story: Story) -> None:
    """Searched in Phoenix's API answers and, byte for byte, in its database on disk."""
    answered = json.dumps(story.spans, ensure_ascii=False)
    assert story.stored_bytes > 0, "Phoenix stored nothing on disk"
    assert story.stored_markers == []
    for word in [*SC.MARKERS.values(), SC.KEY]:
        assert word not in answered, word


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
