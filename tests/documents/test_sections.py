"""The shared section reader: headings, fences, same-line text, amendments, bullets."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower.records import handoff
from flower.records.sections import (
    PLACEHOLDER,
    bullets,
    inert,
    load_text,
    parse_sections,
    save_text,
    scan,
)

ALIASES = {"目标": "goal", "边界": "bounds", "范围边界": "bounds", "未知": "u", "未知与假设": "u"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("## 目标\nA", {"goal": "A"}),
        ("#目标\nA", {"goal": "A"}),
        ("**目标**\nA", {"goal": "A"}),
        ("**目标**: A", {"goal": "A"}),
        ("**目标:** A", {"goal": "A"}),
        ("__目标__ A", {"goal": "A"}),
        ("目标:A", {"goal": "A"}),
        ("目标:A", {"goal": "A"}),
        ("目标\nA", {"goal": "A"}),
        ("3. 边界\nB", {"bounds": "B"}),
        ("1、边界 B", {"bounds": "B"}),
        ("2) 边界: B", {"bounds": "B"}),
        ("- **边界**: B", {"bounds": "B"}),
        ("- [ ] 边界: B", {"bounds": "B"}),
        ("**1. 边界**\nB", {"bounds": "B"}),
        ("\u3000## 目标\nA", {"goal": "A"}),
        ("## 目标 A\n正文", {"goal": "A\n正文"}),
        ("## 未知与假设\nU", {"u": "U"}),
        ("## 范围边界\nB", {"bounds": "B"}),
    ],
)
def test_heading_styles(text: str, expected: dict[str, str]) -> None:
    assert parse_sections(text, ALIASES) == expected


@pytest.mark.parametrize(
    "line",
    [
        "目标 是做一个转换器",  # a sentence starting with an alias, no marker
        "目标是做一个转换器",
        "## 目标是做",
        "## 目标*x",
        "- 目标 还没定",  # a bullet is not a marker that makes a sentence a heading
        "1.5 目标",
        "> ## 目标",
        "补充说明",
    ],
)
def test_not_headings(line: str) -> None:
    assert scan(f"{line}\n## 边界\nB", ALIASES).found == {"bounds": "B"}


def test_longer_alias_is_not_shadowed_and_first_non_empty_repeat_wins() -> None:
    text = "## 未知\n\n## 未知与假设\nfirst\n## 未知\nsecond"
    assert parse_sections(text, ALIASES) == {"u": "first"}


def test_a_label_of_the_open_section_is_body_but_a_section_heading_repeats() -> None:
    assert parse_sections("## 未知与假设\nA\n- 未知: B\n**未知**\nC", ALIASES) == {
        "u": "A\n- 未知: B\n**未知**\nC"
    }
    assert parse_sections("## 未知与假设\nA\n### 未知\nB", ALIASES) == {"u": "A\n### 未知\nB"}
    assert parse_sections("## 未知与假设\nA\n## 未知\nB", ALIASES) == {"u": "A"}  # a repeat
    assert parse_sections("## 未知与假设\n\n未知: B", ALIASES) == {"u": "B"}  # nothing to label
    assert parse_sections(f"## 未知\n{PLACEHOLDER}\n未知: B", ALIASES) == {"u": "B"}


def test_a_long_run_of_labels_reads_in_linear_time() -> None:
    import time

    text = "## 未知与假设\nA\n" + "- 未知: B\n" * 5000
    started = time.monotonic()
    found = parse_sections(text, ALIASES)
    assert time.monotonic() - started < 2  # rescanning the section per label: ~10 s
    assert found["u"].count("B") == 5000


def test_placeholder_counts_as_missing_but_not_inside_other_text() -> None:
    assert parse_sections(f"## 目标\n{PLACEHOLDER}\n## 边界\n{PLACEHOLDER} 以及 X", ALIASES) == {
        "bounds": f"{PLACEHOLDER} 以及 X"
    }


def test_same_line_text_that_is_a_heading_is_read_as_one() -> None:
    assert parse_sections("目标: 边界: x", ALIASES) == {"bounds": "x"}
    assert parse_sections("目标: 目标: x", ALIASES) == {"goal": "x"}
    assert parse_sections("**目标**: 1. 边界 清楚", ALIASES) == {"bounds": "清楚"}


def test_same_line_fence_opens_a_fence() -> None:
    assert parse_sections("目标: ```python\n## 边界\nB\n```\n## 未知\nU", ALIASES) == {"u": "U"}


def test_code_fences_are_dropped_and_an_unclosed_one_drops_the_rest() -> None:
    text = "## 目标\nA\n```python\n## 边界\nfake\n```\n~~~\n## 未知\nX\n~~~\nmore"
    assert parse_sections(text, ALIASES) == {"goal": "A\nmore"}
    assert parse_sections("## 目标\nA\n```bash\nls\n## 边界\nB\n", ALIASES) == {"goal": "A"}


def test_a_longer_closing_fence_closes_a_shorter_one() -> None:
    assert parse_sections("```\nx\n`````\n## 目标\nA", ALIASES) == {"goal": "A"}
    assert parse_sections("````\n```\n## 边界\nB\n````\n## 目标\nA", ALIASES) == {"goal": "A"}


def test_a_markdown_wrapper_is_unwrapped_and_code_inside_it_still_dropped() -> None:
    text = "```markdown\n## 目标\nA\n```python\n## 边界\nfake\n```\n## 未知\nU\n```\n后记"
    assert parse_sections(text, ALIASES) == {"goal": "A", "u": "U\n后记"}
    # an unclosed wrapper keeps its content: it is the document, not code
    assert parse_sections("```md\n## 目标\nA", ALIASES) == {"goal": "A"}


def test_amendment_marker_only_with_an_appendix() -> None:
    text = "## 目标\nA\n## 未知\nU\n### 补充 · 人 · 2025-01-01 10:00\n边界: 放宽\n```\nx"
    assert parse_sections(text, ALIASES, appendix="u") == {
        "goal": "A",
        "u": "U\n\n### 补充 · 人 · 2025-01-01 10:00\n边界: 放宽\n```\nx",
    }
    assert parse_sections(text, ALIASES) == {
        "goal": "A",
        "u": "U\n### 补充 · 人 · 2025-01-01 10:00",
        "bounds": "放宽",
    }


def test_scan_reports_headed_and_plain_text() -> None:
    read = scan("  看过了\n```\ncode\n```\n已达成  ", ALIASES)
    assert (read.headed, read.plain, read.found) == (False, "看过了\n已达成", {})
    assert scan("x\n目标:", ALIASES).headed


def test_never_raises_on_odd_input() -> None:
    for text in [
        "",
        "\ufeff## 目标\nA",
        "\r\n\r",
        "**",
        "#",
        "1.",
        "- [x]",
        "目标\x85边界",
        "`" * 9,
    ]:
        scan(text, ALIASES, appendix="u")
    assert parse_sections("\ufeff## 目标\nA", ALIASES) == {"goal": "A"}


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("- a\n* b\n+ c\n1. d\n2、e\n3) f\n4.g", ["a", "b", "c", "d", "e", "f", "g"]),
        ("- [ ] a\n- [x] b\n[X] c\n- - d\n1. [ ] 2. e", ["a", "b", "c", "d", "e"]),
        ("\n  \n-\n- [ ]\n", []),
        ("1.5 秒内\n3.10 版本\n-x\n**粗体**", ["1.5 秒内", "3.10 版本", "-x", "**粗体**"]),
    ],
)
def test_bullets(text: str, items: list[str]) -> None:
    assert bullets(text) == items


def test_inert_quotes_only_structural_lines() -> None:
    assert inert("目标: x\n普通\n```\n### 补充 · a", ALIASES) == (
        "> 目标: x\n普通\n> ```\n> ### 补充 · a"
    )


def test_handoff_keeps_its_old_imports() -> None:
    assert handoff.PLACEHOLDER == PLACEHOLDER and handoff.parse_sections is parse_sections


def test_save_and_load_text(tmp_path: Path) -> None:
    target = save_text(tmp_path / "a" / "b.md", "正文\n")
    assert load_text(target) == "正文\n"
    assert load_text(tmp_path / "none.md") is None
    assert load_text(tmp_path) is None  # a folder
    (tmp_path / "latin1.md").write_bytes(b"\xff\xfe bad")
    assert load_text(tmp_path / "latin1.md") is None
