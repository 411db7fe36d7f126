"""The seed's Chinese is the contract: with no flag, no FLOWER_LANG and no saved choice,
every text flower writes for a person or a model is byte for byte what it was before
flower spoke English. ``zh_defaults.json`` was written by :func:`lang_texts.gather`
from the code as it was then (the commit before languages); and every text that follows
the language has an English that leaves no Chinese but the keys (file and step names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flower.kernel.lang import using

from ..workflow.scripts_en import chinese
from .lang_texts import gather, is_constant

SNAPSHOT = Path(__file__).with_name("zh_defaults.json")


def expected() -> dict[str, str]:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_the_default_is_the_seeds_chinese_byte_for_byte(tmp_path: Path) -> None:
    texts = gather(tmp_path)
    want = expected()
    assert sorted(texts) == sorted(want)
    changed = [name for name in want if texts[name] != want[name]]
    assert changed == [], {name: (want[name], texts[name]) for name in changed[:3]}


@pytest.mark.parametrize("how", ["zh", "env", "saved"])
def test_chinese_chosen_any_way_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "env":
        monkeypatch.setenv("FLOWER_LANG", "zh_CN.UTF-8")
    elif how == "saved":
        saved = Path(str(tmp_path / "config")) / "flower" / ".env"
        saved.parent.mkdir(parents=True)
        saved.write_text("FLOWER_LANG=zh\n")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    with using("zh" if how == "zh" else None):
        assert gather(tmp_path) == expected()


def test_english_leaves_no_chinese_but_the_keys(tmp_path: Path) -> None:
    with using("en"):
        texts = gather(tmp_path)
    zh = expected()
    translated = {name: text for name, text in texts.items() if not is_constant(name)}
    assert len(translated) > 60
    left = {name: chinese(text) for name, text in translated.items() if chinese(text)}
    assert left == {}
    same = [n for n, text in translated.items() if text == zh[n] and chinese(zh[n])]
    assert same == []
