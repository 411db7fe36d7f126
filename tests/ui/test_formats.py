"""The short forms of the run view, at their boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower.kernel.formats import duration, gist, kilo, plural, tilde


def test_counts_and_token_totals() -> None:
    assert (plural(1, "turn"), plural(0, "turn"), plural(2, "turn")) == (
        "1 turn",
        "0 turns",
        "2 turns",
    )
    assert [kilo(n) for n in (None, 0, 999, 1000, 80_249)] == ["0", "0", "999", "1.0K", "80.2K"]


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(-5, "0s"), (0.4, "0s"), (59.4, "59s"), (59.6, "1m 00s"), (65, "1m 05s"),
     (3599, "59m 59s"), (3600, "1h 00m"), (5400, "1h 30m"), (7199, "1h 59m"),
     (7620, "2h 07m")],
)  # fmt: skip
def test_durations_round_to_the_second_and_change_unit_at_a_minute_and_an_hour(
    seconds: float, shown: str
) -> None:
    assert duration(seconds) == shown


def test_the_home_folder_is_written_as_a_tilde_only_at_a_path_boundary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "me"
    monkeypatch.setenv("HOME", str(home))
    assert tilde(home / "proj") == "~/proj" and tilde(home) == "~"
    assert tilde(f"{home}2/proj") == f"{home}2/proj"  # a sibling that starts alike
    monkeypatch.setenv("HOME", "/")
    assert tilde("/srv/proj") == "/srv/proj"


def test_a_tool_calls_gist_is_its_most_telling_input() -> None:
    assert gist({"description": "d", "command": "ls -la"}) == "ls -la"
    assert gist({"command": "", "file_path": "a.py"}) == "a.py"  # empty values are skipped
    assert gist({"x": 1, "y": "z"}) == "x=1, y=z"
    assert gist("line one\nline two") == "line one line two"
    assert gist(None) == ""
    assert len(gist({"command": "x" * 500}, limit=40)) <= 40
    assert len(gist({"command": "y" * 500})) == 100  # the default: one line of a terminal
