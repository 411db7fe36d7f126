"""``flower status``: what this folder's run has done and where it would continue.

Read-only and cheap: no credentials, no model. It reads the wake state (brief, goal,
lineage), ``manifest.json`` (every step and round, cost, context, the judge's last
ruling), the questions a live run is waiting on (``pending.json``) and, from the session
store, the run's judge ledger (rounds, verdicts, overrides, agreement with the human) and
its budget (spent of the cap, every process's sessions counted).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from flower.commands.options import Globals, reading_globals


@click.command(name="status")
@reading_globals  # read-only: a -w typo is an error, not a new folder
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of lines.")
@click.option(
    "--all",
    "every_run",
    is_flag=True,
    help="Every run in the session store (FLOWER_STORE_URL, else this folder's), any machine's.",
)
def status(
    as_json: bool,
    every_run: bool,
    g: Globals,
) -> None:
    """Where the run in this folder stands: steps, rounds, cost, the last verdict, questions."""
    unreachable = shared_store_problem()
    if unreachable:  # "nothing has run" would be a guess: the store that knows cannot say
        raise click.UsageError(unreachable)
    if every_run:
        listed = runs_in_store(g.run_dir)
        if as_json:
            click.echo(json.dumps(listed, ensure_ascii=False, indent=2))
            return
        for line in describe_runs(listed):
            click.echo(line)
        return
    report = collect(g.workspace, g.run_dir)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
        return
    for line in describe(report):
        click.echo(line)


def collect(workspace: Path, run_dir: Path) -> dict[str, Any]:
    """Everything status shows, as plain data (``simulated``: a ``flower demo`` folder,
    whose costs the scripted model played and nobody paid)."""
    from flower.commands.demo import played_by_demo
    from flower.records.manifest import Manifest
    from flower.records.outcome import read_outcome
    from flower.records.pending import read_pending, stale_asks
    from flower.records.runlock import holder_of
    from flower.workflow import wake_state
    from flower.workflow.going_back import listing
    from flower.workflow.verdicts import Verdict

    state = wake_state(workspace, run_dir=run_dir)
    rows = Manifest(run_dir).read() if run_dir.is_dir() else []
    steps = [
        {
            key: row.get(key)
            for key in (
                "step",
                "ok",
                "attempts",
                "cost_usd",
                "context",
                "error",
                "session_id",
                "refused",
            )
        }
        for row in rows
    ]
    verdict = last_ruling(run_dir, workspace)  # the ledger's: what the checks overruled too
    for row in reversed(rows if verdict is None else []):
        if "·判定#" in str(row.get("step", "")):
            ruling = Verdict.parse(str(row.get("text") or ""))
            verdict = {
                "step": row["step"],
                "state": ruling.state or "vague",
                "reason": ruling.reason,
            }
            break
    return {
        "workspace": str(workspace),
        "run_dir": str(run_dir),
        "waking": state["waking"],
        "brief": state["brief"],
        "goal": state["goal"],
        "checks": state["checks"],
        "woke": state["woke"],
        "sessions": state["steps"],
        "steps": steps,
        "cost_usd": round(sum(float(row.get("cost_usd") or 0.0) for row in rows), 6),
        "simulated": played_by_demo(run_dir),
        "verdict": verdict,
        "pending": read_pending(run_dir).get("asks", []),
        "unanswered": [a for a in stale_asks(run_dir) if a.get("answer") is None],
        "outcome": read_outcome(run_dir),
        "drift": state["drift"],
        "active": holder_of(run_dir),
        "judge": judge_summary(run_dir, workspace),
        "budget": budget_summary(run_dir, workspace),
        "checkpoints": listing(workspace, run_dir),
    }


def judge_summary(run_dir: Path, workspace: Path) -> dict[str, Any] | None:
    """This run's judge ledger, summed up (:func:`flower.records.ledger.agreement`);
    ``None`` when nothing was judged, ``{"error": …}`` when the store cannot say."""
    from flower.records.ledger import agreement
    from flower.records.lineage import continuing_run
    from flower.stores.errors import StoreError

    run = continuing_run(run_dir, workspace)
    if not run:
        return None
    try:
        rows = _from_store(run_dir, lambda store: store.rulings(run))
    except StoreError as exc:
        return {"error": str(exc)}
    return agreement(rows) if rows else None


def last_ruling(run_dir: Path, workspace: Path) -> dict[str, Any] | None:
    """The run's latest verdict as the judge ledger keeps it (after flower's own checks
    had their say), or ``None`` when the ledger has none or cannot be read."""
    from flower.records.lineage import continuing_run
    from flower.stores.errors import StoreError

    run = continuing_run(run_dir, workspace)
    if not run:
        return None
    try:
        rows = _from_store(run_dir, lambda store: store.rulings(run))
    except StoreError:
        return None
    verdicts = [r for r in rows or [] if r.get("kind") == "verdict"]
    if not verdicts:
        return None
    row = verdicts[-1]
    step = f"{row.get('step')}·判定#{row.get('round')}"
    return {"step": step, "state": row.get("state") or "vague", "reason": row.get("reason") or ""}


def budget_summary(run_dir: Path, workspace: Path) -> dict[str, Any] | None:
    """This run's budget from the store (``runtime/budget.py``): ``cap`` (USD, ``None``: no
    cap), ``spent`` (every session of every process and machine), ``left``, ``reached``;
    ``None`` when the run has no cap and spent nothing, ``{"error": …}`` when the store
    cannot say."""
    from flower.records.lineage import continuing_run
    from flower.stores.errors import StoreError

    run = continuing_run(run_dir, workspace)
    if not run:
        return None
    try:
        found = _from_store(run_dir, lambda store: store.budget(run))
    except StoreError as exc:
        return {"error": str(exc)}
    if not found or (found["cap"] is None and not found["sessions"]):
        return None
    return budget_state(found)


def budget_state(found: dict[str, Any]) -> dict[str, Any]:
    """A store's ``{cap, spent, sessions}`` with ``left`` and ``reached`` added."""
    from flower.runtime.budget import EPSILON

    cap, spent = found["cap"], float(found["spent"])
    return {
        "cap": cap,
        "spent": round(spent, 6),
        "left": None if cap is None else round(max(cap - spent, 0.0), 6),
        "reached": cap is not None and cap - spent <= EPSILON,
        "sessions": found["sessions"],
    }


