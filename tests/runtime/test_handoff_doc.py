"""The handoff document, the overflow detector and the default handoff writer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from flower.plugin_types import HandoffRequest
from flower.records.handoff import (
    HANDOFF_PROMPT,
    PLACEHOLDER,
    SECTIONS,
    Handoff,
    degraded,
    handoff_name,
    is_overflow,
    save,
)
from flower.records.workbench import Workbench
from flower.testing import OVERFLOW_MESSAGE
from flower_plugins.handoff import write_handoff

GOOD = """好的,交接如下。

## 正在做
把 md 转 html 的脚本做完,解析器已写好。

**已决定**: 用 markdown-it,不自己写解析。

死路:
- 试过 mistune,表格渲染不对

```python
## 下一步
print("a heading inside code is not a heading")
```

3. 下一步 跑 tests/test_md.py,修表格
下一步 这一行只是正文

## 现场
scripts/md2html.py,分支 main
"""


def test_parse_reads_every_heading_style() -> None:
    h = Handoff.parse(GOOD, step="干活")
    assert h.doing == "把 md 转 html 的脚本做完,解析器已写好。"
    assert h.decided == "用 markdown-it,不自己写解析。"
    assert h.deadends == "- 试过 mistune,表格渲染不对"
    assert h.next == "跑 tests/test_md.py,修表格\n下一步 这一行只是正文"
    assert h.scene == "scripts/md2html.py,分支 main"
    assert h.step == "干活"
    assert h.complete() and h.missing() == []


def test_only_doing_and_next_are_required() -> None:
    assert Handoff.parse("## 正在做\nA\n## 下一步\nB").complete()
    assert Handoff.parse("## 正在做\nA\n## 死路\nC").missing() == ["next"]
    assert Handoff.parse("").missing() == ["doing", "next"]


def test_the_placeholder_counts_as_missing() -> None:
    template = Handoff(doing="A").to_markdown()
    assert PLACEHOLDER in template
    assert Handoff.parse(template).missing() == ["next"]


def test_an_unclosed_fence_drops_the_rest() -> None:
    cut = "## 正在做\nA\n```bash\nls\n## 下一步\nB\n"
    assert Handoff.parse(cut).missing() == ["next"]


def test_a_markdown_fence_around_the_whole_answer_is_unwrapped() -> None:
    assert Handoff.parse("```markdown\n## 正在做\nA\n## 下一步\nB\n```").complete()


def test_the_first_non_empty_repeat_wins_and_longer_aliases_are_not_shadowed() -> None:
    h = Handoff.parse(
        "## 下一步\n\n## 下一步\nfirst\n## 下一步\nsecond\n## 已经决定\nX\n## 正在做\nD"
    )
    assert h.next == "first"
    assert h.decided == "X"


def test_english_headings() -> None:
    h = Handoff.parse("**Doing:** port it\n**Next steps:** run tests\n## Dead ends\nnone")
    assert (h.doing, h.next, h.deadends) == ("port it", "run tests", "none")


def test_round_trip_through_disk(tmp_path: Path) -> None:
    h = Handoff.parse(GOOD, step="干活")
    path = h.write(tmp_path / "notes" / "交接-干活.md")
    assert h.path == path and not path.with_name(path.name + ".tmp").exists()
    back = Handoff.load(path)
    assert back == h and back is not None and back.path == path and not back.degraded
    assert Handoff.load(tmp_path / "none.md") is None


def test_markdown_has_every_section_heading_in_order() -> None:
    md = Handoff(doing="A", next="B", step="s").to_markdown()
    positions = [md.index(f"## {heading}") for heading in SECTIONS.values()]
    assert positions == sorted(positions)


def test_prompt_block_carries_the_sections_and_the_path(tmp_path: Path) -> None:
    h = Handoff(doing="A", next="B", step="干活")
    block = h.prompt_block()
    assert "## 正在做\nA" in block and "## 下一步\nB" in block and "## 死路" not in block
    h.write(tmp_path / "x.md")
    assert str(tmp_path / "x.md") in h.prompt_block()


def test_handoff_prompt_has_both_placeholders_and_every_heading() -> None:
    text = HANDOFF_PROMPT.format(used=812_345, window=1_000_000)
    assert "812345" in text and "1000000" in text
    assert Handoff.parse(text).sections().keys() == SECTIONS.keys()


@pytest.mark.parametrize(
    "text",
    [
        OVERFLOW_MESSAGE,
        "Prompt is too long · the request is ~1048577 tokens",
        "This model's maximum context length is 200000 tokens",
        "context_length_exceeded",
        "input length and max_tokens exceed context limit",
        "too many total text bytes",
    ],
)
def test_is_overflow(text: str) -> None:
    assert is_overflow("", None, text)


def test_is_overflow_ignores_other_errors() -> None:
    assert not is_overflow("API Error: 529 Overloaded", None, "")
    assert not is_overflow()


def test_degraded_is_complete_and_carries_the_task() -> None:
    task = "做一个 md 转 html 的脚本。" * 200
    d = degraded("干活", task, why="round failed")
    assert d.complete() and d.degraded and d.step == "干活"
    assert d.scene == task.strip()[:1200]
    assert "round failed" in d.doing


def test_save_writes_under_notes_and_archives_the_previous_one(tmp_path: Path) -> None:
    wb = Workbench(tmp_path / "ws", home=tmp_path / "wb")
    first = save(Handoff(doing="old", next="n", step="干活"), wb, now=0)
    assert first == wb.notes / "交接-干活.md" and handoff_name("干活") == "交接-干活.md"
    second = save(Handoff(doing="newer", next="n", step="干活"), wb, now=0)
    third = save(Handoff(doing="newest", next="n", step="干活"), wb, now=0)
    assert first == second == third
    archived = sorted((wb.notes / "archive" / "交接").iterdir())
    assert [p.name.startswith("交接-干活-") for p in archived] == [True, True]
    assert sorted(Handoff.load(p).doing for p in archived) == ["newer", "old"]  # type: ignore[union-attr]
    assert Handoff.load(third).doing == "newest"  # type: ignore[union-attr]


def test_a_step_name_cannot_leave_the_workbench(tmp_path: Path) -> None:
    wb = Workbench(tmp_path / "ws", home=tmp_path / "wb")
    path = save(Handoff(doing="d", next="n", step="../../etc/passwd"), wb)
    assert path.parent == wb.notes
    assert handoff_name("") == "交接-step.md"


@dataclass
class _Answer:
    ok: bool
    text: str = ""
    error: str | None = None


def _request(ask: object = None, *, overflow: bool = False) -> HandoffRequest:
    from flower.roles.agent import AgentSpec

    return HandoffRequest(
        runtime=None,
        spec=AgentSpec(name="w", instructions=""),
        step="干活",
        session_id="s-1",
        prompt="the task",
        used=900_000,
        window=1_000_000,
        overflow=overflow,
        ask=ask,  # type: ignore[arg-type]
    )


@pytest.mark.anyio
async def test_writer_asks_the_session_with_the_handoff_prompt() -> None:
    asked: list[str] = []

    async def ask(prompt: str) -> _Answer:
        asked.append(prompt)
        return _Answer(ok=True, text="## 正在做\nA\n## 下一步\nB")

    doc = await write_handoff(_request(ask))
    assert asked == [HANDOFF_PROMPT.format(used=900_000, window=1_000_000)]
    assert (doc.doing, doc.next, doc.degraded, doc.step) == ("A", "B", False, "干活")


@pytest.mark.anyio
async def test_writer_degrades_on_overflow_failure_or_missing_sections() -> None:
    asked: list[str] = []

    async def never(prompt: str) -> _Answer:  # the writer would swallow a raise: record instead
        asked.append(prompt)
        return _Answer(ok=True, text="## 正在做\nA\n## 下一步\nB")

    async def fails(prompt: str) -> _Answer:
        return _Answer(ok=False, error="API Error: 529")

    async def partial(prompt: str) -> _Answer:
        return _Answer(ok=True, text="## 死路\ntried X\n## 下一步\nB")

    async def raises(prompt: str) -> _Answer:
        raise OSError("boom")

    after_overflow = await write_handoff(_request(never, overflow=True))
    assert asked == []  # no round may run after an overflow
    assert after_overflow.degraded and "接口已拒收" in after_overflow.doing
    failed = await write_handoff(_request(fails))
    assert failed.degraded and "529" in failed.doing and failed.scene == "the task"
    mixed = await write_handoff(_request(partial))
    assert mixed.degraded and mixed.complete() and (mixed.deadends, mixed.next) == ("tried X", "B")
    crashed = await write_handoff(_request(raises))
    assert crashed.degraded and "OSError: boom" in crashed.doing
    no_session = await write_handoff(_request(None))
    assert no_session.degraded and "没有可用的会话" in no_session.doing
