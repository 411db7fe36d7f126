"""Masking beside the results: the long arguments of old calls (``stores/mask_calls.py``)
and the judge's superseded rulings (``stores/mask_rulings.py``), through a real store."""

from __future__ import annotations

import copy
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from flower.kernel.lang import EN, ZH, using
from flower.kernel.ruling_words import opens_a_ruling
from flower.stores.mask import MaskPolicy
from flower.stores.mask_calls import INPUT_TEXT, MIN_CHARS, input_savings, mask_input
from flower.stores.mask_rulings import RULING_TEXT
from flower.stores.prune import PruningSessionStore
from flower.stores.trim import TrimPolicy
from flower.workflow.verdicts import Verdict

from .builder import Transcript
from .test_mask import START, last_time, output

pytestmark = pytest.mark.anyio

KEY = {"project_key": "proj", "session_id": "s1"}
TASK = "task {n}: in src/module_{n}.py make the parser accept the failing case; " * 3


def ruling(n: int) -> str:
    return Verdict(state="not_yet", reason=f"round {n}: two checks fail", failed=["a"]).feedback()


def with_input(t: Transcript, call_id: str, arguments: dict[str, Any]) -> None:
    for line in t.lines:
        for block in line["message"]["content"] if line["type"] == "assistant" else ():
            if block.get("id") == call_id:
                block["input"] = arguments


def coordinator(rounds: int) -> tuple[Transcript, list[list[str]]]:
    """Rounds of a guarded coordinator: the judge's ruling as the prompt (a person's words
    the first round), a worker dispatched (``Agent``, a long task, a 900-character
    report), a file written (``Write``, long content, a one-line result), a question to
    the human with a long text. Returns the transcript and each round's call ids."""
    t = Transcript()
    ids = []
    for r in range(rounds):
        t.prompt(ruling(r) if r else "rewrite the parser, please: " + "details " * 40)
        agent = t.call("x", output(r), tool="Agent")
        with_input(t, agent, {"description": f"fix {r}", "prompt": TASK.format(n=r)})
        write = t.call("x", "File created successfully", tool="Write")
        with_input(t, write, {"file_path": f"/w/f{r}.py", "content": "x = 1\n" * 60})
        human = t.call("x", "yes", tool="mcp__human__ask")
        with_input(t, human, {"question": "may I? " * 40})
        ids.append([agent, write, human])
        t.say(f"round {r} done")
    for n, line in enumerate(t.lines):
        line["timestamp"] = (START + timedelta(seconds=10 * n)).isoformat().replace("+00:00", "Z")
    return t, ids


async def load_view(
    tmp_path: Path, workspace: Path, lines: list[dict[str, Any]], now: float
) -> tuple[PruningSessionStore, list[dict[str, Any]]]:
    store = PruningSessionStore(
        tmp_path / "s.db",
        workspace,
        policy=TrimPolicy(enabled=True),
        mask=MaskPolicy(keep_recent=3),
    )
    store.now = lambda: now
    await store.append(KEY, copy.deepcopy(lines))
    out = await store.load(KEY)
    assert out is not None
    return store, out


def inputs(view: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        b["id"]: b["input"]
        for line in view
        if line.get("type") == "assistant"
        for b in line["message"]["content"]
        if b.get("type") == "tool_use"
    }


def prompts(view: list[dict[str, Any]]) -> list[str]:
    return [
        line["message"]["content"]
        for line in view
        if line.get("type") == "user" and isinstance(line["message"]["content"], str)
    ]


async def test_old_calls_lose_their_long_arguments_and_keep_the_rest(
    tmp_path: Path, workspace: Path
) -> None:
    t, ids = coordinator(6)
    store, view = await load_view(tmp_path, workspace, t.lines, last_time(t) + 3600)  # cold
    got = inputs(view)
    every = [c for r in ids for c in r]
    masked, whole = every[:-3], every[-3:]  # all but the newest three results
    humans = [r[2] for r in ids]
    for call in masked:
        arguments, was = got[call], inputs(t.lines)[call]
        assert list(arguments) == list(was)  # the same keys, in their order
        for name, value in was.items():
            if call in humans:
                assert arguments == was  # a question to the human stays whole
            elif len(value) >= MIN_CHARS:
                assert arguments[name] == INPUT_TEXT.format(n=f"{len(value):,}")
            else:
                assert arguments[name] == value  # a path, a description stays
    for call in whole:
        assert got[call] == inputs(t.lines)[call]
    # the Write's result was too short to mask: its content went all the same
    assert got[ids[0][1]]["content"].startswith("[旧参数(")
    assert store.last_report["masked_inputs"] == 2 * 5  # an Agent and a Write a round
    assert await store.stored(KEY) == t.lines  # the rows never change


