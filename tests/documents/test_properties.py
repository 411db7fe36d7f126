"""Properties of the four document parsers, over arbitrary and over markdown-like text.

- parse never raises, whatever the text;
- parse output is a fixed point: ``parse(x.to_markdown()) == x`` for every ``x = parse(t)``,
  so writing a document out and reading it back never changes or loses a section;
- an amendment appended to a brief, or made to a goal, survives that round trip whatever
  its text says, and leaves the other sections alone.

The default run uses hypothesis' normal budget. ``FLOWER_FUZZ_EXAMPLES=100000`` runs the
big one (skipped otherwise); ``benchmarks/parsers.py`` measures the same at speed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flower.records import handoff
from flower.records.handoff import Handoff
from flower.records.sections import PLACEHOLDER, bullets
from flower.workflow import brief
from flower.workflow import verdicts as goal
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Goal, Verdict

TABLES = [brief.ALIASES, goal.ALIASES, goal.VERDICT_ALIASES, handoff.ALIASES]
NEAR_MISSES = [
    "未知与假设条件", "目标是", "补充", "NEXT STEPS", "判定结果如下", "结论性", "Amendment",
    "Goals", "Scope creep", "Verdicts",
]  # fmt: skip
#: Per document its own headings (so sections of one document meet often), and all of them.
FOCI = [sorted({a for aliases in t.values() for a in aliases} | set(NEAR_MISSES)) for t in TABLES]
FOCI.append(sorted({a for focus in FOCI for a in focus}))
STYLES = [
    "## {}",
    "#{}",
    "###### {}",
    "**{}**",
    "**{}:**",
    "**{}**:",
    "__{}__",
    "{}:",
    "{}:",
    "{}",
    "3. {}",
    "1、{}",
    "2) {}",
    "- {}",
    "- [ ] {}:",
    "- **{}**",
    "* [x] 1. **{}** ",
    "\u3000## {}\t",
    "> ## {}",
]
PIECES = [
    PLACEHOLDER,
    "(未填) 以及更多",
    "```",
    "```python",
    "```markdown",
    "```md",
    "````",
    "~~~",
    "  ~~~~ bash",
    "`",
    "### 补充 · 人 · 2025-01-01 10:00(与上文冲突时以此为准)",
    "#补充·x",
    "- item",
    "- [ ] 待办",
    "[x] 完成",
    "1.5 秒",
    "-",
    "*",
    "**",
    "[此环境无法验证:macOS]",
    "已达成",
    "未达成",
    "无法验证",
    "not yet",
    "no",
    "yes",
    "1",
    "0",
    "true",
    "无",
    "none",
    "全部通过",
    "",
    " ",
    "\t",
    "\u3000",
    "\xa0",
    "\ufeff",
    "# 需求确认书",
    "> 引用",
    # the English pieces flower writes (tests/documents/test_languages.py)
    "(not filled in)",
    "### Amendment · added during the run · 2025-01-01 10:00 (wins where it contradicts)",
    "[cannot verify here: macOS]",
    "achieved",
    "not fully achieved",
    "unverifiable",
    "# The brief",
]
SEPARATORS = ["\n", "\n", "\n", "\r\n", "\r", "\u2028", "\x0c", "\x1e"]


FENCES = [
    "```",
    "```python",
    "```markdown",
    "```md",
    "````",
    "````markdown",
    "~~~",
    "\u3000```",
    "\xa0~~~ md",
]


@st.composite
def lines(draw: st.DrawFn, headings: list[str], depth: int = 0) -> str:
    kind = draw(st.integers(0, 5))
    if kind <= 1:
        style = draw(st.sampled_from(STYLES))
        line = style.format(draw(st.sampled_from(headings)))
        tail = draw(st.integers(0, 3))
        if tail == 1:
            line += draw(st.sampled_from([" ", ": ", ":", "** "])) + draw(st.sampled_from(PIECES))
        elif tail == 2 and depth < 3:
            line += draw(st.sampled_from([" ", ": ", ":"])) + draw(lines(headings, depth + 1))
        return line
    if kind <= 3:
        return draw(st.sampled_from(PIECES))
    if kind == 4:
        return draw(st.sampled_from(PIECES)) + draw(st.sampled_from(PIECES))
    return draw(st.text(max_size=12))


@st.composite
def blocks(draw: st.DrawFn, headings: list[str]) -> list[str]:
    """A line, or a fenced block (maybe unclosed, maybe nested) around a few lines."""
    if draw(st.integers(0, 4)):
        return [draw(lines(headings))]
    opened = draw(st.sampled_from(FENCES))
    inner = draw(st.lists(st.one_of(lines(headings), st.sampled_from(FENCES)), max_size=4))
    closer = draw(st.sampled_from(["", opened.strip()[:3], opened.strip()[:4], "`````"]))
    return [opened, *inner, closer]


@st.composite
def documents(draw: st.DrawFn) -> str:
    headings = draw(st.sampled_from(FOCI))
    parts = [line for block in draw(st.lists(blocks(headings), max_size=20)) for line in block]
    out = ""
    for part in parts:
        out += part + draw(st.sampled_from(SEPARATORS))
    return out


TEXTS = st.one_of(st.text(), documents())

PARSERS: dict[str, Callable[[str], Any]] = {
    "handoff": Handoff.parse,
    "brief": Brief.parse,
    "goal": Goal.parse,
    "verdict": Verdict.parse,
}


def fixed_point(text: str) -> None:
    for name, parse in PARSERS.items():
        first = parse(text)
        again = parse(first.to_markdown())
        assert again == first, name
        assert again.to_markdown() == first.to_markdown(), name


@given(TEXTS)
def test_parse_never_raises_and_is_a_fixed_point(text: str) -> None:
    fixed_point(text)


@given(documents(), TEXTS, st.sampled_from(["运行中补充", "人", "多 行"]))
def test_a_brief_amendment_survives_whatever_it_says(text: str, said: str, label: str) -> None:
    before = Brief.parse(text)
    # written by hand, unquoted: whatever it says stays in 未知与假设
    block = f"\n### 补充 · {label} · 2025-01-01 10:00(与上文冲突时以此为准)\n{said}\n"
    after = Brief.parse(before.to_markdown() + block)
    assert (after.goal, after.accept, after.bounds) == (before.goal, before.accept, before.bounds)
    body = "\n".join(said.strip().splitlines())
    assert after.unknowns.startswith(before.unknowns)
    assert after.unknowns.endswith(body)
    assert Brief.parse(after.to_markdown()) == after


@given(documents(), TEXTS)
def test_a_goal_amendment_stays_in_the_statement(text: str, said: str) -> None:
    g = Goal.parse(text)
    checks, statement = list(g.checks), g.statement
    g.amend(said, at=0)
    back = Goal.parse(g.to_markdown())
    assert back == g and back.checks == checks
    assert back.statement.startswith(statement)


@given(st.lists(st.text(), max_size=8))
def test_bullets_read_their_own_output_back(items: list[str]) -> None:
    first = bullets("\n".join(items))
    assert bullets("\n".join(f"- {item}" for item in first)) == first
    assert all(item == item.strip() and item for item in first)


@given(
    st.builds(
        Brief,
        goal=st.text(),
        accept=st.text(),
        bounds=st.text(),
        unknowns=st.text(),
    )
)
def test_any_constructed_brief_settles_after_one_pass(doc: Brief) -> None:
    once = Brief.parse(doc.to_markdown())
    assert Brief.parse(once.to_markdown()) == once


BIG = int(os.environ.get("FLOWER_FUZZ_EXAMPLES", "0") or 0)


@pytest.mark.skipif(BIG <= 0, reason="big fuzz run: set FLOWER_FUZZ_EXAMPLES=100000 to run it")
@pytest.mark.timeout(max(300, BIG // 20))  # about 300 inputs/s on a busy 2-CPU machine
def test_big_fuzz_run() -> None:
    @settings(
        max_examples=BIG,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(TEXTS)
    def run(text: str) -> None:
        fixed_point(text)

    run()
