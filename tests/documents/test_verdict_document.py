"""Verdict has the shape the seed gives all four documents: parse, missing/complete,
to_markdown, prompt_block, write/load (``Frozen``), like Brief, Goal and Handoff."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower.kernel.lang import using
from flower.records.handoff import Handoff
from flower.records.sections import Frozen
from flower.workflow.brief import Brief
from flower.workflow.verdicts import ACHIEVED, NOT_YET, UNREACHABLE, Goal, Verdict


@pytest.mark.parametrize("document", [Brief, Goal, Handoff, Verdict])
def test_every_document_offers_the_same_interface(document: type) -> None:
    for name in ("parse", "missing", "complete", "to_markdown", "prompt_block", "write", "load"):
        assert callable(getattr(document, name, None)), f"{document.__name__}.{name}"
    assert document().path is None


def test_verdict_shares_write_and_load_with_the_frozen_documents() -> None:
    assert issubclass(Verdict, Frozen)
    assert Verdict.write is Frozen.write and Verdict.load.__func__ is Frozen.load.__func__  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("verdict", "missing"),
    [
        (Verdict(ACHIEVED), []),  # the seed's bare ``1``: nothing more is needed
        (Verdict(NOT_YET, "表格不对"), []),
        (Verdict(NOT_YET, "", ["a.html 含 <table>"]), []),
        (Verdict(UNREACHABLE, "只能在 macOS 上验证"), []),
        (Verdict(NOT_YET), ["理由"]),  # sent back with nothing to go on
        (Verdict(UNREACHABLE, "  "), ["理由"]),
        (Verdict("", "说了很多"), ["结论"]),  # no clear state is never complete
        (Verdict(""), ["结论"]),
        (Verdict("maybe", "x"), ["结论"]),
    ],
)
def test_missing_and_complete(verdict: Verdict, missing: list[str]) -> None:
    with using("zh"):
        assert verdict.missing() == missing
        assert verdict.complete() is (not missing)


def test_missing_names_the_headings_in_the_language_in_effect() -> None:
    with using("en"):
        assert Verdict().missing() == ["Verdict"]
        assert Verdict(NOT_YET).missing() == ["Reason"]


def test_a_parsed_answer_is_checked_like_the_other_documents() -> None:
    assert Verdict.parse("## 结论\n未达成\n## 理由\n缺少测试").complete()
    assert not Verdict.parse("## 理由\n看起来差不多").complete()  # no conclusion at all


def test_prompt_block_quotes_the_non_empty_parts() -> None:
    v = Verdict(NOT_YET, "表格渲染不对。", ["a.html 含 `<table>`", " ", "1.5 秒内完成"])
    with using("zh"):
        assert v.prompt_block() == (
            "## 结论\n未达成\n\n## 理由\n表格渲染不对。\n\n"
            "## 未通过\n- a.html 含 `<table>`\n- 1.5 秒内完成"
        )
        assert Verdict(ACHIEVED).prompt_block() == "## 结论\n已达成"
        assert Verdict("", "不清楚").prompt_block() == "## 理由\n不清楚"  # no vague state quoted
        assert Verdict("maybe", "不清楚").prompt_block() == "## 理由\n不清楚"  # nor an odd one
    with using("en"):
        assert Verdict(UNREACHABLE, "macOS only").prompt_block() == (
            "## Verdict\nunreachable\n\n## Reason\nmacOS only"
        )


def test_a_prompt_block_reads_back_as_the_same_verdict() -> None:
    v = Verdict(UNREACHABLE, "只能在 macOS 上验证", ["在 macOS 上运行"])
    assert Verdict.parse(v.prompt_block()) == v


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(
    "verdict",
    [
        Verdict(NOT_YET, "表格渲染不对。\n第二行", ["a.html 含 `<table>`", "1.5 秒内完成"]),
        Verdict(ACHIEVED, "全部通过"),
        Verdict(UNREACHABLE, "macOS only"),
    ],
)
def test_write_and_load(tmp_path: Path, lang: str, verdict: Verdict) -> None:
    with using(lang):
        path = verdict.write(tmp_path / "rounds" / "裁判.md")
        expected = verdict.to_markdown()
    assert path == tmp_path / "rounds" / "裁判.md" and verdict.path == path
    assert path.read_text(encoding="utf-8") == expected
    back = Verdict.load(path)
    assert back == verdict and back is not None and back.path == path
    assert not list(path.parent.glob("*.tmp")), "written atomically, nothing left behind"


def test_load_of_a_missing_or_unreadable_file_is_none(tmp_path: Path) -> None:
    assert Verdict.load(tmp_path / "none.md") is None
    (tmp_path / "bad.md").write_bytes(b"\xff\xfe\x00bad")
    assert Verdict.load(tmp_path / "bad.md") is None


def test_an_unclear_verdict_stays_unclear_through_the_file(tmp_path: Path) -> None:
    back = Verdict.load(Verdict("", "说不清").write(tmp_path / "v.md"))
    assert back is not None and back.state == "" and not back.ok and not back.complete()
