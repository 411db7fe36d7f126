"""The scripted model's token estimate against the only published per-kind counts found
(claudeguide.io, "Token Counting: Why Your Estimates Are Wrong": 500 characters of each
kind counted with the API's ``count_tokens``). The published texts are not given, so the
samples here are of the same kinds, not the same strings."""

from __future__ import annotations

import pytest

from flower.testing.tokens import count_tokens

SAMPLES = {  # kind -> (a sample repeated to 500 characters, the published count)
    "prose": ("The committee met on Tuesday to review the proposal for the new branch. ", 118),
    "python": (
        "def parse(self, text: str) -> list[int]:\n"
        '    return [int(x) for x in text.split(",") if x]\n',
        161,
    ),
    "json": ('{"parentUuid":"4d2196f2-bd5f-45fd","isSidechain":false,"cwd":"/Users/x"}', 198),
    "html": (
        '<div class="card"><a href="/docs/intro.html">Intro</a>'
        '<span id="n1">12</span></div>\n',
        217,
    ),
    "markdown": (
        "## Setup\n\n- Install the package with `pip install flower`.\n"
        "- Run **flower demo** to see it.\n\n",
        143,
    ),
    "korean": ("안녕하세요. 오늘 회의에서 새로운 지점에 대한 제안을 검토했습니다. ", 312),
}  # fmt: skip


def sample(kind: str) -> str:
    return (SAMPLES[kind][0] * 40)[:500]


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_each_kind_is_within_a_fifth_of_the_published_count(kind: str) -> None:
    published = SAMPLES[kind][1]
    assert abs(count_tokens(sample(kind)) / published - 1) < 0.2


def test_it_beats_four_characters_a_token_where_that_rule_fails() -> None:
    """Code, JSON, HTML and CJK are most of an agent's context: bytes / 4 is 22-60 % low."""
    for kind in ("python", "json", "html", "korean"):
        published = SAMPLES[kind][1]
        mine = abs(count_tokens(sample(kind)) / published - 1)
        rule = abs(len(sample(kind)) / 4 / published - 1)
        assert mine < rule, kind


def test_an_empty_text_is_no_tokens_and_any_text_at_least_one() -> None:
    assert count_tokens("") == 0
    assert count_tokens(".") == 1
    long = "word " * 2000  # past the cache's size limit: counted the same way
    assert count_tokens(long) == pytest.approx(2000, rel=0.05)
