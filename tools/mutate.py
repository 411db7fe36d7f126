"""Mutation testing for flower: does a deliberate bug in a module fail a test?

    .venv/bin/python tools/mutate.py src/flower/kernel/events.py        # one module
    .venv/bin/python tools/mutate.py --changed                         # what differs from main
    .venv/bin/python tools/mutate.py src/flower/stores/prune.py --tests tests/stores

Built on cosmic-ray: each mutant is applied to the file on disk, the module's tests run
(``pytest -x``, in parallel with xdist), and the file is restored. Mutating on disk (not
in a copy) matters here: flower's end-to-end tests start real ``flower`` processes and
the bundled CLI, and they must run the mutated code too.

Which tests run for a module comes from :data:`TESTS` (or ``--tests``); a module missing
there runs the whole suite, which is slow. The operators are a curated set: one
meaningful replacement per operator (``+`` -> ``-``, ``<`` -> ``<=``, ``and`` -> ``or``,
``True`` -> ``False``, a removed ``not``, numbers, exceptions, loops that never run),
not cosmic-ray's every-to-every table, whose exotic mutants (``+`` -> ``<<``) cost time
and say little. A line ending in ``# pragma: no mutate`` is skipped.

The report: killed / total per module and every survivor with its line, so each one is
either a missing test or a mutant shown harmless. Not part of the default test run.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent

#: module (relative to the repository) -> the tests that exercise it.
TESTS: dict[str, list[str]] = {
    "src/flower/runtime/runner.py": [
        "tests/runtime/test_runtime_unit.py",
        "tests/runtime/test_runtime_extras.py",
        "tests/runtime/test_runtime_e2e.py",
        "tests/runtime/test_runtime_extras_e2e.py",
        "tests/runtime/test_runtime_gaps_e2e.py",
    ],
    "src/flower/runtime/resilience.py": [
        "tests/runtime/test_resilience.py",
        "tests/runtime/test_runtime_gaps_e2e.py",
        "tests/runtime/test_runtime_e2e.py",
    ],
    "src/flower/kernel/events.py": [
        "tests/runtime/test_normalize.py",
        "tests/runtime/test_plugin_hooks_e2e.py",
        "tests/ui/test_render_e2e.py",
        "tests/runtime/test_runtime_e2e.py",
        "tests/human",
    ],
    "src/flower/stores/prune.py": [
        "tests/stores/test_prune.py",
        "tests/stores/test_heal_orphans.py",
        "tests/stores/test_resume_e2e.py",
        "tests/runtime/test_heal_orphans_e2e.py",
    ],
    "src/flower/stores/trim.py": ["tests/stores/test_trim.py", "tests/stores/test_resume_e2e.py"],
    "src/flower/records/lineage.py": ["tests/lineage", "tests/workflow/test_base.py"],
    "src/flower/records/sections.py": ["tests/documents"],
    "src/flower/workflow/brief.py": [
        "tests/documents",
        "tests/workflow/test_clarify_and_starter.py",
    ],
    "src/flower/workflow/verdicts.py": ["tests/documents", "tests/workflow/test_goal_guard.py"],
    "src/flower/human/channel.py": ["tests/human"],
    "src/flower/workflow/base.py": [
        "tests/workflow/test_base.py",
        "tests/workflow/test_goal_guard.py",
        "tests/workflow/test_clarify_and_starter.py",
    ],
    "src/flower/workflow/goal.py": ["tests/workflow/test_goal_guard.py"],
    "src/flower/workflow/clarify.py": ["tests/workflow/test_clarify_and_starter.py"],
    "src/flower/workflow/frozen.py": [
        "tests/workflow/test_goal_guard.py",
        "tests/workflow/test_clarify_and_starter.py",
    ],
    "src/flower/workflow/starter.py": [
        "tests/workflow/test_clarify_and_starter.py",
        "tests/workflow/test_starter_e2e.py",
    ],
    "src/flower/runtime/audit.py": ["tests/unit/test_audit.py", "tests/workflow/test_audit_e2e.py"],
    "src/flower/records/ledger.py": [
        "tests/unit/test_judge_ledger.py",
        "tests/workflow/test_goal_guard.py",
    ],
    "src/flower/workflow/bequest_block.py": ["tests/unit/test_bequest_block.py"],
    "src/flower/workflow/bequest.py": ["tests/workflow/test_bequest_e2e.py"],
    "src/flower/stores/ledger_table.py": ["tests/stores/test_ledger.py"],
    "src/flower/commands/session.py": ["tests/commands/test_go_pty.py"],
    "src/flower/commands/options.py": ["tests/commands/test_arguments.py"],
    "src/flower/commands/typo.py": ["tests/commands/test_arguments.py"],
    "src/flower/commands/status.py": [
        "tests/commands/test_arguments.py",
        "tests/workflow/test_starter_e2e.py",
    ],
    "src/flower/kernel/sanitize.py": ["tests/ui/test_sanitize.py"],
    "src/flower/ui/render.py": ["tests/ui/test_render.py", "tests/ui/test_render_e2e.py"],
    "src/flower/roles/sandbox.py": ["tests/workers"],
    "src/flower/roles/walls.py": ["tests/guards/test_walls.py", "tests/workers"],
}

#: Operators kept (regular expressions matched against cosmic-ray's operator names).
KEEP = [
    r"core/ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Mul|Pow_Mul|BitOr_BitAnd|BitAnd_BitOr)$",
    r"core/ReplaceComparisonOperator_(Eq_NotEq|NotEq_Eq|Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Is_IsNot|IsNot_Is)$",
    r"core/ReplaceUnaryOperator_(Delete_Not|USub_UAdd)$",
    r"core/(AddNot|ReplaceTrueWithFalse|ReplaceFalseWithTrue|ReplaceAndWithOr|ReplaceOrWithAnd)$",
    r"core/(ReplaceBreakWithContinue|ReplaceContinueWithBreak|ExceptionReplacer|NumberReplacer)$",
    r"core/(ZeroIterationForLoop|RemoveDecorator)$",
]  # fmt: skip


def operators() -> list[str]:
    listed = subprocess.run(
        [str(VENV_BIN / "cosmic-ray"), "operators"], capture_output=True, text=True, check=True
    ).stdout.split()
    return listed


def exclusions() -> list[str]:
    import re

    keep = [re.compile(k) for k in KEEP]
    return [f"^{re.escape(op)}$" for op in operators() if not any(k.match(op) for k in keep)]


def changed(base: str) -> list[str]:
    out = subprocess.run(
        ["git", "diff", "--name-only", base, "--", "src"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    return [p for p in out if p.endswith(".py") and (ROOT / p).exists()]


def baseline(command: list[str]) -> float:
    """Seconds the unmutated tests take; they must pass, or no mutant means anything."""
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the tests fail without any mutant:\n{done.stdout[-3000:]}")
    return time.monotonic() - started


def restore_on_signals(module: str) -> None:
    """A mutant lives in the file on disk: whatever ends this run puts the file back."""

    def restore(signum: int, frame: object) -> None:
        subprocess.run(["git", "checkout", "--", module], cwd=ROOT, check=False)
        raise SystemExit(128 + signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, restore)


def _annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the module's type annotations are, as ((line, col), (end_line, end_col))."""
    import ast

    spans = []
    for node in ast.walk(ast.parse(source)):
        notes = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            notes.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            notes.append(node.returns)
        for note in notes:
            end = (note.end_lineno or note.lineno, note.end_col_offset or 0)
            spans.append(((note.lineno, note.col_offset), end))
    return spans