def describe_budget(budget: dict[str, Any], *, simulated: bool = False) -> str:
    """The budget in one line: spent of the cap, what is left, or how to go on;
    ``simulated`` labels the spend so."""
    from flower.runtime.budget import money, raised

    if "error" in budget:
        return f"budget: unavailable ({budget['error']})"
    spent, cap = float(budget["spent"]), budget.get("cap")
    paid = money(spent) + (" simulated" if simulated else "")
    if cap is None:
        return f"spent {paid}, no budget (flower --budget USD sets one)"
    if budget.get("reached"):
        return (
            f"budget: {paid} of {money(cap)} spent, reached: the run stopped;"
            f" flower --budget {raised(cap, spent):g} goes on"
        )
    share = f"{spent / cap:.0%}" if cap else "?"
    return f"budget: {paid} of {money(cap)} spent ({share}), {money(budget['left'])} left"


def _from_store(run_dir: Path, read: Any) -> Any:
    """``read(database)`` on the session store's database (``FLOWER_STORE_URL``, else
    ``run_dir/sessions.db``; always the latter for a ``flower demo`` folder, whose run
    never used a shared store); ``[]`` when there is no store yet. Raises ``StoreError``.

    Through :class:`StoreDatabase`, not the session store: status reads run tables
    only and need not import the SDK (about a second of CPU) to do it."""
    import os

    from flower.commands.demo import played_by_demo
    from flower.stores.database import StoreDatabase

    target = os.environ.get("FLOWER_STORE_URL") or str(run_dir / "sessions.db")
    if played_by_demo(run_dir):  # a demo never uses the shared store: its own is here
        target = str(run_dir / "sessions.db")
    if "://" not in target and not Path(target).is_file():
        return []
    database = StoreDatabase(target)
    try:
        return read(database)
    finally:
        database.close()


def shared_store_problem() -> str | None:
    """Why the shared store ``FLOWER_STORE_URL`` names cannot be read now (one line), or
    ``None`` (no shared store, or it answers)."""
    import os

    from flower.stores.database import StoreDatabase
    from flower.stores.errors import StoreError

    url = os.environ.get("FLOWER_STORE_URL", "").strip()
    if not url:
        return None
    try:
        StoreDatabase(url).close()
    except StoreError as exc:
        return str(exc)
    return None


