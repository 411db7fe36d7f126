"""An amendment appended by the channel stays inside the brief (Part A's parser).

The block header is no section heading and every remark line is quoted, so a remark
that looks like a heading or opens a code fence cannot eat the brief's sections.
"""

from __future__ import annotations

from pathlib import Path

from flower.human.channel import HumanChannel
from flower.workflow.brief import Brief

BRIEF = "# 需求\n## 目标\n做个计算器\n## 验收标准\n1+1=2\n## 边界\n只做命令行\n## 未知与假设\n无\n"


def test_amendments_survive_parse_write_and_prompt_block(tmp_path: Path) -> None:
    path = tmp_path / "需求.md"
    path.write_text(BRIEF, encoding="utf-8")
    ch = HumanChannel(amend_path=path)
    ch.send("目标:也要网页版")
    ch.amend("```\n边界 放宽到 GUI", label="人修改")

    brief = Brief.load(path)
    assert brief is not None and brief.complete()
    assert (brief.goal, brief.accept, brief.bounds) == ("做个计算器", "1+1=2", "只做命令行")
    for line in ("> 目标:也要网页版", "> ```", "> 边界 放宽到 GUI", "补充 · 人修改 ·"):
        assert line in brief.unknowns and line in brief.prompt_block()
    again = Brief.load(brief.write(tmp_path / "copy.md"))
    assert again == brief
