"""Goal: statement and checks, the unverifiable mark, amendments."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower.records.sections import PLACEHOLDER
from flower.workflow.verdicts import SECTIONS, UNVERIFIABLE, Goal

JUDGE = """我先看了环境:Linux,Python 3.11。

## 目标
docs/ 下每个 md 都有对应的 html。

## 判定清单
- [ ] `python conv.py a.md` 退出码为 0
2. a.html 含 `<h1>`
* [x] 1.5 秒内完成
- [此环境无法验证:要求 macOS] 在 macOS 上双击能打开
- 【此环境无法验证:没有浏览器】渲染正确

以上。
"""


def test_parse_reads_statement_and_one_check_per_line() -> None:
    g = Goal.parse(JUDGE)
    assert g.statement == "docs/ 下每个 md 都有对应的 html。"
    assert g.checks == [
        "`python conv.py a.md` 退出码为 0",
        "a.html 含 `<h1>`",
        "1.5 秒内完成",
        "[此环境无法验证:要求 macOS] 在 macOS 上双击能打开",
        "【此环境无法验证:没有浏览器】渲染正确",
        "以上。",
    ]
    assert g.complete()


def test_unverifiable_checks() -> None:
    g = Goal.parse(JUDGE)
    assert g.unverifiable == g.checks[3:5]
    assert Goal(
        checks=[f"[{UNVERIFIABLE}] x", "[此环境无法验证]", "无法验证的东西"]
    ).unverifiable == [
        f"[{UNVERIFIABLE}] x",
        "[此环境无法验证]",
    ]


@pytest.mark.parametrize(
    "heading", ["判定清单", "判定条件", "验收清单", "检查项", "判定", "Checks"]
)
def test_check_aliases(heading: str) -> None:
    assert Goal.parse(f"目标: G\n**{heading}**\n- a\n- b").checks == ["a", "b"]


def test_complete_needs_a_statement_and_a_check() -> None:
    assert Goal().missing() == ["目标", "判定清单"]
    assert Goal.parse("## 目标\nG").missing() == ["判定清单"]
    assert Goal.parse("## 判定清单\n- a").missing() == ["目标"]
    assert Goal.parse(Goal(statement="G").to_markdown()).missing() == ["判定清单"]


def test_a_copied_placeholder_is_not_a_check() -> None:
    assert Goal.parse(f"## 目标\nG\n## 判定清单\n- {PLACEHOLDER}\n- a").checks == ["a"]


def test_markdown_and_prompt_block() -> None:
    g = Goal(statement="G", checks=["a", "b"])
    md = g.to_markdown()
    assert md.index(f"## {SECTIONS['statement']}") < md.index(
        f"## {SECTIONS['checks']}\n\n- a\n- b"
    )
    assert Goal.parse(md) == g
    assert g.prompt_block() == "## 目标\nG\n\n## 判定清单\n- a\n- b"
    assert Goal(statement="G").prompt_block() == "## 目标\nG"


def test_write_and_load(tmp_path: Path) -> None:
    g = Goal.parse(JUDGE)
    path = g.write(tmp_path / "notes" / "目标.md")
    assert g.path == path
    back = Goal.load(path)
    assert back == g and back is not None and back.path == path
    assert Goal.load(tmp_path / "none.md") is None


def test_amend_appends_a_marked_paragraph_and_chains_into_write(tmp_path: Path) -> None:
    g = Goal.parse(JUDGE)
    path = g.amend("只要 Linux 上能跑就行", at=0).write(tmp_path / "目标.md")
    first, _, added = g.statement.partition("\n\n")
    assert first == "docs/ 下每个 md 都有对应的 html。"
    assert added.startswith("(人修改 19") and added.endswith(") 只要 Linux 上能跑就行")
    assert Goal.load(path) == g


def test_amend_keeps_heading_like_lines_inside_the_statement() -> None:
    g = Goal.parse(JUDGE)
    checks = list(g.checks)
    g.amend("改一下\n判定: 只要能跑\n```\n## 判定清单\n- 新检查", label="人", at=0)
    back = Goal.parse(g.to_markdown())
    assert back == g and back.checks == checks
    assert "> 判定: 只要能跑" in back.statement and "\n- 新检查" in back.statement


def test_amend_with_nothing_changes_nothing() -> None:
    g = Goal(statement="G")
    assert g.amend("  \n ") is g and g.statement == "G"
    assert Goal().amend("新目标", label="改", at=0).statement.endswith(") 新目标")