def runs_in_store(run_dir: Path) -> list[dict[str, Any]]:
    """The store's run list (``FLOWER_STORE_URL``, else ``run_dir/sessions.db``), each
    run with its judge ledger summed up (``judge``); a store that cannot be opened is a
    one-line usage error."""
    from flower.records.ledger import agreement
    from flower.stores.errors import StoreError

    def read(store: Any) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = store.runs()
        by_run: dict[str, list[dict[str, Any]]] = {}
        for row in store.rulings():
            by_run.setdefault(row["run_id"], []).append(row)
        budgets = store.budgets()
        for run in listed:
            rows = by_run.get(run["run"])
            run["judge"] = agreement(rows) if rows else None
            run["budget"] = budgets.get(run["run"])
        return listed

    try:
        result: list[dict[str, Any]] = _from_store(run_dir, read)
        return result
    except StoreError as exc:
        raise click.UsageError(str(exc)) from None


def describe_runs(listed: list[dict[str, Any]]) -> list[str]:
    """The run list as lines: one per run, newest first."""
    import time

    if not listed:
        return ["no runs in the session store yet"]
    lines = []
    for run in listed:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(run["ended_at"]))
        lines.append(
            f"{run['workspace']} on {run['host']}: {run['steps']} step(s), {run['ok']} ok,"
            f" ${run['cost_usd']:.4f}, last {run['last_step']} at {when} (run {run['run'][:8]})"
        )
        if run.get("judge"):
            lines.append(f"  {describe_judge(run['judge'])}")
        if (run.get("budget") or {}).get("cap") is not None:
            lines.append(f"  {describe_budget(budget_state(run['budget']))}")
    judged = [run["judge"] for run in listed if run.get("judge") and "error" not in run["judge"]]
    if judged:
        lines.append(describe_accuracy(judged))
    return lines


def describe_accuracy(judged: list[dict[str, Any]]) -> str:
    """The judge's record over many runs: rulings, how often flower's own checks overruled
    it, how often a human did, and the rounds it took to reach "achieved"."""
    rounds = sum(int(j.get("rounds") or 0) for j in judged)
    overruled = sum(int(j.get("overruled") or 0) for j in judged)
    humans = sum(int(j.get("reviewed") or 0) for j in judged)
    reached = [int(j["rounds_to_achieved"]) for j in judged if j.get("rounds_to_achieved")]
    mean = f"{sum(reached) / len(reached):.1f}" if reached else "-"
    return (
        f"over {len(judged)} run(s): {rounds} ruling(s); overruled by flower's checks"
        f" {overruled}, by a human {humans}; achieved in {len(reached)} run(s), in {mean}"
        " round(s) on average"
    )


def describe_judge(judge: dict[str, Any], *, simulated: bool = False) -> str:
    """The judge ledger in one line: rounds, verdicts, overrides, agreement, and the
    calls the walls refused (by tool); ``simulated`` labels its cost so."""
    if "error" in judge:
        return f"judge ledger: unavailable ({judge['error']})"
    words = {"achieved": "achieved", "not_yet": "not yet", "unreachable": "unreachable"}
    states = ", ".join(
        f"{n} {words.get(state, state)}" for state, n in sorted(judge["verdicts"].items())
    )
    line = f"judge: {judge['rounds']} round(s) ({states}), ${judge['cost_usd']:.4f}"
    line += " simulated" if simulated else ""
    refused = judge.get("refused") or {}
    walls = ""
    if refused:
        tools = ", ".join(f"{n} {tool}" for tool, n in sorted(refused.items()))
        walls = f"; walls refused {sum(refused.values())} call(s) ({tools})"
    checks = judge.get("checks") or {}
    if checks:
        ran = ", ".join(f"{n} {state.replace('_', ' ')}" for state, n in sorted(checks.items()))
        walls += f"; checks flower ran: {ran}"
        if judge.get("overruled"):
            walls += f"; the checks overruled the judge {judge['overruled']} time(s)"
    if judge.get("rounds_to_achieved"):
        walls += f"; achieved in round {judge['rounds_to_achieved']}"
    restored = judge.get("restored") or {}
    if restored:
        files = ", ".join(f"{name} x{n}" for name, n in sorted(restored.items()))
        walls += f"; put back, changed outside flower: {files}"
    if not judge["reviewed"]:
        return line + "; never overruled" + walls
    kinds = {"accept": "accepted anyway", "change_goal": "goal changed"}
    kinds["misjudged"] = "judged wrong"
    overrides = ", ".join(
        f"{n} {kinds.get(kind, kind)}" for kind, n in sorted(judge["overrides"].items())
    )
    rate = f"{judge['rate']:.0%}"
    return (
        f"{line}; overruled {judge['reviewed']} time(s) ({overrides});"
        f" agrees with the human {judge['agreed']} of {judge['reviewed']} ({rate}){walls}"
    )