def skip_equivalent(session: Path, module: str) -> int:
    """Mark mutants that cannot change behaviour as skipped; how many.

    Two kinds, both certain: an operator inside a type annotation (flower's modules use
    ``from __future__ import annotations``, so ``str | None`` -> ``str & None`` is never
    evaluated), and the bare ``*`` that makes parameters keyword-only (cosmic-ray reads
    it as a multiplication; ``/`` there changes a signature no caller uses positionally).
    """
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    source = Path(ROOT, module).read_text(encoding="utf-8")
    lines = source.splitlines()
    spans = _annotation_spans(source)
    skipped = 0
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            (mutation,) = item.mutations
            line, col = mutation.start_pos
            text = lines[line - 1][col:]
            in_note = any(start <= (line, col) < end for start, end in spans)
            bare_star = text.startswith("*") and text[1:].lstrip()[:1] in (",", ")")
            if in_note or bare_star:
                db.set_result(
                    item.job_id,
                    WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output="equivalent"),
                )
                skipped += 1
    return skipped


def session_for(module: str, tests: list[str]) -> Path:
    """Where a module's run is kept: ``.mutation/`` (git-ignored), one file per module
    content and test selection (and the tests' content), so an interrupted run picks up
    where it stopped, and an edited module or test, or another choice of tests, starts
    over."""
    import hashlib

    hashed = hashlib.sha256((ROOT / module).read_bytes() + repr(tests).encode())
    for test in tests:  # a changed test is another run: its verdicts may differ
        path = ROOT / test.split("::")[0]
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            if file.is_file():
                hashed.update(file.read_bytes())
    digest = hashed.hexdigest()[:12]
    slug = module.removeprefix("src/").replace("/", ".").removesuffix(".py")
    folder = ROOT / ".mutation"
    folder.mkdir(exist_ok=True)
    return folder / f"{slug}-{digest}.sqlite"


