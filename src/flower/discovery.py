"""The ``flower`` entry points on ``sys.path``, found without ``importlib.metadata``.

Every ``flower`` command builds the plugin manager, ``flower --help`` included (it lists
the plugins' subcommands), and importing ``importlib.metadata`` (email parsing, zip and
CSV support) costs that command about a third of its start-up. What the manager needs is
small: in each folder on ``sys.path``, the ``*.dist-info`` and ``*.egg-info`` folders whose
``entry_points.txt`` has a ``[flower]`` section, and for those few the distribution's name
and version. This module reads exactly that, the way ``importlib.metadata`` finds it (the
first distribution of a name on the path wins), and answers ``None`` whenever the path
holds anything it does not read (a zip or an egg on the path, a meta-path finder that
adds distributions of its own), so the caller falls back to ``importlib.metadata``.
A test compares both on real installs.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from importlib import import_module
from typing import Any

_SUFFIXES = (".dist-info", ".egg-info")
_NORMAL = re.compile(r"[-_.]+")


@dataclass(frozen=True)
class Found:
    """One entry point: ``name = value`` in a distribution's ``[group]`` section."""

    name: str
    value: str
    distribution: str
    version: str

    def load(self) -> Any:
        """What ``value`` names (``module`` or ``module:attr.attr``), imported."""
        module, _, attrs = self.value.partition(":")
        target: Any = import_module(module.strip())
        for attr in filter(None, attrs.split("[", 1)[0].strip().split(".")):
            target = getattr(target, attr)
        return target


def entry_points(group: str, path: list[str] | None = None) -> list[Found] | None:
    """The entry points of ``group`` on ``path`` (default ``sys.path``) in path order, or
    ``None`` when only ``importlib.metadata`` can answer for this path."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and hasattr(finder, "find_distributions"):
            return None
    seen: set[str] = set()
    found: list[Found] = []
    for entry in sys.path if path is None else path:
        root = entry or "."
        if root.lower().endswith(".egg") or os.path.isfile(root):
            return None
        try:
            children = sorted(os.listdir(root))
        except OSError:  # a folder that is not there: nothing on it, as for importlib
            continue
        for child in children:
            stem, dot, suffix = child.rpartition(".")
            if not dot or f".{suffix.lower()}" not in _SUFFIXES:
                continue
            key = _NORMAL.sub("_", stem.split("-", 1)[0]).lower()
            if key in seen:  # the same distribution earlier on the path wins
                continue
            seen.add(key)
            folder = os.path.join(root, child)
            points = _section(_read(os.path.join(folder, "entry_points.txt")), group)
            if points:
                name, version = _identity(folder, stem)
                found += [Found(n, v, name, version) for n, v in points]
    return found


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError):
        return ""


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """``name = value`` pairs of ``[group]`` in an ``entry_points.txt``."""
    if f"[{group}" not in text and "[ " not in text:
        return []
    pairs: list[tuple[str, str]] = []
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line:
            name, _, value = line.partition("=")
            pairs.append((name.strip(), value.strip()))
    return pairs


def _identity(folder: str, stem: str) -> tuple[str, str]:
    """The distribution's ``Name`` and ``Version`` from its metadata headers (the folder
    name when they are missing)."""
    fallback_name, _, fallback_version = stem.partition("-")
    headers: dict[str, str] = {}
    for file in ("METADATA", "PKG-INFO"):
        for line in _read(os.path.join(folder, file)).splitlines():
            if not line.strip():
                break  # the headers end at the first blank line
            key, colon, value = line.partition(":")
            if colon and key in ("Name", "Version"):
                headers.setdefault(key, value.strip())
        if headers:
            break
    return headers.get("Name", fallback_name), headers.get("Version", fallback_version or "?")


__all__ = ["Found", "entry_points"]
