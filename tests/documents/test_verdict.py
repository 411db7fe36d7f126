"""Verdict: the five-step reading order, the state-word table, feedback."""

from __future__ import annotations

import pytest

from flower.roles.factory import JUDGE_RULES
from flower.workflow.verdicts import ACHIEVED, NOT_YET, STATE_WORDS, UNREACHABLE, Verdict

FULL = """逐条跑过了。

## 结论
未达成

## 理由
表格渲染不对。

## 未通过
- a.html 含 `<table>`
2. 1.5 秒内完成
"""


def test_full_answer() -> None:
    v = Verdict.parse(FULL)
    assert v == Verdict(NOT_YET, "表格渲染不对。", ["a.html 含 `<table>`", "1.5 秒内完成"])
    assert v.ok and not v.achieved and not v.unreachable


@pytest.mark.parametrize(
    ("text", "state"),
    [
        # 1. the headed section, any alias
        ("## 结论\n已达成", ACHIEVED),
        ("判定: 未达成", NOT_YET),
        ("**判定结果**: 无法验证", UNREACHABLE),
        ("Verdict: achieved", ACHIEVED),
        ("## Conclusion\nnot yet", NOT_YET),
        ("## 结论\n已达成\n## 理由\n第 3 条做不到", ACHIEVED),  # only the conclusion counts
        # 2. no heading at all: a bare 1/true/0/false
        ("1", ACHIEVED),
        (" TRUE \n", ACHIEVED),
        ("0", NOT_YET),
        ("False", NOT_YET),
        # 3. the leftmost state word, longest first at each position
        ("未达成", NOT_YET),
        ("尚未达成", NOT_YET),
        ("没有达成", NOT_YET),
        ("无法达成", UNREACHABLE),
        ("不可达成", UNREACHABLE),
        ("做不到", UNREACHABLE),
        ("没法验证", UNREACHABLE),
        ("验证不了", UNREACHABLE),
        ("无法判定", UNREACHABLE),
        ("It is impossible here", UNREACHABLE),
        ("UNVERIFIABLE", UNREACHABLE),
        ("unreachable", UNREACHABLE),
        ("not achieved", NOT_YET),
        ("Not  yet", NOT_YET),
        ("no", NOT_YET),
        ("yes", ACHIEVED),
        ("achieved", ACHIEVED),
        ("看过了:已达成。没有未达成项", ACHIEVED),
        ("未达成,第二条做不到", NOT_YET),
        ("## 理由\n都跑过了,达成", ACHIEVED),  # no 结论 section: the whole text
        ("## 结论\n\n## 理由\n没达成", NOT_YET),  # an empty 结论 is no 结论
        # English words only on word boundaries
        ("note: annotation is fine", ""),
        ("yesterday it worked", ""),
        # 4. a standalone 1 / 0
        ("结论: 1", ACHIEVED),
        ("## 结论\n0 分", NOT_YET),
        ("## 理由\nx\n结果 1", ACHIEVED),
        # 5. nothing
        ("", ""),
        ("看起来还行", ""),
        ("## 结论\n不好说\n## 理由\n已达成", ""),
        ("第1条", ""),
        ("```\n已达成\n```", ""),  # code is not an answer
    ],
)
def test_state(text: str, state: str) -> None:
    v = Verdict.parse(text)
    assert v.state == state
    assert v.ok == bool(state)


def test_every_table_word_reads_as_its_state() -> None:
    for state, words in STATE_WORDS.items():
        for word in words:
            assert Verdict.parse(f"## 结论\n{word}").state == state, word


@pytest.mark.parametrize(
    ("body", "failed"),
    [
        ("无", []),
        ("- 无", []),
        ("None", []),
        ("全部通过。", []),
        ("无\n- a", ["无", "a"]),
        ("- a\n\n- [ ] b", ["a", "b"]),
    ],
)
def test_failed(body: str, failed: list[str]) -> None:
    for heading in ("未通过", "未通过项", "没通过", "Failed"):
        assert Verdict.parse(f"## 结论\n未达成\n## {heading}\n{body}").failed == failed


def test_reason_aliases_and_a_bare_answer_is_its_own_reason() -> None:
    assert Verdict.parse("结论: 未达成\n原因: 慢").reason == "慢"
    assert Verdict.parse("结论: 未达成\nReason: slow").reason == "slow"
    assert Verdict.parse("没达成,测试挂了").reason == "没达成,测试挂了"
    assert Verdict.parse("1").reason == ""


def test_the_judge_rules_template_answer_reads_back() -> None:
    answer = JUDGE_RULES.split("判断结果只输出下面三节", 1)[1].split("\n", 1)[1]
    answer = answer.replace("已达成 / 未达成 / 无法验证,三选一", "无法验证")
    v = Verdict.parse(answer.replace('全部通过就写"无"。', "无"))
    assert v.state == UNREACHABLE


@pytest.mark.parametrize("state", [ACHIEVED, NOT_YET, UNREACHABLE, ""])
def test_to_markdown_reads_back(state: str) -> None:
    v = Verdict(state, "因为 已达成 的说法不可信", ["x", "无"])
    assert Verdict.parse(v.to_markdown()) == v
    assert Verdict.parse(Verdict(state).to_markdown()) == Verdict(state)


def test_feedback_carries_verdict_reason_failed_and_says_carry_on() -> None:
    text = Verdict.parse(FULL).feedback()
    assert "没有达成" in text and "表格渲染不对。" in text
    assert "- a.html 含 `<table>`\n- 1.5 秒内完成" in text
    assert "接着做" in text and "不要推倒重来" in text
    assert "达不到" in Verdict(UNREACHABLE).feedback()
    vague = Verdict().feedback()
    assert "没有给出明确的结论" in vague and "没有写理由" in vague and "没通过的检查" not in vague


def test_the_rules_menu_copied_back_is_not_a_choice() -> None:
    from flower.roles.factory import JUDGE_RULES

    menu = JUDGE_RULES.split("## 结论\n", 1)[1].splitlines()[0]
    copied = Verdict.parse(f"## 结论\n{menu}\n## 理由\n看了")
    assert copied.state == "" and not copied.ok and not copied.achieved
    assert Verdict.parse("## 结论\n已达成 / 未达成 / 无法验证").state == ""
    assert Verdict.parse("## 结论\n已达成\n没有未达成或无法验证的项").state == "achieved"


@pytest.mark.parametrize(
    "said",
    [
        "未能达成",
        "没能达成",
        "尚未完全达成",
        "没有完全达成",
        "未全部达成",
        "不能达成",
        "部分达成",
        "基本达成",
        "目标还没有被完全达成",
        "not fully achieved",
        "It has not been achieved",
        "partially achieved",
    ],
)
def test_a_negated_or_partial_achieved_is_not_a_pass(said: str) -> None:
    # 达成 / achieved are in the table; a word before them in the same clause that says
    # "not" or "partly" must not let the work close as achieved.
    assert Verdict.parse(f"## 结论\n{said}").state == NOT_YET
    assert Verdict.parse(said).state == NOT_YET


@pytest.mark.parametrize(
    "said", ["达成", "全部达成", "目标非常完整地达成了", "测试都过了,达成", "已达成", "Achieved"]
)
def test_a_plain_achieved_still_passes(said: str) -> None:
    assert Verdict.parse(f"## 结论\n{said}").state == ACHIEVED
