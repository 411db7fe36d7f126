"""The layers hold (ARCHITECTURE.md): import-linter's contracts pass, they catch a new
back-arrow, no two modules import each other round a cycle, nothing imports an old path,
and every old path still imports for plugins written against it.

One ``lint-imports`` run on the real tree, one on a copy with a planted upward import;
the cycle check reads the same graph import-linter builds (grimp), every edge kind:
module level, ``TYPE_CHECKING`` and late imports inside functions.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import grimp
import pytest

from flower import moved

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).parent / "lint-imports"


def lint(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(pythonpath)},
        timeout=120,
    )


def test_the_contracts_are_kept() -> None:
    done = lint(ROOT, ROOT / "src")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and " kept, 0 broken." in done.stdout


@pytest.mark.parametrize(
    ("module", "planted"),
    [
        # the kernel reaching up for the workbench, as a type-only import
        (
            "kernel/text.py",
            "if TYPE_CHECKING:\n    from flower.records.workbench import Workbench\n",
        ),
        # the store reaching up for the glance rules, late, inside a function
        ("stores/errors.py", "def _late():\n    from flower.roles import ephemeral\n"),
    ],
)
def test_a_planted_back_arrow_breaks_the_contracts(
    tmp_path: Path, module: str, planted: str
) -> None:
    shutil.copytree(ROOT / "src" / "flower", tmp_path / "src" / "flower")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "src" / "flower" / module
    head = "from typing import TYPE_CHECKING\n" if "TYPE_CHECKING" in planted else ""
    target.write_text(target.read_text() + "\n" + head + planted)
    done = lint(tmp_path, tmp_path / "src")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "BROKEN" in done.stdout


def test_no_import_cycle_among_flowers_modules() -> None:
    graph = grimp.build_graph("flower", exclude_type_checking_imports=False)
    # the face's lazy names (flower/__init__.py) import downward only; nothing imports it
    importers_of_face = sorted(graph.find_modules_that_directly_import("flower"))
    assert importers_of_face == [], importers_of_face
    cycles = strongly_connected(graph)
    assert cycles == [], cycles


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_nothing_in_the_project_imports_an_old_path() -> None:
    old = set(moved.MOVED)
    trees = [ROOT / "src", ROOT / "tests", ROOT / "benchmarks", ROOT / "plugins", ROOT / "tools"]
    offenders = []
    for tree in trees:
        for path in tree.rglob("*.py"):
            if ".backend" in path.parts or path.name == "test_layers.py":
                continue
            hits = {
                n
                for n in imported_names(path)
                if n in old or any(n.startswith(o + ".") for o in old)
            }
            if hits:
                offenders.append((str(path.relative_to(ROOT)), sorted(hits)))
    assert offenders == []


def test_every_old_path_imports_as_the_new_module_with_a_warning() -> None:
    code = (
        "import importlib, json, sys, warnings\n"
        "import flower\n"
        "from flower import moved\n"
        "out = {}\n"
        "for old, new in moved.MOVED.items():\n"
        "    with warnings.catch_warnings(record=True) as seen:\n"
        "        warnings.simplefilter('always')\n"
        "        module = importlib.import_module(old)\n"
        "    same = module is sys.modules[new] or all(\n"
        "        getattr(module, n) is getattr(sys.modules[new], n)\n"
        "        for n in dir(sys.modules[new]) if not n.startswith('__'))\n"
        "    said = [str(w.message) for w in seen if w.category is DeprecationWarning]\n"
        "    out[old] = [same, said]\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import json

    result = json.loads(done.stdout)
    assert sorted(result) == sorted(moved.MOVED)
    for old, (same, said) in result.items():
        assert same, old
        assert any(old in w and moved.MOVED[old] in w for w in said), (old, said)


def test_the_names_that_left_their_module_still_import_from_the_old_path() -> None:
    import flower.plugins
    import flower.roles.guard

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from flower.core.events import Event, emit  # noqa: F401 (the old path)
        from flower.core.redact import Redactor, redact_hooks  # noqa: F401

    assert emit is flower.plugins.emit
    assert redact_hooks is flower.roles.guard.redact_hooks
    assert set(moved.LEFT) <= set(moved.MOVED)


def test_the_warning_points_at_the_line_that_wrote_the_old_import(tmp_path: Path) -> None:
    """A plugin's author must see their own file in the warning, not importlib's frames."""
    (tmp_path / "old_plugin.py").write_text("from flower.core.agent import AgentSpec\n")
    code = (
        "import sys, warnings\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import flower\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    import old_plugin\n"
        "print([(w.filename, w.lineno) for w in seen if w.category is DeprecationWarning])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str([(str(tmp_path / "old_plugin.py"), 1)])


def test_a_submodule_of_a_moved_package_is_the_new_one_and_a_lookalike_is_not_found() -> None:
    import flower.roles.glance.awk

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import flower.core.glance.awk as old

        assert old is flower.roles.glance.awk
        with pytest.raises(ModuleNotFoundError):
            __import__("flower.core.glancex")


def test_the_finder_answers_first() -> None:
    """Ahead of the path finders, which would load a second copy of a moved package's
    submodule under its old name."""
    assert isinstance(sys.meta_path[0], moved.OldPaths)
