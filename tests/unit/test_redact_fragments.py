"""Pieces of a key in a tool's output are hidden like the key: ``grep -o`` prints pieces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from flower.kernel.redact import FRAGMENT, Redactor

KEY = "sk-ant-api03-abcdefghijklmnop0123456789XYZ"
R = Redactor({KEY: "ANTHROPIC_API_KEY"})
MARK = "[已隐去 ANTHROPIC_API_KEY]"


def test_a_piece_of_the_key_is_hidden_and_the_rest_of_the_text_kept() -> None:
    assert R.tool_value(f"KEY={KEY[:20]}") == f"KEY={MARK}"  # grep -o 'KEY=.\{20\}'
    assert R.tool_value(f"middle {KEY[9:30]} end") == f"middle {MARK} end"
    assert R.tool_value(f"two {KEY[:14]} and {KEY[-14:]}") == f"two {MARK} and {MARK}"
    assert R.tool_value("sk-ant-api0") == "sk-ant-api0"  # shorter than a piece
    value = {"stdout": f"x {KEY[2:18]}", "stderr": "", "interrupted": False}
    assert R.tool_value(value) == {"stdout": f"x {MARK}", "stderr": "", "interrupted": False}
    clean = {"stdout": "nothing", "interrupted": False}
    assert R.tool_value(clean) is clean  # untouched output: the same object


@settings(max_examples=200, deadline=None)
@given(
    start=st.integers(0, len(KEY) - FRAGMENT),
    length=st.integers(FRAGMENT, len(KEY)),
    before=st.text(max_size=40),
    after=st.text(max_size=40),
)
def test_no_run_of_a_pieces_length_survives(
    start: int, length: int, before: str, after: str
) -> None:
    piece = KEY[start : start + length]
    out = R.tool_value(before + piece + after)
    for i in range(len(KEY) - FRAGMENT + 1):
        assert KEY[i : i + FRAGMENT] not in out
