"""``text_start``: the start of a result's text without joining a large result whole
(pruning asks every result whether it starts like a denial or an interrupt)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from flower.stores.transcript import result_text, text_start

blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=8)),
    st.just({"type": "image", "source": {}}),
)
contents = st.one_of(st.text(max_size=20), st.lists(blocks, max_size=5), st.none(), st.integers())


@given(contents, st.integers(min_value=0, max_value=30))
def test_it_is_the_start_of_the_joined_text(content: Any, n: int) -> None:
    assert text_start(content, n) == result_text(content)[:n]
