"""Start-up: what ``flower --help`` and ``flower plugins list`` import, and the entry-point
reader (:mod:`flower.discovery`) that lets them skip ``importlib.metadata``.

The figures themselves are in ``benchmarks/startup.py`` (timings do not belong in tests);
what is pinned here is the cause: the modules each command loads, read from the real
console script under ``python -X importtime``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from flower.discovery import Found, entry_points

FLOWER = str(Path(sys.executable).parent / "flower")

#: Never needed to print help or list plugins: each costs from a few to hundreds of ms.
HEAVY = (
    "claude_agent_sdk", "sqlalchemy", "alembic", "rich", "anyio", "asyncio", "ssl", "socket",
    "importlib.metadata", "email", "zipfile", "sqlite3", "http", "dotenv", "pydantic",
    "flower.runtime.runner", "flower.roles.agent", "flower.runtime.budget", "flower.kernel.events",
    "flower.testing.server", "flower_plugin_web.hub", "flower_plugin_web.server",
    "secrets", "hmac", "tempfile",
)  # fmt: skip


def imported(*args: str) -> set[str]:
    """The modules ``flower *args`` imports, from ``-X importtime`` of the console script."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", FLOWER, *args],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    found = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$", done.stderr, re.M)
    assert found, done.stderr[-2000:]
    return set(found)


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("args", [["--help"], ["plugins", "list"], ["--version"]])
def test_the_light_commands_import_nothing_heavy(args: list[str]) -> None:
    modules = imported(*args)
    assert "click" in modules  # the measurement sees the command line being built
    assert heavy_in(modules) == [], f"flower {' '.join(args)} imported {heavy_in(modules)}"


def test_help_still_lists_the_plugins_commands() -> None:
    """Light, not blind: the plugin manager runs and its commands are listed."""
    done = subprocess.run([FLOWER, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for name in ("scripted-model", "db", "go", "status"):
        assert re.search(rf"^\s+{re.escape(name)}\s", done.stdout, re.M), done.stdout


def test_the_measurement_would_see_a_heavy_import() -> None:
    """The check above can fail: the SDK imported by a command shows up in the list."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import claude_agent_sdk"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    names = set(re.findall(r"\|\s*(\S+)\s*$", done.stderr, re.M))
    assert "claude_agent_sdk" in heavy_in(names) and "anyio" in heavy_in(names)


# --- flower.discovery ------------------------------------------------------------------


def dist(root: Path, folder: str, entry_points_txt: str | None, metadata: str = "") -> None:
    where = root / folder
    where.mkdir(parents=True)
    if entry_points_txt is not None:
        (where / "entry_points.txt").write_text(entry_points_txt, encoding="utf-8")
    if metadata:
        (where / ("PKG-INFO" if folder.endswith(".egg-info") else "METADATA")).write_text(
            metadata, encoding="utf-8"
        )


def test_entry_points_are_read_from_dist_and_egg_info(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    dist(
        one, "flower_plugin_x-1.2.dist-info",
        "[console_scripts]\nx = x:main\n\n[flower]\nx = flower_plugin_x.plugin\n"
        "# a comment\nx2 = flower_plugin_x:Plugin.inner [extra]\n",
        "Metadata-Version: 2.1\nName: flower-plugin-x\nVersion: 1.2\n\nName: not a header\n",
    )  # fmt: skip
    dist(one, "Other-3.0.dist-info", "[other]\na = b\n", "Name: other\nVersion: 3.0\n")
    dist(one, "old_style.egg-info", "[ flower ]\nold = old_style\n", "Name: old-style\n")
    dist(one, "broken-0.1.dist-info", None)
    dist(two, "flower_plugin_x-9.9.dist-info", "[flower]\nshadowed = nope\n", "Name: x\n")
    found = entry_points("flower", path=[str(one), str(tmp_path / "missing"), str(two)])
    assert found == [
        Found("x", "flower_plugin_x.plugin", "flower-plugin-x", "1.2"),
        Found("x2", "flower_plugin_x:Plugin.inner [extra]", "flower-plugin-x", "1.2"),
        Found("old", "old_style", "old-style", "?"),  # no Version header, none in the name
    ]  # the second flower_plugin_x on the path is shadowed by the first, as in importlib


def test_load_imports_the_module_and_walks_the_attributes() -> None:
    assert Found("d", "flower.discovery", "flower", "0").load() is sys.modules["flower.discovery"]
    assert Found("d", "flower.discovery:Found.load [x]", "flower", "0").load() is Found.load


def test_a_path_it_does_not_read_is_left_to_importlib_metadata(tmp_path: Path) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("p-1.0.dist-info/entry_points.txt", "[flower]\np = p\n")
    assert entry_points("flower", path=[str(archive)]) is None
    assert entry_points("flower", path=[str(tmp_path / "x.egg")]) is None
    assert entry_points("flower", path=[str(tmp_path / "nothing-here")]) == []


def test_a_finder_that_adds_distributions_is_left_to_importlib_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Finder:
        def find_spec(self, *args: object) -> None:
            return None

        def find_distributions(self, *args: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert entry_points("flower") is None


def test_the_reader_agrees_with_importlib_metadata_on_this_install() -> None:
    code = (
        "import json, sys\n"
        "from importlib.metadata import entry_points\n"
        "from flower.discovery import entry_points as ours\n"
        "theirs = sorted((e.name, e.value, e.dist.metadata['Name'], e.dist.version)"
        " for e in entry_points(group='flower'))\n"
        "mine = sorted((f.name, f.value, f.distribution, f.version) for f in ours('flower'))\n"
        "print(json.dumps([theirs, mine]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import json

    theirs, mine = json.loads(done.stdout)
    assert theirs and mine == theirs


# --- the kernel imports no implementation ------------------------------------------------

KERNEL = ("flower.hookspecs", "flower.plugin_types", "flower.plugins")


def test_the_kernel_modules_load_no_implementation_module() -> None:
    code = (
        "import sys\n"
        f"for name in {KERNEL!r}:\n"
        "    __import__(name)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] == 'flower')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    # flower.moved: the face's finder for the old module paths (a dict and two small classes)
    # flower.kernel.version: the version, which the plugin system reports
    expected = {"flower", "flower.discovery", "flower.moved", "flower.kernel", *KERNEL}
    assert loaded == expected | {"flower.kernel.version"}, loaded


@pytest.mark.parametrize("module", KERNEL)
def test_the_kernel_names_no_view_or_command_code_even_for_typing(module: str) -> None:
    """Types a plugin sees (``View`` included) live in plugin_types; the terminal's view
    and the commands are implementations a hookspec must not reach into."""
    import ast
    import importlib

    source = Path(importlib.import_module(module).__file__ or "").read_text(encoding="utf-8")
    named = {
        node.module or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert not {m for m in named if m.startswith(("flower.ui.render", "flower.commands"))}


def test_view_is_one_protocol_wherever_it_is_imported_from() -> None:
    from flower.plugin_types import View
    from flower.ui import render

    assert render.View is View and "View" in render.__all__
