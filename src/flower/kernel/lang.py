"""The language flower speaks: to the models (rules, prompts, deny texts) and to people
(the documents it writes, the notes it leaves, the labels beside its step names).

Two languages: ``zh``, the seed's Chinese, and ``en``. Chinese is the default and stays the
default: the seed defines those texts as the product's contract, so a run where nothing
says otherwise reads byte for byte as it always did. The language in effect is, first
match wins:

1. the process's choice, :func:`use` (``flower --lang en`` sets it for the whole command);
2. ``FLOWER_LANG`` in the environment;
3. ``FLOWER_LANG`` saved in the user config (``flower setup`` asks and writes it there,
   next to the key: ``${XDG_CONFIG_HOME:-~/.config}/flower/.env``);
4. Chinese.

The locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``) is only ``flower setup``'s suggestion,
never read by a run: a cron job or a container with ``LANG=C.UTF-8`` must not switch the
language of a run a person started in a terminal with ``zh_CN.UTF-8``.

What is not translated: names that are keys. Step names (``确认需求``, ``设定目标``,
``干活``), file names (``需求.md``, ``目标.md``, ``判定记录.md``, ``交接-<step>.md``) and the
role names the manifest records stay the seed's in every language, because the lineage,
the manifests and the session store are keyed by them (a run started in Chinese must
continue in English). :func:`step_label` gives the gloss shown beside a step name.

Texts live beside the code that uses them: each module keeps its public Chinese constant
(``COORDINATOR_RULES``, ``HANDOFF_PROMPT``, ...) and adds the English one next to it
(``COORDINATOR_RULES_EN``), and picks with :func:`pick` at the moment the text is used.
The parsers read both languages always, whatever the language in effect.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

__all__ = [
    "DEFAULT",
    "EN",
    "ENV",
    "LANGUAGES",
    "ZH",
    "current",
    "from_locale",
    "localized",
    "normalize",
    "parse",
    "pick",
    "resettle",
    "saved",
    "settle",
    "step_label",
    "use",
    "using",
]

ZH = "zh"
EN = "en"
LANGUAGES = (ZH, EN)
#: The seed's language: what a run speaks when nothing chose another.
DEFAULT = ZH
#: The environment variable (and the key ``flower setup`` saves).
ENV = "FLOWER_LANG"

T = TypeVar("T")

_chosen: str | None = None
#: Whether ``_chosen`` was settled from the saved choice or the default (:func:`settle`)
#: rather than given (a flag, ``FLOWER_LANG``): only such a choice follows a
#: ``flower setup`` made in the same command (:func:`resettle`).
_settled = False
#: (path, mtime_ns, size) -> the language saved there (a stat per lookup, not a parse).
_saved_cache: tuple[tuple[str, int, int], str | None] | None = None

_NAMES = {
    "zh": ZH, "cn": ZH, "chinese": ZH, "中文": ZH, "汉语": ZH, "简体中文": ZH,
    "en": EN, "english": EN,
}  # fmt: skip
_TAG = re.compile(r"^([A-Za-z]{2,3})(?:[-_].*)?$")


def normalize(value: object) -> str | None:
    """``"en"``, ``"EN"``, ``"english"``, ``"en_US.UTF-8"``, ``"zh-CN"``, ``"中文"`` -> a
    language code; anything else (``"fr"``, ``""``, ``None``) -> ``None``."""
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    if word in _NAMES:
        return _NAMES[word]
    tag = _TAG.match(word.split(".", 1)[0])
    return _NAMES.get(tag.group(1)) if tag else None


def parse(value: object, *, source: str = "--lang") -> str:
    """Like :func:`normalize`, but an unknown value is a ``ValueError`` saying what is."""
    found = normalize(value)
    if found is None:
        raise ValueError(f"{source}: {value!r} is not a language flower speaks; use en or zh")
    return found


def from_locale(environ: Mapping[str, str] | None = None) -> str | None:
    """The language the locale suggests (POSIX order: ``LC_ALL``, ``LC_MESSAGES``,
    ``LANG``; the first set one decides). Chinese for ``zh*``; English for any other
    language, the closer choice for a reader of neither; ``None`` for ``C``/``POSIX`` or
    nothing set (no preference: the default applies)."""
    environ = os.environ if environ is None else environ
    for key in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = (environ.get(key) or "").strip()
        if not value:
            continue
        base = value.split(".", 1)[0].split("@", 1)[0]
        if base.upper() in ("C", "POSIX"):
            return None
        return ZH if base.lower().startswith("zh") else EN
    return None


def saved(environ: Mapping[str, str] | None = None) -> str | None:
    """The language ``flower setup`` saved in the user config, or ``None``."""
    global _saved_cache
    from flower.kernel.env import user_env_path

    path = user_env_path(environ)
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_mtime_ns, st.st_size)
    if _saved_cache is not None and _saved_cache[0] == key:
        return _saved_cache[1]
    found = _read_saved(path)
    _saved_cache = (key, found)
    return found


def _read_saved(path: Path) -> str | None:
    from flower.kernel.env import parse_env_file

    try:
        return normalize(parse_env_file(path).get(ENV))
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def current() -> str:
    """The language in effect (see the module docstring for the order).

    A ``FLOWER_LANG`` that names no language is ignored here (a run must not stop in the
    middle over it); the commands refuse it up front.
    """
    if _chosen is not None:
        return _chosen
    return normalize(os.environ.get(ENV)) or saved() or DEFAULT


def use(lang: str | None) -> None:
    """Choose the language for this process; ``None`` forgets the choice (the
    environment, the saved choice or the default apply again)."""
    global _chosen, _settled
    _chosen = parse(lang, source="language") if lang is not None else None
    _settled = False


def settle() -> str:
    """Pin what applies when nothing was given: the saved choice, else the default (a
    command does this first, so a ``.env`` read later cannot switch a run half-way)."""
    global _chosen, _settled
    _chosen, _settled = saved() or DEFAULT, True
    return _chosen


def resettle() -> None:
    """After ``flower setup`` saved a language: a settled choice is settled again (the run
    that follows a first-run setup speaks what was just chosen); a given one stays."""
    if _settled:
        settle()


@contextmanager
def using(lang: str | None) -> Iterator[None]:
    """``use(lang)`` for the ``with`` block, then the previous choice again."""
    global _chosen, _settled
    before = _chosen, _settled
    use(lang)
    try:
        yield
    finally:
        _chosen, _settled = before


def pick(zh: T, en: T, lang: str | None = None) -> T:
    """``en`` when the language (``lang``, else :func:`current`) is English, else ``zh``."""
    return en if (lang or current()) == EN else zh


def localized(value: str, zh: str, en: str, lang: str | None = None) -> str:
    """``value``, or its English when ``value`` is the seed's Chinese default ``zh``.

    For a public parameter or field whose default is the seed's text (``worker_prompt``,
    ``Resilience.resume_prompt``, ``HumanChannel(timeout_text=…)``): the default follows the
    language, a text the caller chose is theirs and stays as given.
    """
    return pick(zh, en, lang) if value == zh else value


# --- step names: keys, shown with a gloss ----------------------------------------------------

#: The English gloss of each step name (and part of a label) the starter flow uses.
STEP_GLOSSES: dict[str, str] = {
    "确认需求": "clarify",
    "设定目标": "set the goal",
    "干活": "work",
    "判定": "judge",
    "收尾": "bequest",
    "旁路问答": "side question",
}
_ROUND = re.compile(r"#round(\d+)$")
_RETRY = re.compile(r"#retry(\d+)$")
_RULING = re.compile(r"^(?P<step>.+)·判定(?:#(?P<n>\d+))?$")


def _gloss(name: str) -> str | None:
    """The English for a step name or label, ``None`` when no part of it is known."""
    if name in STEP_GLOSSES:
        return STEP_GLOSSES[name]
    for pattern, word in ((_ROUND, "round"), (_RETRY, "retry")):
        found = pattern.search(name)
        if found:
            base = _gloss(name[: found.start()])
            return f"{base}, {word} {found.group(1)}" if base else None
    ruling = _RULING.match(name)
    if ruling:
        base = _gloss(ruling.group("step"))
        number = f" #{ruling.group('n')}" if ruling.group("n") else ""
        return f"{base} · judge{number}" if base else None
    return None


def step_label(name: str, lang: str | None = None) -> str:
    """A step name as a person reads it: in English, the name with its gloss
    (``确认需求 (clarify)``, ``干活·判定#2 (work · judge #2)``); in Chinese, or for a name
    flower does not know (your own workflow's), the name as it is."""
    if (lang or current()) != EN:
        return name
    gloss = _gloss(name)
    return f"{name} ({gloss})" if gloss else name
