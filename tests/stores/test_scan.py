"""The one walk of a load (``flower.stores.scan``) finds what each policy's own walk found.

Lines are drawn from the shapes the policies look at (results, calls, prompts, API errors,
sidechains, healed lines, repeated ids, odd content), and each fact of the scan
is compared with the function it replaced; ``Scan.without`` with a scan of what is left.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from flower.stores.lines import _REPEATED, _REPEATED_IN_MESSAGE
from flower.stores.mask import is_prompt
from flower.stores.scan import scan
from flower.stores.transcript import counted_results, is_synthetic, tool_results, tool_uses

from ..fuzz import examples

IDS = st.sampled_from(["t1", "t2", "t3", "t4"])
BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": IDS}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": IDS, "name": st.just("Bash")}),
    st.fixed_dictionaries({"type": st.just("text"), "text": st.just("hi")}),
    st.just("not a block"),
)
CONTENT = st.one_of(st.lists(BLOCK, max_size=3), st.just("a prompt"), st.none(), st.just(7))


@st.composite
def line(draw: st.DrawFn) -> dict[str, Any]:
    kinds = ["user", "assistant", "system", "x", "cost-state"]
    entry: dict[str, Any] = {"type": draw(st.sampled_from(kinds))}
    uid = draw(
        st.one_of(st.none(), st.sampled_from(["u1", "u2", "u3", "u4", "u5", ""]), st.just(3))
    )
    if uid is not None:
        entry["uuid"] = uid
    for name in ("isSidechain", "isApiErrorMessage", "flowerHealed"):
        if draw(st.booleans()):
            entry[name] = draw(st.sampled_from([True, False, "yes"]))
    if draw(st.booleans()):
        entry["subtype"] = "api_error"
    if draw(st.integers(0, 3)) == 0:  # a refused call's result: pruning drops old ones
        entry["toolDenialKind"] = "permission-rule"
    if draw(st.booleans()):  # what the load's walk shares between lines
        entry["sessionId"] = "s1"
        entry["parentUuid"] = draw(st.sampled_from(["u1", "u2", "u3"]))
        entry["requestId"] = draw(st.sampled_from(["r1", "r2"]))
    message = draw(st.one_of(st.none(), st.just("text"), st.fixed_dictionaries({})))
    if isinstance(message, dict):
        message["content"] = draw(CONTENT)
        if draw(st.booleans()):
            message["id"] = draw(st.sampled_from(["m1", "m2", "", None]))
        if draw(st.booleans()):
            message["role"] = "assistant"
            message["usage"] = {"input_tokens": draw(st.sampled_from([1, 2]))}
    if message is not None:
        entry["message"] = message
    return entry


TRANSCRIPT = st.lists(line(), max_size=14)


def rounds_after(entries: list[dict[str, Any]]) -> list[int]:
    """The walk expiry made before the scan (the replies after each line)."""
    after = [0] * len(entries)
    seen: set[Any] = set()
    for index in range(len(entries) - 1, -1, -1):
        after[index] = len(seen)
        entry = entries[index]
        if entry.get("type") == "assistant" and not is_synthetic(entry):
            message = entry.get("message")
            msg_id = message.get("id") if isinstance(message, dict) else None
            seen.add(msg_id or ("line", index))
    return after


def facts(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return facts_of(scan(entries), entries)


@settings(max_examples=400, deadline=None)
@given(TRANSCRIPT)
def test_each_fact_is_what_its_own_walk_found(entries: list[dict[str, Any]]) -> None:
    calls = [
        str(b.get("id"))
        for e in entries
        if e.get("type") == "assistant" and e.get("uuid") and isinstance(e.get("message"), dict)
        and isinstance(e["message"].get("content"), list)
        for b in e["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]  # fmt: skip
    assert facts(entries) == {
        "results": [(i, id(e), id(b)) for i, e, b in tool_results(entries)],
        "counted": [(i, id(e), id(b)) for i, e, b in counted_results(entries)],
        "uses": {k: (i, id(b)) for k, (i, b) in tool_uses(entries).items()},
        "synthetic": [i for i, e in enumerate(entries) if is_synthetic(e)],
        "prompts": [i for i, e in enumerate(entries) if is_prompt(e)],
        "calls": calls,
        "totals": [i for i, e in enumerate(entries) if e.get("type") == "cost-state"],
        "rounds": rounds_after(entries),
    }


@settings(max_examples=400, deadline=None)
@given(TRANSCRIPT, st.sets(st.integers(0, 13)))
@example(  # the main chain's only user line goes: the subagent's results count again
    [
        {"type": "user", "message": {"content": "go"}},
        {
            "type": "user",
            "isSidechain": True,
            "message": {"content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        },
    ],
    {0},
)
def test_a_scan_less_some_lines_is_the_scan_of_the_rest(
    entries: list[dict[str, Any]], gone: set[int]
) -> None:
    removed = {i for i in gone if i < len(entries)}
    kept = [e for i, e in enumerate(entries) if i not in removed]
    less = scan(entries).without(entries, removed)
    if less is None:  # an id repeats: the caller walks again
        assert scan(entries).repeats
        return
    again = scan(kept)
    assert less.results == again.results
    assert less.counted() == again.counted()
    assert list(less.uses.items()) == list(again.uses.items())
    assert less.totals == again.totals
    assert (less.synthetic, less.prompts, less.reply_lines, less.reply_ids, less.calls) == (
        again.synthetic,
        again.prompts,
        again.reply_lines,
        again.reply_ids,
        again.calls,
    )


@settings(max_examples=300, deadline=None)
@given(TRANSCRIPT, st.integers(1, 5))
def test_the_load_walk_shares_strings_and_scans_in_one(
    entries: list[dict[str, Any]], chunk: int
) -> None:
    """The store's parse walk (chunk by chunk) finds what a scan of the whole finds, and
    shares what RepeatedStrings shares."""
    import copy

    from flower.stores.lines import RepeatedStrings
    from flower.stores.scan import ScanningStrings

    mine, theirs = copy.deepcopy(entries), copy.deepcopy(entries)
    walk, share = ScanningStrings(), RepeatedStrings()
    for start in range(0, len(entries), chunk):
        walk(mine[start : start + chunk])
        share(theirs[start : start + chunk])
    assert mine == theirs == entries
    found, again = walk.scan(), scan(mine)
    assert [(i, id(e), id(b)) for i, e, b in found.results] == [
        (i, id(e), id(b)) for i, e, b in again.results
    ]
    assert [(i, id(e)) for i, e, _ in found.counted()] == [
        (i, id(e)) for i, e, _ in again.counted()
    ]
    assert {k: (i, id(b)) for k, (i, b) in found.uses.items()} == {
        k: (i, id(b)) for k, (i, b) in again.uses.items()
    }
    assert (found.synthetic, found.prompts, found.reply_lines, found.reply_ids, found.calls) == (
        again.synthetic,
        again.prompts,
        again.reply_lines,
        again.reply_ids,
        again.calls,
    )
    assert found.repeats == again.repeats and found.totals == again.totals
    # the values RepeatedStrings makes one object are one object here too, and no others
    assert sharing(mine) == sharing(theirs)


def sharing(lines: list[dict[str, Any]]) -> list[int]:
    """For each value the sharing may touch, the position of the first value that is the
    same object: equal lists mean the same values were made one object."""
    first: dict[int, int] = {}
    out: list[int] = []

    def see(value: Any) -> None:
        out.append(first.setdefault(id(value), len(out)))

    for e in lines:
        for name in (*_REPEATED, "parentUuid", "sourceToolAssistantUUID", "requestId"):
            see(e.get(name))
        message = e.get("message")
        if isinstance(message, dict):
            for name in (*_REPEATED_IN_MESSAGE, "usage", "id"):
                see(message.get(name))
            content = message.get("content")
            for block in content if isinstance(content, list) else ():
                see(block.get("type") if isinstance(block, dict) else None)
    return out


DENIED = {"type": "user", "toolDenialKind": "permission-rule"}


# each example builds a store (a database and its schema): 60 by default, more with
# FLOWER_FUZZ_SCALE (tests/fuzz.py); 300 took 105 s of one worker's time
@settings(max_examples=examples(60), deadline=None)
@given(TRANSCRIPT)
@example(  # one refused line goes whole, another keeps its text: the facts moved
    [
        {**DENIED, "message": {"content": [{"type": "tool_result", "tool_use_id": "t1"}]}},
        {
            **DENIED,
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": "t2"}, {"type": "text"}]
            },
        },
    ]
)
def test_pruning_hands_on_the_scan_of_what_it_left(entries: list[dict[str, Any]]) -> None:
    """Pruning drops lines and blocks and heals calls; the scan it hands to expiry,
    masking and trimming is the scan of the lines it returns, however it got it."""
    import copy
    import tempfile
    from pathlib import Path

    from flower.stores.prune import PrunePolicy, PruningSessionStore

    with tempfile.TemporaryDirectory() as tmp:
        store = PruningSessionStore(
            Path(tmp) / "s.db", Path(tmp), prune=PrunePolicy(keep_denials=0)
        )
        try:
            lines = copy.deepcopy(entries)
            out, found = store._prune(lines, scan(lines))
            assert facts_of(found, out) == facts(out)
        finally:
            store.close()


def facts_of(found: Any, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "results": [(i, id(e), id(b)) for i, e, b in found.results],
        "counted": [(i, id(e), id(b)) for i, e, b in found.counted()],
        "uses": {k: (i, id(b)) for k, (i, b) in found.uses.items()},
        "synthetic": found.synthetic,
        "prompts": found.prompts,
        "calls": [c for _, c in found.calls],
        "totals": found.totals,
        "rounds": [found.rounds_after()[i] for i in range(len(entries))],
    }