def mutate(module: str, tests: list[str], jobs: int, timeout: float | None) -> dict[str, object]:
    """Run every kept mutant of ``module`` against ``tests``; the summary."""
    path = ROOT / module
    dirty = subprocess.run(["git", "diff", "--quiet", "--", module], cwd=ROOT).returncode
    if dirty:
        raise SystemExit(f"{module} has uncommitted changes: commit them first (mutants edit it)")
    restore_on_signals(module)
    session = session_for(module, tests)
    with tempfile.TemporaryDirectory(prefix="flower-mutate-") as tmp:
        config = Path(tmp) / "config.toml"
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
        command += ["-n", str(jobs)] if jobs > 1 else ["-p", "no:xdist"]
        command += tests
        if timeout is None:  # a mutant that loops forever must not stall the run
            took = baseline(command)
            timeout = max(60.0, 4 * took)
            print(f"{module}: the tests take {took:.0f} s; {timeout:.0f} s per mutant at most")
        config.write_text(
            "[cosmic-ray]\n"
            f"module-path = {json.dumps(str(path))}\n"
            f"timeout = {timeout}\n"
            "excluded-modules = []\n"
            f"test-command = {json.dumps(' '.join(command))}\n"
            "[cosmic-ray.distributor]\n"
            'name = "local"\n'
            "[cosmic-ray.filters.operators-filter]\n"
            f"exclude-operators = {json.dumps(exclusions())}\n",
            encoding="utf-8",
        )

        def run(*args: str) -> None:
            subprocess.run([str(VENV_BIN / args[0]), *args[1:]], cwd=ROOT, check=True)

        try:
            if not session.exists():
                run("cosmic-ray", "init", str(config), str(session))
                run("cr-filter-operators", str(session), str(config))
                run("cr-filter-pragma", str(session))
                print(f"{module}: {skip_equivalent(session, module)} equivalent mutants skipped")
            else:
                print(f"{module}: resuming {session.relative_to(ROOT)}")
            run("cosmic-ray", "exec", str(config), str(session))
        finally:
            subprocess.run(["git", "checkout", "--", module], cwd=ROOT, check=False)
    dump = subprocess.run(
        [str(VENV_BIN / "cosmic-ray"), "dump", str(session)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return summarize(module, dump)


def summarize(module: str, dump: str) -> dict[str, object]:
    killed, survived, other = 0, [], 0
    for line in dump.splitlines():
        job, result = json.loads(line)
        if not result or result.get("worker_outcome") == "skipped":
            continue
        if result.get("test_outcome") == "killed":
            killed += 1
        elif result.get("test_outcome") == "survived":
            mutation = job["mutations"][0]
            start = mutation["start_pos"][0]
            survived.append(f"{module}:{start} {mutation['operator_name'].split('/')[-1]}")
        else:
            other += 1
    return {"module": module, "killed": killed, "survived": survived, "incompetent": other}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="files under src/ to mutate")
    parser.add_argument(
        "--changed", metavar="BASE", nargs="?", const="HEAD~1",
        help="mutate the modules that differ from BASE (default: the last commit)",
    )  # fmt: skip
    parser.add_argument("--tests", nargs="+", help="run these tests instead of the module's own")
    parser.add_argument(
        "--jobs", type=int, default=1, help="pytest-xdist workers per mutant (1: no xdist)"
    )
    parser.add_argument(
        "--timeout", type=float, default=None, help="seconds per mutant (default: 4x baseline)"
    )
    args = parser.parse_args()
    modules = list(args.modules)
    if args.changed:
        modules += changed(args.changed)
    if not modules:
        parser.error("name a module, or --changed")
    reports = []
    for module in dict.fromkeys(modules):
        tests = args.tests or TESTS.get(module) or ["tests"]
        reports.append(mutate(module, tests, args.jobs, args.timeout))
    print()
    for report in reports:
        total = report["killed"] + len(report["survived"])  # type: ignore[operator,arg-type]
        print(f"{report['module']}: {report['killed']}/{total} killed"
              f" ({report['incompetent']} incompetent or timed out)")  # fmt: skip
        for survivor in report["survived"]:  # type: ignore[attr-defined]
            print(f"  survived: {survivor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
