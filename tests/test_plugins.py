"""The plugin kernel with real distributions: entry points, allow/block lists, broken plugins."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pluggy
import pytest

import flower
from flower import plugins

from .conftest import local_env, once_per_session

HERE = Path(__file__).parent
FLOWER = str(Path(sys.executable).parent / "flower")
THIRD_PARTY = ("flower-plugin-sample", "flower-plugin-broken", "flower-plugin-misspelt")


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test distributions, really pip-installed into a folder of their own (once per
    session, without an index, pip's config or cache, or the user's HOME)."""

    def install(site: Path) -> None:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-index",
                "--no-deps",
                "--no-build-isolation",
                "--target",
                str(site),
                *(str(HERE / "plugins" / name) for name in THIRD_PARTY),
            ],
            capture_output=True,
            text=True,
            env=local_env(site.parent / "plugin-site-home"),
        )
        assert done.returncode == 0, done.stderr[-2000:]

    return once_per_session(tmp_path_factory, "plugin-site", install)


def run_flower(
    *args: str, site: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    if site is not None:
        full_env["PYTHONPATH"] = str(site)
    return subprocess.run([FLOWER, *args], capture_output=True, text=True, env=full_env, timeout=60)


def rows_by_name(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_defaults_are_listed_with_name_version_and_hooks() -> None:
    rows = rows_by_name(run_flower("plugins", "list", "--json"))
    row = rows["flower"]
    assert row["version"] == flower.__version__
    assert row["default"] is True and row["status"] == "ok"
    assert "flower_cli_commands" in row["hooks"]
    assert {p["name"] for p in row["plugins"]} >= set(plugins.DEFAULT_PLUGINS)


def test_third_party_plugins_are_found_by_entry_point(plugin_site: Path) -> None:
    result = run_flower("plugins", "list", "--json", site=plugin_site)
    rows = rows_by_name(result)
    sample = rows["flower-plugin-sample"]
    assert sample["version"] == "1.2.3" and sample["status"] == "ok"
    assert sample["hooks"] == ["flower_classify_error", "flower_cli_commands", "flower_event"]
    broken = rows["flower-plugin-broken"]
    assert broken["status"] == "error" and "ModuleNotFoundError" in broken["error"]
    misspelt = rows["flower-plugin-misspelt"]
    assert misspelt["status"] == "error" and "flower_guard" in misspelt["error"]
    assert "plugin 'broken'" in result.stderr and "plugin 'misspelt'" in result.stderr


def test_the_table_shows_errors_and_still_exits_zero(plugin_site: Path) -> None:
    result = run_flower("plugins", "list", site=plugin_site, COLUMNS="200")
    assert result.returncode == 0
    assert "flower-plugin-sample" in result.stdout and "1.2.3" in result.stdout
    assert "error: ModuleNotFoundError" in result.stdout


def commands_in_help(result: subprocess.CompletedProcess[str]) -> set[str]:
    """The subcommand names ``flower --help`` lists (the first word of each row under
    ``Commands:``): another installed plugin's ``extra-hello`` is not ``hello``."""
    assert result.returncode == 0, result.stderr
    rows = result.stdout.split("\nCommands:\n", 1)[1].splitlines()
    return {row.split()[0] for row in rows if row.startswith("  ") and row.strip()}


def test_a_plugin_command_runs_and_is_listed(plugin_site: Path) -> None:
    assert run_flower("hello", site=plugin_site).stdout.strip() == "hello from flower-plugin-sample"
    assert "hello" in commands_in_help(run_flower("--help", site=plugin_site))


def test_disabled_plugins_are_hidden(plugin_site: Path) -> None:
    rows = rows_by_name(
        run_flower("plugins", "list", "--json", site=plugin_site, FLOWER_DISABLED_PLUGINS="sample")
    )
    assert "flower-plugin-sample" not in rows
    shown = rows_by_name(
        run_flower(
            "plugins",
            "list",
            "--json",
            "--all",
            site=plugin_site,
            FLOWER_DISABLED_PLUGINS="flower-plugin-sample",
        )
    )
    assert (
        shown["flower-plugin-sample"]["status"] == "disabled"
        and shown["flower-plugin-sample"]["hooks"] == []
    )
    listed = run_flower("--help", site=plugin_site, FLOWER_DISABLED_PLUGINS="sample")
    assert "hello" not in commands_in_help(listed)


def test_load_plugins_is_an_allowlist(plugin_site: Path) -> None:
    rows = rows_by_name(
        run_flower("plugins", "list", "--json", site=plugin_site, FLOWER_LOAD_PLUGINS="sample")
    )
    assert set(rows) == {"flower", "flower-plugin-sample"}
    rows = rows_by_name(
        run_flower("plugins", "list", "--json", site=plugin_site, FLOWER_LOAD_PLUGINS="")
    )
    assert set(rows) == {"flower"}


def test_every_default_hookimpl_is_trylast() -> None:
    marker = flower.hookimpl.project_name + "_impl"
    for name in plugins.DEFAULT_PLUGINS:
        module = importlib.import_module(name)
        impls = [getattr(module, attr) for attr in dir(module) if attr.startswith("flower_")]
        assert impls, f"{name} implements no hook"
        for impl in impls:
            assert getattr(impl, marker).get("trylast") is True, (
                f"{name}.{impl.__name__} is not trylast"
            )


def test_an_installed_plugin_overrides_a_default(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins.reset_plugin_manager()
    pm = plugins.get_plugin_manager()

    class Override:
        @flower.hookimpl
        def flower_cli_commands(self) -> list[Any]:
            return ["from the plugin"]

    pm.register(Override(), name="override")
    try:
        # Registered last, the plugin would come first by pluggy's order alone; registering
        # the defaults again after it leaves only trylast to put them behind it.
        defaults = [name for name in plugins.DEFAULT_PLUGINS if pm.get_plugin(name) is not None]
        for name in defaults:
            module = pm.unregister(name=name)
            pm.register(module, name=name)
        results = pm.hook.flower_cli_commands()
        assert results[0] == ["from the plugin"]
        assert len(results) > 1  # the defaults still answer, after it
    finally:
        plugins.reset_plugin_manager()


def test_a_misspelt_default_plugin_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    module = type(sys)("flower_plugins._misspelt_for_test")

    @flower.hookimpl(trylast=True)
    def flower_rolez() -> list[Any]:
        return []

    module.flower_rolez = flower_rolez  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(plugins, "DEFAULT_PLUGINS", (*plugins.DEFAULT_PLUGINS, module.__name__))
    plugins.reset_plugin_manager()
    try:
        with pytest.raises(pluggy.PluginValidationError, match="flower_rolez"):
            plugins.get_plugin_manager()
    finally:
        plugins.reset_plugin_manager()


def test_the_manager_is_built_lazily_and_cached() -> None:
    code = (
        "import sys, flower, flower.plugins as p;"
        "assert p.get_plugin_manager.cache_info().currsize == 0;"
        "assert p.get_plugin_manager() is p.get_plugin_manager()"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_help_does_not_import_the_sdk_or_sqlalchemy() -> None:
    code = (
        "import sys\n"
        "from flower.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = {'claude_agent_sdk', 'sqlalchemy', 'alembic', 'rich'}\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & heavy)\n"
        "print(heavy, file=sys.stderr)\n"
        "sys.exit(1 if heavy else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, f"flower --help imported {result.stderr.strip()}"


def test_unknown_public_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = flower.Nope  # type: ignore[attr-defined]
    assert "hookimpl" in flower.__all__


def test_every_public_name_imports() -> None:
    code = "import flower\nfor name in flower.__all__:\n    getattr(flower, name)\n"
    subprocess.run([sys.executable, "-c", code], check=True)  # a fresh process: no warm caches


def test_the_entry_point_reader_agrees_with_importlib_metadata(plugin_site: Path) -> None:
    """flower.discovery (which spares every command importing importlib.metadata) finds
    the same entry points, distributions and versions, third-party ones included."""
    code = (
        "import json\n"
        "from importlib.metadata import entry_points\n"
        "from flower.discovery import entry_points as ours\n"
        "theirs = sorted((e.name, e.value, e.dist.metadata['Name'], e.dist.version)"
        " for e in entry_points(group='flower'))\n"
        "mine = sorted((f.name, f.value, f.distribution, f.version) for f in ours('flower'))\n"
        "print(json.dumps([theirs, mine]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(plugin_site)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    theirs, mine = json.loads(done.stdout)
    assert {row[2] for row in theirs} >= {"flower-plugin-sample", "flower-plugin-broken"}
    assert mine == theirs
