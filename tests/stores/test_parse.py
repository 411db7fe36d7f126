"""The store's parse (orjson, the standard library where orjson refuses) reads every JSON
text as ``json.loads`` does, and a loaded line takes no more room than ``json.loads``'s."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flower.stores.engine import compact_lines, loads, pg_dumps, pg_loads
from flower.stores.sqlite import PARSE_CHARS, SqliteSessionStore

KEY: Any = {"project_key": "p", "session_id": "s"}

#: JSON values as the standard library writes and reads them, with what orjson refuses:
#: half a surrogate pair, integers past 64 bits, NaN and the infinities.
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=12)
    ),
    max_leaves=20,
)


def same(text: str | bytes) -> None:
    """``loads`` and ``json.loads`` read ``text`` to the same values, keys in the same
    order (compared as the standard library writes them: types, order and NaN count)."""
    mine, theirs = loads(text), json.loads(text)
    assert json.dumps(mine) == json.dumps(theirs)


def writings(value: Any) -> list[str | bytes]:
    """``value`` as the store writes it (orjson, when it can) and as others write it
    (the standard library, spaced or compact, ASCII or not)."""
    out: list[str | bytes] = [
        json.dumps(value),
        json.dumps(value, ensure_ascii=False, separators=(",", ":")),
    ]
    with contextlib.suppress(orjson.JSONEncodeError):
        out.append(orjson.dumps(value))
    return out


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_any_value_reads_as_the_standard_library_reads_it(value: Any) -> None:
    for text in writings(value):
        same(text)
        if isinstance(text, str) and "\\ud" not in text.lower():  # as bytes, if UTF-8
            same(text.encode("utf-8", "surrogatepass"))


def test_the_stores_own_writing_is_read_by_orjson_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row as the store writes it (orjson) never needs the slower parser."""
    value = {"a": [1, 2.5, -0.0, 1e-7, 2**63, -(2**63)], "é": "\u2028 x", "n": None}
    fallbacks: list[Any] = []
    plain = json.loads
    monkeypatch.setattr(json, "loads", lambda t, *a, **k: fallbacks.append(t) or plain(t))
    assert loads(orjson.dumps(value)) == value and fallbacks == []
    assert loads(json.dumps(value)) == value and len(fallbacks) == 1  # spaced: not orjson's


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": 2, "a": 3}',  # a repeated key: the last value, in the first place
        '["\\ud83d", "\\ud83d\\ude00", "\\u0000"]',  # half a pair, a whole one, a NUL
        "[18446744073709551616]",  # 2**64: one past what orjson reads exactly
        "[-9223372036854775809]",  # one below -2**63, 19 digits
        "98765432109876543210",  # every digit, the text's first character
        '{"n": 10203040506070809000}',
        "[1e400, -0.0]",
        "[NaN, Infinity, -Infinity]",
        "[18446744073709551615, -9223372036854775808, 1234567890123456789]",  # orjson's own
        '["a run of digits in a string: 12345678901234567890123"]',
        ' \n\t{"x" : [ 1 , 2 ] }\n',
    ],
    ids=[
        "repeated-key",
        "surrogates",
        "2**64",
        "below-2**63",
        "every-digit",
        "zeros",
        "overflow",
        "nan",
        "64-bits",
        "digits",
        "whitespace",
    ],
)
def test_what_orjson_refuses_reads_as_json_loads_reads_it(text: str) -> None:
    same(text)


@pytest.mark.parametrize("text", ['{"a": 1', "[1,]", "", "{'a': 1}"])
def test_text_that_is_not_json_raises_the_standard_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        loads(text)


def test_postgres_text_reads_back_through_the_same_parse() -> None:
    value = {"nul": "a\u0000b", "half": "\ud83d", "big": 2**70, "deep": [[["x"]]]}
    assert json.dumps(pg_loads(pg_dumps(value))) == json.dumps(value)


@pytest.mark.parametrize("keys", range(1, 16))
def test_a_compacted_line_is_the_same_line_no_larger(keys: int) -> None:
    text = orjson.dumps([{f"field{n}": {"n": n} for n in range(keys)}, "x", 3])  # the store's
    lines = compact_lines(loads(text))
    assert json.dumps(lines) == json.dumps(json.loads(text))
    assert sys.getsizeof(lines[0]) <= sys.getsizeof(json.loads(text)[0])


def test_a_store_load_parses_part_by_part_in_order(tmp_path: Path) -> None:
    """Rows of every size around ``PARSE_CHARS`` (one far larger), several parts a
    fetched chunk: every line comes back, in order, as ``json.loads`` reads it, and no
    line's dict is larger than ``json.loads``'s."""
    import asyncio

    sizes = [10, PARSE_CHARS // 3, PARSE_CHARS, 3 * PARSE_CHARS, 1, PARSE_CHARS - 50] * 12
    lines = [
        {
            "type": "user", "uuid": f"u{n}", "parentUuid": f"u{n - 1}", "sessionId": "s",
            "cwd": "/w", "version": "2.1", "isSidechain": False, "userType": "external",
            "timestamp": "2026-12-03T07:00:00.000Z", "odd": "\ud83d" if n % 7 == 0 else 2**70,
            "message": {"role": "user", "content": "x" * size},
        }
        for n, size in enumerate(sizes)
    ]  # fmt: skip
    store = SqliteSessionStore(tmp_path / "s.db")
    try:
        asyncio.run(store.append(KEY, lines))
        loaded = asyncio.run(store.load(KEY))
    finally:
        store.close()
    assert loaded is not None and len(loaded) == len(lines)
    assert json.dumps(loaded) == json.dumps(lines)
    for line in loaded:
        assert sys.getsizeof(line) <= sys.getsizeof(json.loads(json.dumps(line)))
