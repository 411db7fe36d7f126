"""clean / cells / fit / wrap: nothing from the model or a tool can reach the terminal as
an escape sequence, and widths are counted in cells (CJK two, combining marks none)."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flower.kernel.sanitize import cells, clean, fit, wrap

from ..fuzz import examples

#: What must never be printed: ESC, every C0 control but \n and \t, DEL and C1.
FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

#: Text made to look like what tools print: escape sequences of every family mixed
#: with plain and CJK text.
PIECES = st.sampled_from(
    [
        "\x1b[31m", "\x1b[0m", "\x1b[2J", "\x1b[1;1H", "\x1b[?1049h", "\x1b[38;5;196m",
        "\x1b]0;owned\x07", "\x1b]8;;http://x\x1b\\", "\x1b]52;c;ZXZpbA==\x07",
        "\x1bP+q544e\x1b\\", "\x1b_apc\x1b\\", "\x1b^pm\x1b\\", "\x1bXsos\x1b\\",
        "\x1b(0", "\x1b)B", "\x1b#8", "\x1bc", "\x1b7", "\x1b8", "\x1bM",
        "\x9b31m", "\x9d0;t\x9c", "\x90q\x9c", "\x1b", "\x1b[", "\x1b]", "\r", "\r\n",
        "\x07", "\x08", "\x00", "\x7f", "\x85", "\t", "\n", "plain", " ", "中文", "é", "e\u0301",
    ]
)  # fmt: skip
HOSTILE = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=30).map("".join)
#: Text without control characters: must come through untouched.
PLAIN = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs")) | st.sampled_from("\n\t"),
    max_size=200,
)


@settings(max_examples=examples(200), deadline=None)
@given(HOSTILE)
@example("\x1b]0;title never ends")
@example("\x1b[" + "1;" * 100)
def test_clean_leaves_no_control_but_newline_and_tab(text: str) -> None:
    out = clean(text)
    assert not FORBIDDEN.search(out), repr(out)
    assert clean(out) == out  # a fixed point


@settings(max_examples=examples(150), deadline=None)
@given(PLAIN)
def test_plain_text_passes_unchanged(text: str) -> None:
    assert clean(text) == text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "red"),  # CSI whole, not "[31mred[0m"
        ("a\x1b]0;evil title\x07b", "ab"),  # OSC ended by BEL
        ("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),  # OSC ended by ST
        ("a\x1bPq#0;2;0;0;0\x1b\\b", "ab"),  # DCS (sixel)
        ("a\x1b_payload\x1b\\b", "ab"),  # APC
        ("a\x1b(0b", "ab"),  # charset switch: would turn letters into line drawing
        ("a\x9b2Jb", "ab"),  # 8-bit CSI
        ("a\x9d0;t\x9cb", "ab"),  # 8-bit OSC and ST
        ("a\x1b]0;unterminated", "a"),  # swallowed to the end, as a terminal would
        ("line\r\nnext", "line\nnext"),
        ("50%\r100%", "50%100%"),
        ("tab\there", "tab\there"),
        ("bell\x07 back\x08space", "bell backspace"),
    ],
)
def test_sequences_are_stripped_whole(raw: str, shown: str) -> None:
    assert clean(raw) == shown


def test_markup_is_not_special() -> None:
    assert clean("[bold red]not markup[/]") == "[bold red]not markup[/]"


@pytest.mark.parametrize(
    ("text", "width"),
    [("abc", 3), ("中文", 4), ("한국어", 6), ("ｱｲｳ", 3), ("e\u0301", 1), ("Ａ", 2), ("", 0)],
)
def test_cells(text: str, width: int) -> None:
    assert cells(text) == width


def test_fit_cuts_by_cells_and_never_halves_a_wide_char() -> None:
    assert fit("hello", 10) == "hello"
    assert fit("hello world", 8) == "hello..."
    assert fit("中文中文中文", 8) == "中文..."  # 2+2+3 = 7: a third 中 would be 9
    assert cells(fit("中文中文中文", 8)) == 7
    assert fit("abc", 2) == ".."
    assert fit("abc", 0) == ""


@settings(max_examples=examples(150), deadline=None)
@given(st.text(alphabet=st.sampled_from("ab 中文é\u0301x"), max_size=80), st.integers(1, 30))
@example(text="\u0301 aaa中", width=4)  # a word carried past a space break, then a wide char
def test_fit_and_wrap_never_exceed_the_width(text: str, width: int) -> None:
    assert cells(fit(text, width)) <= width
    rows = wrap(text, max(2, width))
    assert all(cells(row) <= max(2, width) for row in rows)
    # nothing but spaces is lost in wrapping
    assert "".join(rows).replace(" ", "") == text.replace(" ", "")


def test_wrap_keeps_words_and_breaks_cjk_anywhere() -> None:
    assert wrap("hello world again", 11) == ["hello world", "again"]
    assert wrap("中文中文中文", 5) == ["中文", "中文", "中文"]  # 5 cells hold two
    assert wrap("a\nb", 10) == ["a", "b"]
    assert wrap("", 10) == [""]
    assert wrap("\tx", 10) == ["    x"]
    assert wrap("a\tb", 10) == ["a   b"]
