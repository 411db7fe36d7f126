"""Every text flower writes for a person or a model, gathered through the code that writes it.

``gather(tmp)`` calls the functions and reads the constants that produce the prompts, the
documents, the deny texts and the notes, with fixed inputs (times, paths, ids), so the
result depends only on the wording and the language in effect. The default-language test
compares it with ``zh_defaults.json``, written from the code before languages existed: the
seed's Chinese must stay byte for byte what it was.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

AT = 1_700_000_000.0  # a fixed time for every stamp

#: What a constructor keeps as given (the default is the seed's text; it is translated
#: where it is said, not where it is kept).
KEPT = frozenset(
    {
        "HumanChannel.timeout_text",
        "HumanChannel.over_budget_text",
        "HumanChannel.declined_text",
        "EphemeralPolicy().text",
    }
)


def is_constant(name: str) -> bool:
    """Whether ``name`` reads a public constant: the seed's Chinese in every language (its
    English is a sibling constant), or a value a constructor keeps as given."""
    last = name.rsplit(".", 1)[-1]
    return name in KEPT or (last.isupper() and "(" not in last)


def gather(tmp: Path) -> dict[str, str]:
    """name -> text, every text the default language decides."""
    out: dict[str, str] = {}
    out.update(_roles())
    out.update(_documents())
    out.update(_workflow(tmp))
    out.update(_human())
    out.update(_walls(tmp))
    out.update(_records())
    out.update(_stores(tmp))
    return out


def _roles() -> dict[str, str]:
    from flower.roles import factory as roles

    out = {
        name: getattr(roles, name)
        for name in ("COORDINATOR_RULES", "WORKER_RULES", "CLARIFY_RULES", "JUDGE_RULES")
    }
    out["ORACLE_RULES"] = roles.ORACLE_RULES
    out["coordinator()"] = roles.coordinator("协调者", "extra", {}).instructions
    out["worker()"] = str(roles.worker("d", "p").prompt)
    out["clarify()"] = roles.clarify("c", None).instructions
    out["judge()"] = roles.judge("j", None).instructions
    out["oracle()"] = roles.oracle().instructions
    out["oracle().name"] = roles.oracle().name
    return out


def _documents() -> dict[str, str]:
    from flower.records.handoff import HANDOFF_PROMPT, Handoff, degraded, handoff_name
    from flower.workflow.brief import Brief
    from flower.workflow.verdicts import Goal, Verdict

    out: dict[str, str] = {"HANDOFF_PROMPT": HANDOFF_PROMPT}
    doc = Handoff(doing="d", decided="c", deadends="x", next="n", scene="s", step="干活")
    out["Handoff.to_markdown"] = doc.to_markdown()
    doc.path = Path("/notes/交接-干活.md")
    doc.audit = "a"
    out["Handoff.prompt_block"] = doc.prompt_block()
    out["Handoff.to_markdown+audit"] = doc.to_markdown()
    out["degraded"] = degraded("干活", "the task", why="why").to_markdown()
    out["degraded.prompt_block"] = degraded("干活", "the task").prompt_block()
    out["handoff_name"] = handoff_name("干活")
    brief = Brief(goal="g", accept="a", bounds="b", unknowns="u")
    out["Brief.to_markdown"] = brief.to_markdown()
    out["Brief.prompt_block"] = brief.prompt_block()
    out["Brief().to_markdown"] = Brief().to_markdown()
    out["Brief().missing"] = "|".join(Brief().missing())
    goal = Goal(statement="s", checks=["c1", "c2"])
    out["Goal.to_markdown"] = goal.to_markdown()
    out["Goal.prompt_block"] = goal.prompt_block()
    out["Goal().to_markdown"] = Goal().to_markdown()
    out["Goal().missing"] = "|".join(Goal().missing())
    out["Goal.amend"] = Goal(statement="s").amend("new\n## Goal x", at=AT).statement
    for state in ("achieved", "not_yet", "unreachable", ""):
        verdict = Verdict(state=state, reason="r", failed=["f"])
        out[f"Verdict({state}).to_markdown"] = verdict.to_markdown()
        out[f"Verdict({state}).feedback"] = verdict.feedback()
    out["Verdict().feedback"] = Verdict().feedback()
    out["Verdict().to_markdown"] = Verdict().to_markdown()
    return out


def _workflow(tmp: Path) -> dict[str, str]:
    from flower.workflow import clarify, goal, starter
    from flower.workflow.brief import Brief
    from flower.workflow.verdicts import GOAL_KEY, Goal

    bq = importlib.import_module("flower.workflow.bequest")  # the package re-exports a function

    out: dict[str, str] = {}
    for name in ("CLARIFY_RESUME", "MISSING_PROMPT"):
        out[f"clarify.{name}"] = getattr(clarify, name)
    for name in ("SET_PROMPT", "VERIFY_PROMPT", "VAGUE_REASON", "GOAL_CHANGE_LABEL"):
        out[f"goal.{name}"] = getattr(goal, name)
    for name in (
        "DEFAULT_WORKER_PROMPT", "WORKER_DESCRIPTION", "WORK_PROMPT", "GOAL_PART",
        "RESUME_PLAIN", "RESUME_SAID", "RESUME_GOAL", "CLARIFY_SAID", "WAKE_LABEL", "NO_ASK",
    ):  # fmt: skip
        out[f"starter.{name}"] = getattr(starter, name)
    step = goal.goal_step(None, goal_path=tmp / "g.md")
    out["goal_step.prompt"] = _prompt(step, {})
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    wf = starter.starter_flow("write hello.txt", workspace=ws, run_dir=tmp / "runs")
    brief = Brief(goal="g", accept="a", bounds="b", unknowns="u")
    ctx: dict[str, Any] = {"确认需求": brief.prompt_block(), GOAL_KEY: Goal("s", ["c"])}
    for index, made in enumerate(wf.steps):
        spec = made.spec
        out[f"starter.step{index}.name"] = made.name
        out[f"starter.step{index}.spec"] = f"{spec.name}\n{spec.instructions}"
        out[f"starter.step{index}.prompt"] = _prompt(made, ctx)
        if made.resume_prompt is not None:
            out[f"starter.step{index}.resume"] = _prompt(made, ctx, resume=True)
    work = wf.steps[-1].spec
    for name, agent in (work.agents or {}).items():
        out[f"starter.worker.{name}"] = f"{agent.description}\n{agent.prompt}"
    out["bequest.BEQUEST_RULES"] = bq.BEQUEST_RULES
    out["bequest.BEQUEST_PROMPT"] = bq.BEQUEST_PROMPT
    said = bq.Bequest(what="w", accept="a", generated="", deadends="", outcome="o", workbench="b")
    out["Bequest.body"] = said.body()
    said.mechanical, said.why = True, "why"
    out["Bequest.body(mechanical)"] = said.body()
    facts = bq._facts({}, None)
    out["bequest._facts"] = json.dumps(facts, ensure_ascii=False, sort_keys=True)
    out["bequest._mechanical"] = bq._mechanical({}, facts, why="").body()
    out["bequest._where"] = bq._where(Path("/p"), None)
    out["bequest._outcome(failed)"] = bq._outcome({"_failed_at": "干活"}, None)
    return out


def _prompt(step: Any, ctx: dict[str, Any], *, resume: bool = False) -> str:
    made = step.resume_prompt if resume else step.prompt
    return str(made(ctx) if callable(made) else made)


def _human() -> dict[str, str]:
    from flower.human import records as human_records
    from flower.human import texts as human_texts
    from flower.human.channel import HumanChannel
    from flower.human.records import Ask, Mail
    from flower.records import pending

    out = {
        f"human.{name}": getattr(human_texts, name)
        for name in (
            "TIMEOUT_TEXT", "OVER_BUDGET_TEXT", "DECLINED_TEXT", "INVALID_TEXT",
            "EMPTY_INBOX_TEXT", "ASK_DESCRIPTION", "INBOX_DESCRIPTION",
        )
    }  # fmt: skip
    out["human.ASK_SCHEMA"] = json.dumps(human_texts.ASK_SCHEMA, ensure_ascii=False)
    out["human.LOG_HEADER"] = human_records.LOG_HEADER
    out["amendment_block"] = human_records.amendment_block("x\nGoal: y", at=AT)
    out["amendment_block(label)"] = human_records.amendment_block("x", label="woken", at=AT)
    ask = Ask(id="q1", question="q?", options=["a", "b"], state="answered", answer="a")
    ask.settled_at = AT
    out["ask_entry"] = human_records.ask_entry(ask)
    mail = Mail(id="m2", text="t", state="delivered", delivered_at=AT, amended="/b.md")
    out["mail_entry"] = human_records.mail_entry(mail)
    channel = HumanChannel(timeout_s=0)
    channel.asks.append(ask)
    channel.mail.append(mail)
    out["HumanChannel.transcript"] = channel.transcript()
    out["HumanChannel._inbox_text"] = channel._inbox_text([mail])
    out["HumanChannel._inbox_text(unamended)"] = channel._inbox_text([Mail(id="m3", text="t")])
    out["HumanChannel._inbox_text()"] = channel._inbox_text([])
    for name in ("timeout_text", "over_budget_text", "declined_text"):
        out[f"HumanChannel.{name}"] = getattr(channel, name)
    out["pending.LATE_ANSWER"] = pending.LATE_ANSWER
    out["pending.LATE_DECLINE"] = pending.LATE_DECLINE
    out["pending._said"] = pending._said({"question": "q", "options": ["a"], "answer": "a"})
    out["pending._said(none)"] = pending._said({"question": "q"})
    return out


def _walls(tmp: Path) -> dict[str, str]:
    from flower.records.workbench import Workbench
    from flower.roles import deny_texts, guard, walls

    out = {
        "whitelist_text": guard.whitelist_text("协调者", "Write"),
        "delegate_text": guard.delegate_text("Write", artifacts="a/", glance=True, why="w"),
        "delegate_text(plain)": guard.delegate_text("Bash", artifacts="a/", glance=False),
        "GLANCE_REASON": guard.GLANCE_REASON,
        "spill_pointer": deny_texts.spill_pointer(Path("/s/x.txt"), "y" * 500),
        "missing_text": walls.missing_text("裁判", "Bash"),
        "dispatch_text": walls.dispatch_text("协调者", "Explore", ["coder"]),
        "dispatch_text(none)": walls.dispatch_text("协调者", "Explore", []),
        "remote_text": walls.remote_text("协调者", "remote"),
        "stranger_text": walls.stranger_text("协调者", "x"),
    }
    wb = Workbench(tmp / "bench")
    out["Workbench.prompt_block"] = wb.prompt_block().replace(str(tmp), "<tmp>")
    outside = Workbench(tmp / "bench", home=tmp / "home")
    out["Workbench.prompt_block(external)"] = outside.prompt_block().replace(str(tmp), "<tmp>")
    return out


def _records() -> dict[str, str]:
    from flower.commands import aside, once
    from flower.plugin_types import OpenItem
    from flower.records import ledger
    from flower.runtime import audit, resilience
    from flower.runtime.runner import Runtime

    out = {
        "ledger.TITLE": ledger.TITLE,
        "ledger.OVERRIDES": json.dumps(ledger.OVERRIDES, ensure_ascii=False),
        "audit.KIND_TITLES": json.dumps(audit.KIND_TITLES, ensure_ascii=False),
        "audit.NOTE": audit.NOTE,
        "resilience.RESUME_PROMPT": resilience.RESUME_PROMPT,
        "Resilience().resume_prompt": resilience.Resilience().resume_prompt,
        "Runtime.INTERRUPT_NOTE": Runtime.INTERRUPT_NOTE,
        "Runtime.CONTINUE_NOTE": Runtime.CONTINUE_NOTE,
        "aside.ASIDE_PROMPT": aside.ASIDE_PROMPT,
        "aside.summarize([])": aside.summarize([]),
        "once.CONTINUE": once.CONTINUE,
    }
    base = {"step": "干活·判定#1", "round": 1, "at": AT, "cost_usd": 0.5, "session_id": "s"}
    rows = {
        "verdict": {**base, "kind": "verdict", "state": "not_yet", "reason": "r", "failed": ["f"]},
        "override": {**base, "kind": "override", "state": "misjudged", "said": "s"},
        "refusal": {**base, "kind": "refusal", "state": "Write", "reason": "r", "said": "main"},
    }
    for kind, row in rows.items():
        out[f"ledger.entry({kind})"] = ledger.entry(row)
    items = [OpenItem("failed_check", "c"), OpenItem("unknown", "u")]
    out["audit.section"] = audit.section(items)
    return out


def _stores(tmp: Path) -> dict[str, str]:
    from flower.runtime.cutoff import Call, Cutoff, Worker
    from flower.runtime.cutoff_words import render
    from flower.stores import prune, trim

    out = {
        "prune.INTERRUPTED_NOTE": prune.INTERRUPTED_NOTE,
        "prune.ORPHAN_NOTE": prune.ORPHAN_NOTE,
        "EphemeralPolicy().text": trim.EphemeralPolicy().text,
    }
    calls = [
        Call("Write", {"file_path": f"f{n}.py"}, result=None if n % 3 else "ok") for n in range(12)
    ]
    calls += [
        Call("Bash", {"command": f"sed -i s/a/b/ g{n}"}, result="", error=True) for n in range(9)
    ]
    workers = [
        Worker(agent_id=f"a{n}", kind="coder", description="d" * n, prompt="p", calls=calls)
        for n in range(8)
    ]
    workers[0].last_text = "last words"
    found = Cutoff(workers=workers, calls=[Call("Agent", {"x": 1})] * 10)
    out["cutoff_report.render"] = render(found, can_message=True)
    store = trim.TrimmingSessionStore(tmp / "s.db", tmp)
    try:
        out["TrimmingSessionStore._pointer"] = store._pointer("x", "y\n" * 3000).replace(
            str(tmp), "<tmp>"
        )
    finally:
        store.close()
    return out
