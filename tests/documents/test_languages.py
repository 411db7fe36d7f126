"""The documents in both languages: whatever language wrote a document, either reads it.

- a document written in one language parses back to the same document in the other
  (a brief frozen by a Chinese run is the same brief to an English one, and the reverse);
- headings of both languages mixed in one answer are all read;
- English output is a fixed point too, over the same generated inputs as
  ``test_properties.py``;
- the pieces flower adds (a verdict's state words, the unverifiable mark, an amendment
  block, a handoff's title and its mechanical note, the audit's section) read back in
  both languages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flower.human.records import amendment_block
from flower.kernel.lang import using
from flower.records.handoff import SECTIONS as HANDOFF_ZH
from flower.records.handoff import SECTIONS_EN as HANDOFF_EN
from flower.records.handoff import Handoff, degraded
from flower.workflow.brief import SECTIONS as BRIEF_ZH
from flower.workflow.brief import SECTIONS_EN as BRIEF_EN
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Goal, Verdict

from .test_properties import PARSERS, TEXTS, fixed_point

LANGS = st.sampled_from(["zh", "en"])


def written(doc: Any, lang: str) -> str:
    with using(lang):
        return str(doc.to_markdown())


@given(TEXTS, LANGS, LANGS)
def test_what_one_language_writes_the_other_reads(text: str, wrote: str, reads: str) -> None:
    for name, parse in PARSERS.items():
        doc = parse(text)
        with using(reads):
            back = parse(written(doc, wrote))
        assert back == doc, name
        assert written(back, reads) == written(doc, reads), name


@given(TEXTS)
def test_english_output_is_a_fixed_point(text: str) -> None:
    with using("en"):
        fixed_point(text)


SECTION_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=30
).filter(lambda s: s.strip() and not s.strip().startswith(("#", "`", "~", "-", "*", ">")))


@given(
    st.lists(LANGS, min_size=4, max_size=4),
    st.lists(SECTION_TEXT, min_size=4, max_size=4),
)
def test_a_brief_with_headings_of_both_languages_is_read_whole(
    langs: list[str], bodies: list[str]
) -> None:
    fields = list(BRIEF_ZH)
    lines = []
    for field, lang, body in zip(fields, langs, bodies, strict=True):
        heading = (BRIEF_EN if lang == "en" else BRIEF_ZH)[field]
        lines += [f"## {heading}", f"x{body}"]
    brief = Brief.parse("\n".join(lines))
    assert brief.complete()
    assert [getattr(brief, f) for f in fields] == [f"x{b}".strip() for b in bodies]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_handoff_mixing_headings_and_its_title_and_note_read_back(
    lang: str, tmp_path: Path
) -> None:
    mixed = (
        f"## {HANDOFF_EN['doing']}\nwriting the parser\n## {HANDOFF_ZH['next']}\n跑测试\n"
        f"## {HANDOFF_EN['deadends']}\nregex only\n"
    )
    doc = Handoff.parse(mixed, step="干活")
    assert (doc.doing, doc.next, doc.deadends) == ("writing the parser", "跑测试", "regex only")
    with using(lang):
        mechanical = degraded("干活", "the task", why="overflow")
        mechanical.audit = "- a check"
        path = mechanical.write(tmp_path / "交接-干活.md")
    loaded = Handoff.load(path)
    assert loaded is not None and loaded.degraded and loaded.step == "干活"
    assert loaded == mechanical and loaded.audit == "- a check"


@pytest.mark.parametrize(
    ("said", "state"),
    [
        ("## Verdict\nachieved\n## Reason\nok", "achieved"),
        ("## Verdict\nnot yet\n## Failed checks\n- x", "not_yet"),
        ("## Verdict\nnot fully achieved", "not_yet"),
        ("## Verdict\npartially achieved: the tests pass", "not_yet"),
        ("## Verdict\ncannot be verified here (macOS only)", "unreachable"),
        ("## Verdict\nunverifiable", "unreachable"),
        ("## Verdict\nthe goal cannot be achieved", "unreachable"),
        ("## Verdict\nachieved / not yet / unverifiable: pick one", ""),
        ("## 结论\n已达成\n## Reason\nchecked", "achieved"),
        ("## Verdict\n未达成\n## 理由\n没证据", "not_yet"),
    ],
)
def test_verdicts_read_in_both_languages(said: str, state: str) -> None:
    assert Verdict.parse(said).state == state


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("state", ["achieved", "not_yet", "unreachable", ""])
def test_a_verdict_written_in_either_language_reads_back(lang: str, state: str) -> None:
    verdict = Verdict(state=state, reason="r", failed=["a check"] if state else [])
    for reads in ("zh", "en"):
        with using(reads):
            assert Verdict.parse(written(verdict, lang)) == verdict


@pytest.mark.parametrize(
    "check",
    ["runs on macOS [cannot verify here: Linux box]", "runs on macOS [此环境无法验证:Linux]",
     "GPU speed [Cannot be verified here: no GPU]", "GPU [unverifiable here: no GPU]"],
)  # fmt: skip
def test_the_unverifiable_mark_reads_in_both_languages(check: str) -> None:
    goal = Goal.parse(f"## Goal\ng\n## Checks\n- {check}\n- plain check")
    assert goal.unverifiable == [check]


@pytest.mark.parametrize("wrote", ["zh", "en"])
@pytest.mark.parametrize("reads", ["zh", "en"])
def test_an_amendment_in_either_language_lands_in_the_last_section(wrote: str, reads: str) -> None:
    with using(wrote):
        brief = Brief(goal="g", accept="a", bounds="b", unknowns="u")
        text = brief.to_markdown() + amendment_block("Goal: a web page\n## 边界\nall", at=0)
    with using(reads):
        back = Brief.parse(text)
        assert (back.goal, back.accept, back.bounds) == ("g", "a", "b")
        assert back.unknowns.startswith("u") and "a web page" in back.unknowns
        assert Brief.parse(back.to_markdown()) == back


def test_english_placeholders_count_as_empty() -> None:
    with using("en"):
        empty = Brief().to_markdown()
    assert "(not filled in)" in empty
    assert Brief.parse(empty) == Brief() and not Brief.parse(empty).complete()
    with using("zh"):
        assert Goal.parse(written(Goal(), "en")) == Goal()