async def test_rulings_below_the_boundary_give_way_to_the_newest_two(
    tmp_path: Path, workspace: Path
) -> None:
    t, _ = coordinator(6)
    store, view = await load_view(tmp_path, workspace, t.lines, last_time(t) + 3600)
    said = prompts(view)
    assert said[0] == prompts(t.lines)[0]  # the person's prompt stays, long as it is
    for n in (1, 2, 3):
        assert said[n] == RULING_TEXT.format(n=f"{len(ruling(n)):,}")
    assert said[4:] == [ruling(4), ruling(5)]  # the newest two stay whole
    assert store.last_report["superseded_rulings"] == 3


async def test_a_ruling_above_the_boundary_stays_whole(tmp_path: Path, workspace: Path) -> None:
    """Only what lies below masking's boundary goes: with the cache warm and no move
    paid for, nothing changes, rulings included."""
    t, _ = coordinator(6)
    _, view = await load_view(tmp_path, workspace, t.lines, last_time(t) + 30)  # warm
    assert prompts(view) == prompts(t.lines)
    assert inputs(view) == inputs(t.lines)


async def test_in_english_the_placeholders_are_english(tmp_path: Path, workspace: Path) -> None:
    t, _ = coordinator(6)
    with using(EN):
        _, view = await load_view(tmp_path, workspace, t.lines, last_time(t) + 3600)
    assert prompts(view)[1].startswith("[older ruling of the judge (")
    assert any(
        str(v).startswith("[older argument (") for a in inputs(view).values() for v in a.values()
    )


@pytest.mark.parametrize("lang", [ZH, EN])
@pytest.mark.parametrize("state", ["achieved", "not_yet", "unreachable", "", "unclear"])
def test_every_ruling_the_guard_hands_back_is_recognised(lang: str, state: str) -> None:
    """The store knows a ruling by its first sentence: whatever the state and language,
    ``Verdict.feedback`` opens with one of the kernel's openings; a person's words don't."""
    with using(lang):
        assert opens_a_ruling(Verdict(state=state, reason="r", failed=["c"]).feedback())
    assert not opens_a_ruling("The judge is wrong, keep going")
    assert not opens_a_ruling("裁判说的不对")


def test_an_argument_of_120_characters_goes_and_one_of_119_stays() -> None:
    block = {"type": "tool_use", "id": "t", "name": "Agent", "input": {}}
    block["input"] = {"a": "x" * 120, "b": "y" * 119, "n": 7}
    assert input_savings(block) == 120 - 20  # the placeholder's 20 characters counted
    saved = mask_input(block, english=False)
    line = INPUT_TEXT.format(n="120")
    assert block["input"] == {"a": line, "b": "y" * 119, "n": 7}
    assert saved == 120 - len(line)
    human = {"type": "tool_use", "id": "h", "name": "mcp__human__ask", "input": {"q": "z" * 500}}
    assert input_savings(human) == 0 and mask_input(human, english=False) == 0


async def test_a_ruling_in_a_list_prompt_goes_and_two_rulings_alone_stay(
    tmp_path: Path, workspace: Path
) -> None:
    """The CLI stores a prompt with a reminder before it as a list of text blocks: the
    ruling's block goes, the reminder stays. With only two rulings, none goes."""
    t, _ = coordinator(6)
    reminder = {"type": "text", "text": "<system-reminder>x</system-reminder>"}
    second = [line for line in t.lines if isinstance(line["message"]["content"], str)][2]
    second["message"]["content"] = [reminder, {"type": "text", "text": ruling(2)}]
    _, view = await load_view(tmp_path, workspace, t.lines, last_time(t) + 3600)
    line = next(v for v in view if v["uuid"] == second["uuid"])
    assert line["message"]["content"][0] == reminder
    assert line["message"]["content"][1]["text"].startswith("[旧裁判意见(")
    few, _ = coordinator(3)
    _, view = await load_view(tmp_path / "few", workspace, few.lines, last_time(few) + 3600)
    assert prompts(view) == prompts(few.lines)