def describe(report: dict[str, Any]) -> list[str]:
    """The report as lines a person reads (step names glossed in English)."""
    from flower.kernel.lang import step_label
    from flower.records.outcome import describe as describe_outcome

    started = report["steps"] or report["waking"] or report.get("sessions")
    if not started and not report.get("unanswered"):
        return [f'nothing has run in {report["workspace"]} yet (flower "make X" starts)']
    simulated = " simulated" if report.get("simulated") else ""

    def usd(amount: Any) -> str:
        return f"${float(amount or 0):.4f}{simulated}"

    lines = [
        f"{report['workspace']}: started {report['woke']} time(s), {usd(report['cost_usd'])} so far"
    ]
    if simulated:
        lines.append(
            "costs simulated: flower demo's scripted model played every role; nothing was paid"
        )
    if report.get("budget"):
        lines.append(describe_budget(report["budget"], simulated=bool(simulated)))
    if report.get("active"):
        who = report["active"]
        lines.append(f"running now: pid {who.get('pid', '?')} on {who.get('host', '?')}")
    if report["waking"]:
        checks = f", goal with {report['checks']} check(s)" if report["checks"] else ""
        lines.append(f"brief confirmed{checks}: {report['brief']}")
    for step in report["steps"]:
        mark = "ok " if step["ok"] else "x  "
        extra = f" · {step['attempts']} attempts" if (step["attempts"] or 1) > 1 else ""
        error = f" · {step['error']}" if step["error"] and not step["ok"] else ""
        if step.get("refused"):  # the session was fine; its check refused the answer
            mark, error = "x  ", f" · answer not accepted: {step['refused']}"
        lines.append(
            f"  {mark}{step_label(step['step'])} · {usd(step['cost_usd'])}"
            f" · context {int(step['context'] or 0):,}{extra}{error}"
        )
    if report.get("outcome") and describe_outcome(report["outcome"]):
        lines.append(describe_outcome(report["outcome"]))
    if report["verdict"]:
        v = report["verdict"]
        lines.append(f"last verdict ({step_label(v['step'])}): {v['state']} {v['reason']}".rstrip())
    if report.get("judge"):
        lines.append(describe_judge(report["judge"], simulated=bool(simulated)))
    for ask in report["pending"]:
        options = f" [{' / '.join(ask['options'])}]" if ask.get("options") else ""
        lines.append(f"waiting for an answer ({ask['id']}): {ask['question']}{options}")
    for ask in report.get("unanswered") or []:
        options = f" [{' / '.join(ask['options'])}]" if ask.get("options") else ""
        lines.append(
            f"asked before the run stopped ({ask.get('step') or '?'}): {ask['question']}{options}"
            " - flower here shows it again"
        )
    if report.get("drift"):
        lines.append(report["drift"])
    kept = report.get("checkpoints")
    if kept:
        from flower.commands.rewind import size_text

        lines.append(
            f"checkpoints: {kept['error']}"
            if "error" in kept
            else f"checkpoints: {kept['count']} (newest: {kept['newest']}),"
            f" {size_text(kept['bytes'])}; flower rewind lists them, flower rewind N goes back"
        )
    return lines


__all__ = [
    "budget_summary",
    "collect",
    "describe",
    "describe_budget",
    "describe_judge",
    "describe_runs",
    "judge_summary",
    "runs_in_store",
    "status",
]
