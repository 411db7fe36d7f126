"""Brief: the four sections, their aliases, the freeze, the amendments."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flower.human.records import amendment_block
from flower.records.sections import PLACEHOLDER
from flower.workflow.brief import SECTIONS, Brief

CLARIFIED = """明白了,整理如下。

## 目标
把 docs/ 下的 md 转成 html。

**验收标准**: `python conv.py a.md` 产出 a.html

3. 边界
- 不动 docs/ 之外的文件

未知与假设: 假设只有 GFM 表格

```python
# 澄清者顺手贴的代码
## 目标
print("not a heading")
```
"""


def test_parse_reads_the_four_sections() -> None:
    b = Brief.parse(CLARIFIED)
    assert b == Brief(
        goal="把 docs/ 下的 md 转成 html。",
        accept="`python conv.py a.md` 产出 a.html",
        bounds="- 不动 docs/ 之外的文件",
        unknowns="假设只有 GFM 表格",
    )
    assert b.complete() and b.missing() == []


@pytest.mark.parametrize(
    ("heading", "name"),
    [
        ("未知与假设", "unknowns"),
        ("未知项与假设", "unknowns"),
        ("已知未知", "unknowns"),
        ("未知项", "unknowns"),
        ("假设", "unknowns"),
        ("未知", "unknowns"),
        ("验收标准", "accept"),
        ("验收条件", "accept"),
        ("完成标准", "accept"),
        ("验收", "accept"),
        ("边界", "bounds"),
        ("范围边界", "bounds"),
        ("不做什么", "bounds"),
        ("范围", "bounds"),
        ("目标", "goal"),
        ("Goal", "goal"),
        ("Acceptance criteria", "accept"),
        ("acceptance", "accept"),
        ("BOUNDS", "bounds"),
        ("Scope", "bounds"),
        ("Unknowns", "unknowns"),
        ("Assumptions", "unknowns"),
    ],
)
def test_aliases(heading: str, name: str) -> None:
    b = Brief.parse(f"## {heading}\n内容")
    assert b.sections() == {n: ("内容" if n == name else "") for n in SECTIONS}


def test_missing_names_the_empty_sections_in_document_order() -> None:
    assert Brief().missing() == ["目标", "验收标准", "边界", "未知与假设"]
    assert Brief.parse("## 未知\nU\n## 目标\nG").missing() == ["验收标准", "边界"]
    assert not Brief.parse("## 未知\nU\n## 目标\nG").complete()


def test_a_copied_placeholder_counts_as_missing() -> None:
    template = Brief(goal="G").to_markdown()
    assert template.count(PLACEHOLDER) == 3
    assert Brief.parse(template).missing() == ["验收标准", "边界", "未知与假设"]


def test_an_unclosed_fence_drops_what_follows() -> None:
    cut = "## 目标\nG\n## 验收标准\nA\n```bash\nls\n## 边界\nB\n## 未知与假设\nU"
    assert Brief.parse(cut).missing() == ["边界", "未知与假设"]


def test_the_first_non_empty_repeat_wins() -> None:
    b = Brief.parse("## 目标\n\n## 目标\n第一\n## 目标\n第二")
    assert b.goal == "第一"


def test_a_label_inside_its_own_section_is_kept_not_dropped_as_a_repeat() -> None:
    # The clarifier is told to write its assumptions under 未知与假设; "- 假设:…" there
    # is a label within the section, and dropping it as a "repeat" loses the premise.
    b = Brief.parse(
        "## 目标\nA\n## 验收标准\n- 验收:pytest 全绿\n- 验收:README 有用法\n## 边界\nC\n"
        "## 未知与假设\n- 换行符没问到\n- 假设:用 LF\n**未知**:要不要支持 Windows\n"
        "### 假设\n只支持 UTF-8"
    )
    assert b.accept == "pytest 全绿\n- 验收:README 有用法"
    assert "用 LF" in b.unknowns and "Windows" in b.unknowns and "UTF-8" in b.unknowns
    assert Brief.parse(b.to_markdown()) == b


def test_to_markdown_has_a_title_and_every_heading_in_order() -> None:
    md = Brief(goal="G", unknowns="U").to_markdown()
    assert md.startswith("# ")
    positions = [md.index(f"## {heading}\n") for heading in SECTIONS.values()]
    assert positions == sorted(positions)
    assert Brief.parse(md) == Brief(goal="G", unknowns="U")


def test_prompt_block_has_only_the_non_empty_sections() -> None:
    block = Brief(goal="G", bounds="B").prompt_block()
    assert block == "## 目标\nG\n\n## 边界\nB"
    assert Brief().prompt_block() == ""


def test_write_freezes_atomically_and_load_reads_it_back(tmp_path: Path) -> None:
    b = Brief.parse(CLARIFIED)
    path = b.write(tmp_path / "deep" / "需求.md")
    assert path == tmp_path / "deep" / "需求.md" and b.path == path
    assert sorted(os.listdir(path.parent)) == ["需求.md"]  # no temporary left behind
    back = Brief.load(path)
    assert back == b and back is not None and back.path == path


def test_load_returns_none_when_it_cannot_read(tmp_path: Path) -> None:
    assert Brief.load(tmp_path / "none.md") is None
    assert Brief.load(tmp_path) is None
    (tmp_path / "bad.md").write_bytes(b"## \xd5\xe2\xca\xc7 gbk")
    assert Brief.load(tmp_path / "bad.md") is None


def test_a_hand_edited_file_is_read(tmp_path: Path) -> None:
    path = Brief(goal="G", accept="A", bounds="B", unknowns="U").write(tmp_path / "需求.md")
    path.write_text(path.read_text(encoding="utf-8").replace("\nB\n", "\n放宽到 B2\n"), "utf-8")
    loaded = Brief.load(path)
    assert loaded is not None and loaded.bounds == "放宽到 B2"


def test_channel_amendments_land_in_unknowns_and_survive_write_parse_prompt(
    tmp_path: Path,
) -> None:
    path = Brief(goal="G", accept="A", bounds="只改 docs/", unknowns="U").write(
        tmp_path / "需求.md"
    )
    with path.open("a", encoding="utf-8") as fh:
        fh.write(amendment_block("边界: 也可以改 scripts/\n## 目标\n```\n代码\n", at=0))
        fh.write(amendment_block("第二条", label="人", at=60))
    b = Brief.load(path)
    assert b is not None
    assert (b.goal, b.accept, b.bounds) == ("G", "A", "只改 docs/")
    assert b.unknowns.startswith("U\n\n### 补充 · 运行中补充 · ")
    assert (
        "(与上文冲突时以此为准)\n> 边界: 也可以改 scripts/\n> ## 目标\n> ```\n> 代码" in b.unknowns
    )
    assert b.unknowns.count("### 补充 · ") == 2 and b.unknowns.endswith("第二条")
    assert "边界: 也可以改 scripts/" in b.prompt_block()
    b.write(path)
    assert Brief.load(path) == b


def test_a_hand_written_amendment_is_kept_verbatim_even_when_it_says_a_heading() -> None:
    frozen = Brief(goal="G", accept="A", bounds="只改 docs/", unknowns="U").to_markdown()
    said = "### 补充 · 手写 · 2025-01-01 10:00\n边界: 也可以改 scripts/\n## 目标\n```\n代码"
    b = Brief.parse(frozen + said + "\n")
    assert (b.goal, b.bounds, b.unknowns) == ("G", "只改 docs/", f"U\n\n{said}")
    assert Brief.parse(b.to_markdown()) == b
    # without the marker the same text would be read as sections (first non-empty wins)
    assert Brief.parse(frozen + said.split("\n", 1)[1]).bounds == "只改 docs/"


def test_an_amendment_fills_an_empty_unknowns() -> None:
    b = Brief.parse(Brief(goal="G").to_markdown() + amendment_block("U 补上", at=0))
    assert b.unknowns.startswith("### 补充 · 运行中补充 · 19")
    assert b.unknowns.endswith("U 补上") and b.missing() == ["验收标准", "边界"]
