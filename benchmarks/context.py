"""Context economy through the real CLI, at list prices with the prompt cache emulated.

    python benchmarks/context.py [--rounds 70] [--judge-seconds 150] [--only a,b,c]

Every scenario plays one script twice, through the bundled Claude Code CLI against the
scripted model (whose usage is the API's: tokens counted from the request, the prompt
cache emulated from the CLI's ``cache_control`` breakpoints, ``flower.testing.usage``):
once resumed through ``PruningSessionStore`` with the policies of the ``flower`` command
(trim on, so masking on), once through the bare ``SqliteSessionStore`` (what a bare SDK
resume reads). Both runs go side by side, each against its own scripted model and cache.

(a) A coordinator of the seed's HT001 shape: ``--rounds`` rounds, each one CLI session
    resumed through the store with the judge's feedback as its prompt (as the goal
    guard's rounds are), 3 worker dispatches a round (``Agent``, synchronous; the worker
    is a subagent whose report is 1.2-2.6 KB) each followed by a glance (``git log``,
    ``git status``, ``git diff --stat``, ``ls``: 0.1-1.3 KB), and a closing summary.
    Time: a worker takes ``--worker-seconds`` (virtual: the cache's clock advances, nothing
    waits), the judge ``--judge-seconds`` between rounds (150 s: the 5-minute cache is
    still warm when the next round starts; 400 s: it is cold).
(b) One worker session of 100 tool calls with outputs of 0.3 to 30 KB (``cat`` of files,
    ``Read``); and the same calls in four sessions resumed through the store every 25
    calls (rolling reshaping), to see whether reshaping inside a long round pays.
(c) Resumes of long sessions: the coordinator's session of (a) resumed once more, and the
    transcripts in ``benchmarks/transcripts/`` (real ones, see ``SOURCES.md`` there; not
    committed), each resumed from the store through the real CLI, first request compared.

Reported: request sizes, the coordinator's context per round (its slope by least
squares), the peak, the cache hit ratio (cached reads over all input tokens), handoffs,
and the run's cost at list prices (``flower.testing.prices``). 70 rounds take about
ten minutes: each round is its own CLI process, as in a guarded step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, SystemMessage, query

from flower.runtime.cache_rhythm import HOUR, CacheRhythm, lifetime, marks_ttl
from flower.stores.mask import MaskPolicy
from flower.stores.prune import PruningSessionStore
from flower.stores.sqlite import SqliteSessionStore
from flower.stores.trim import TrimPolicy
from flower.testing import ScriptedModel, Turn, conversation, text, tool
from flower.testing.prices import cost_of
from flower.testing.server import RecordedRequest
from flower.workflow.verdicts import Verdict

HERE = Path(__file__).resolve().parent
GLANCES = ("git log --oneline -25", "git status", "git diff --stat HEAD~6", "git show --stat HEAD")
SUBJECT = "flower (PruningSessionStore, trim on)"
BASELINE = "bare SDK (SqliteSessionStore)"


# --- what a run measured ---------------------------------------------------------------


@dataclass
class Run:
    name: str
    requests: list[RecordedRequest] = field(default_factory=list)
    rounds: list[tuple[int, int]] = field(default_factory=list)  # (first, last) main ctx
    handoffs: int = 0
    hour_rounds: int = 0  # rounds whose session asked for the 1-hour cache

    @property
    def main(self) -> list[RecordedRequest]:
        return [r for r in self.requests if not r.is_subagent and r.usage]

    def cost(self) -> float:
        return sum(cost_of(r.usage, r.body.get("model")) for r in self.requests if r.usage)

    def hit_ratio(self, requests: list[RecordedRequest] | None = None) -> float:
        pool = self.requests if requests is None else requests
        read = sum(r.usage.get("cache_read_input_tokens", 0) for r in pool)
        total = sum(context(r) for r in pool)
        return read / total if total else 0.0


def context(request: RecordedRequest) -> int:
    u = request.usage
    return int(
        u.get("input_tokens", 0)
        + u.get("cache_read_input_tokens", 0)
        + u.get("cache_creation_input_tokens", 0)
    )


def slope(points: list[int]) -> float:
    """Least-squares tokens per round."""
    n = len(points)
    if n < 2:
        return 0.0
    xs = range(n)
    mx, my = (n - 1) / 2, statistics.fmean(points)
    num = sum((x - mx) * (y - my) for x, y in zip(xs, points, strict=True))
    return num / sum((x - mx) ** 2 for x in xs)


# --- running sessions ------------------------------------------------------------------


async def session(
    model: ScriptedModel,
    store: Any,
    workspace: Path,
    home: Path,
    prompt: str,
    resume: str | None,
    tools: list[str],
    extra_env: dict[str, str] | None = None,
) -> str:
    options = ClaudeAgentOptions(
        cwd=workspace,
        env={**model.env(home=home), **(extra_env or {})},
        allowed_tools=tools,
        session_store=store,
        resume=resume,
        max_buffer_size=64 * 1024 * 1024,
    )
    sid = resume
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, SystemMessage) and message.subtype == "init":
            sid = message.data.get("session_id") or sid
    assert sid is not None
    return sid


class VirtualTime(PruningSessionStore):
    """The subject store on the scripted model's clock: lines are stamped, and loads
    compare them, in emulated time (a judge's 400 s pass between two rounds here too, so
    the store tells a cold cache from a warm one as it would in a real run)."""

    clock: Any = None
    main_report: dict[str, int] | None = None

    async def load(self, key: Any) -> Any:
        """A load; the main session's report is kept (a subagent's load follows it)."""
        out = await super().load(key)
        if not key.get("subpath"):
            self.main_report = dict(self.last_report)
        return out

    def virtual(self) -> float:
        return time.time() + (self.clock.offset if self.clock is not None else 0.0)

    async def append(self, key: Any, entries: list[Any]) -> None:
        shift = self.clock.offset if self.clock is not None else 0.0
        if shift:
            entries = [
                {**e, "timestamp": _shifted(e["timestamp"], shift)}
                if isinstance(e.get("timestamp"), str)
                else e
                for e in entries
            ]
        await super().append(key, entries)


def _shifted(stamp: str, seconds: float) -> str:
    from datetime import datetime, timedelta

    when = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return when.isoformat().replace("+00:00", "Z")


def make_stores(db: Path, workspace: Path, **mask: Any) -> dict[str, Any]:
    subject = VirtualTime(
        db, workspace=workspace, policy=TrimPolicy(enabled=True), mask=MaskPolicy(**mask)
    )
    subject.now = subject.virtual
    return {SUBJECT: subject, BASELINE: SqliteSessionStore(db.with_name("bare-" + db.name))}


def repository(path: Path, files: int = 40, commits: int = 30) -> None:
    """A git workspace for the glances to look at."""
    (path / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    git = ["git", "-C", str(path), "-c", "user.name=bench", "-c", "user.email=b@x"]
    for n in range(commits):
        for f in range(n % 4 + 1):
            name = path / "src" / f"module_{(n * 7 + f) % files:02d}.py"
            name.write_text(f"# module {name.stem}\n" + "def f():\n    return 1\n" * (n + f + 3))
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"step {n}: rework the parser ({n})"])
    (path / "src" / "module_00.py").write_text("# changed\n")


# --- (a) the coordinator ---------------------------------------------------------------


def report(r: int, k: int) -> str:
    """A worker's report: 1.2-2.6 KB of what it changed, ran and found."""
    lines = [f"Report for task R{r:03d}K{k}: done."]
    lines += [
        f"- changed src/module_{(r * 3 + k + i) % 40:02d}.py: parser step {i} now handles"
        f" nested blocks, empty input and trailing whitespace ({r}.{k}.{i})"
        for i in range(6 + (r * 5 + k * 3) % 9)
    ]
    lines.append(f"- ran pytest -q tests/unit: {180 + r} passed, 0 failed in {3 + k}.{r % 10}s")
    lines.append("- open question: the lexer still rejects CRLF inside string literals")
    return "\n".join(lines)


def feedback(r: int) -> str:
    """The judge's ruling the next round starts from, worded as the goal guard hands it
    back (``Verdict.feedback``: 0.4-0.9 KB), marked with its round for the script."""
    failed = [
        f"check {c}: `pytest -q tests/test_{c}.py` still fails on case {r}-{c}"
        for c in range(2 + r % 5)
    ]
    reason = (
        f"[round {r:03d}] the parser rewrite is incomplete; round {r} fixed some cases but"
        " these checks still fail."
    )
    return Verdict(state="not_yet", reason=reason, failed=failed).feedback()


def dispatch(r: int, k: int) -> Turn:
    prompt = (
        f"task R{r:03d}K{k}: in src/module_{(r + k) % 40:02d}.py make the parser accept the"
        f" failing case {r}-{k} from the judge's list; run pytest -q tests/unit and report"
        " what you changed and what still fails."
    )
    return tool(
        "Agent",
        {
            "description": f"fix case {r}-{k}",
            "prompt": prompt,
            "subagent_type": "general-purpose",
            "run_in_background": False,
        },
    )


def coordinator_script(rounds: int, dispatches: int, worker_seconds: float) -> list[Any]:
    convs = []
    for r in range(rounds, 0, -1):  # newest first: a round's request holds older markers
        turns: list[Turn] = []
        for k in range(dispatches):
            turns.append(dispatch(r, k))
            glance = GLANCES[(r + k) % len(GLANCES)]
            turns.append(tool("Bash", {"command": glance, "description": "look"}))
        turns.append(text(f"Round {r}: dispatched {dispatches} workers; waiting for the judge."))
        convs.append(conversation(f"round{r}", *turns, after_user=f"[round {r:03d}]"))
        for k in range(dispatches):
            convs.append(
                conversation(
                    f"w{r}-{k}",
                    text(report(r, k), elapse=worker_seconds),
                    first_user=f"task R{r:03d}K{k}",
                    subagent=True,
                )
            )
    return convs


async def coordinator(
    name: str, store: Any, work: Path, args: argparse.Namespace, model: ScriptedModel
) -> tuple[Run, str]:
    run = Run(name)
    if isinstance(store, VirtualTime):
        store.clock = model.clock
    workspace = work / "ws"
    repository(workspace)
    sid: str | None = None
    # flower's side chooses the cache's lifetime as a Runtime does (runtime/cache_rhythm.py),
    # on the scripted model's clock; the bare side keeps the CLI's default
    rhythm = CacheRhythm(enabled=isinstance(store, VirtualTime) and args.rhythm)
    for r in range(1, args.rounds + 1):
        before = len(model.requests)
        prompt = feedback(r) if r > 1 else f"[round {r:03d}] 目标: rewrite the parser. 开始。"
        rhythm.started("coordinator", sid, model.clock.now())
        extra = rhythm.env("coordinator", {})
        hour = lifetime(extra)
        run.hour_rounds += bool(hour)
        if sid and isinstance(store, VirtualTime):  # as the Runtime does: the CLI's TTL
            store.cache_ttls[sid] = marks_ttl(extra, cwd=workspace) or ""
        sid = await session(
            model, store, workspace, work / f"h{r}", prompt, sid, ["Bash", "Agent"], extra
        )
        rhythm.ended(sid, model.clock.now())
        if hour:  # as the Runtime does: the store counts the hour's cache as warm
            store.cache_lifetimes[sid] = HOUR
        mains = [q for q in model.requests[before:] if not q.is_subagent and q.usage]
        run.rounds.append((context(mains[0]), context(mains[-1])))
        model.clock.advance(args.judge_seconds)
    run.requests = list(model.requests)
    assert sid is not None
    return run, sid


# --- (b) one long worker ---------------------------------------------------------------


def worker_files(workspace: Path, calls: int) -> list[Turn]:
    """``calls`` tool calls with outputs from 0.3 to 30 KB: logs by ``cat``, code by Read."""
    turns: list[Turn] = []
    (workspace / "out").mkdir(parents=True, exist_ok=True)
    for n in range(calls):
        size = int(300 * (100 ** ((n * 37 % calls) / max(calls - 1, 1))))  # 0.3-30 KB
        line = f"{n:03d} INFO parser.step case={n} nested=ok tokens={n * 13} t=0.{n:03d}s\n"
        path = workspace / "out" / f"log_{n:03d}.txt"
        path.write_text((line * (size // len(line) + 1))[:size])
        if n % 3 == 0:
            turns.append(tool("Read", {"file_path": str(path)}))
        else:
            turns.append(tool("Bash", {"command": f"cat out/log_{n:03d}.txt", "description": "x"}))
    return turns


async def long_worker(
    name: str, store: Any, work: Path, calls: int, split: int, model: ScriptedModel
) -> Run:
    workspace = work / "ws"
    workspace.mkdir(parents=True)
    turns = worker_files(workspace, calls)
    parts = [turns[i : i + split] for i in range(0, calls, split)]
    model.play(
        [
            conversation(f"part{p}", *part, text(f"part {p} done"), after_user=f"[part {p}]")
            for p, part in reversed(list(enumerate(parts)))
        ]
    )
    sid = None
    for p in range(len(parts)):
        sid = await session(
            model, store, workspace, work / f"h{p}", f"[part {p}] go on", sid, ["Bash", "Read"]
        )
    return Run(name, requests=list(model.requests))


# --- (c) resumes -----------------------------------------------------------------------


async def resume_once(store: Any, workspace: Path, home: Path, sid: str) -> RecordedRequest:
    with ScriptedModel([conversation("resume", text("ok"), after_user="[resume]")]) as model:
        await session(model, store, workspace, home, "[resume] where are we?", sid, ["Bash"])
        return next(r for r in model.requests if r.usage and not r.is_subagent)


def real_transcripts() -> list[Path]:
    folder = HERE / "transcripts"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


async def resume_real(path: Path, work: Path) -> dict[str, RecordedRequest]:
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    sid = next((e["sessionId"] for e in lines if e.get("sessionId")), None)
    workspace = work / path.stem
    workspace.mkdir(parents=True)
    from claude_agent_sdk import project_key_for_directory

    key = {"project_key": project_key_for_directory(str(workspace)), "session_id": sid}
    out = {}
    for name, store in make_stores(work / f"{path.stem}.db", workspace).items():
        await store.append(key, lines)
        out[name] = await resume_once(store, workspace, work / f"h-{name[:4]}", str(sid))
    return out


# --- reporting -------------------------------------------------------------------------


def summary(run: Run, rounds: bool = True) -> dict[str, Any]:
    main = run.main
    sizes = [len(json.dumps(r.body)) for r in main]
    out: dict[str, Any] = {
        "requests": len(run.requests),
        "request KB median/max": f"{statistics.median(sizes) / 1e3:.0f}/{max(sizes) / 1e3:.0f}",
        "peak context": max(context(r) for r in main),
        "cache hit ratio": f"{run.hit_ratio():.3f}",
        "cost $": f"{run.cost():.2f}",
    }
    if rounds and run.rounds:
        lasts = [last for _, last in run.rounds]
        out["context round 1/20/35/50/70"] = "/".join(
            f"{lasts[i - 1] / 1e3:.1f}K" for i in (1, 20, 35, 50, 70) if i <= len(lasts)
        )
        out["slope tokens/round"] = f"{slope(lasts):.0f}"
        out["handoffs"] = run.handoffs
        out["rounds on the 1-hour cache"] = run.hour_rounds
        out["handoffs, 200K window (est.)"] = handoffs_at(lasts, 200_000 - 50_000)
    return out


def handoffs_at(lasts: list[int], wall: int) -> int:
    """How many handoffs ``HandoffPolicy(window=200_000)`` (headroom 50K) would have
    made: the runs here use the CLI's default model, whose 1M window no run reaches.
    After a handoff the context is taken to start again at round 1's size and grow as
    the run did (an estimate: the fresh session carries the handoff document too)."""
    count, offset = 0, 0
    for last in lasts:
        if last - offset > wall:
            count += 1
            offset = last - lasts[0]
    return count


def show(title: str, subject: dict[str, Any], baseline: dict[str, Any]) -> None:
    print(f"\n{title}")
    for key in subject:
        print(f"  {key:30} {subject[key]!s:>16}  |  {baseline[key]!s:>16}")


def ratio(subject: Run, baseline: Run, what: Callable[[Run], float]) -> str:
    return f"{what(subject) / what(baseline):.2f}x"


async def scenario_a(args: argparse.Namespace, work: Path) -> dict[str, tuple[Run, str, Any]]:
    script = coordinator_script(args.rounds, args.dispatches, args.worker_seconds)
    results: dict[str, tuple[Run, str, Any]] = {}

    async def one(name: str, store: Any, folder: Path) -> None:
        with ScriptedModel(script) as model:
            run, sid = await coordinator(name, store, folder, args, model)
            results[name] = (run, sid, store)

    stores = make_stores(work / "a.db", work / "a-flower" / "ws", **args.mask)
    await asyncio.gather(
        one(SUBJECT, stores[SUBJECT], work / "a-flower"),
        one(BASELINE, stores[BASELINE], work / "a-bare"),
    )
    flower_run, bare_run = results[SUBJECT][0], results[BASELINE][0]
    show(
        f"(a) coordinator, {args.rounds} rounds x {args.dispatches} dispatches + glances,"
        f" judge {args.judge_seconds:.0f} s, worker {args.worker_seconds:.0f} s"
        f"  [{SUBJECT} | {BASELINE}]",
        summary(flower_run),
        summary(bare_run),
    )
    # issue 34's goals: a judge past the 5-minute cache, and one within it
    target = 0.30 if args.judge_seconds > 300 else 0.80
    print(f"  cost ratio {ratio(flower_run, bare_run, Run.cost)} (target <= {target:.2f})")
    print(f"  the last resume's load: {getattr(stores[SUBJECT], 'main_report', None)}")
    return results


async def scenario_b(work: Path, calls: int) -> None:
    runs: dict[str, Run] = {}
    for label, store_name, split in (
        ("bare, one session", BASELINE, calls),
        ("flower, one session", SUBJECT, calls),
        ("flower, resumed every 25 calls", SUBJECT, 25),
        ("bare, resumed every 25 calls", BASELINE, 25),
    ):
        folder = work / f"b-{len(runs)}"
        store = make_stores(folder.with_suffix(".db"), folder / "ws")[store_name]
        with ScriptedModel() as model:
            runs[label] = await long_worker(label, store, folder, calls, split, model)
    print(f"\n(b) one worker, {calls} tool calls of 0.3-30 KB")
    base = runs["bare, one session"]
    for label, run in runs.items():
        s = summary(run, rounds=False)
        print(
            f"  {label:32} peak {s['peak context']:>7}  hit {s['cache hit ratio']}"
            f"  cost ${s['cost $']:>6}  ({run.cost() / base.cost():.2f}x)"
        )


async def scenario_c(results: dict[str, tuple[Run, str, Any]], work: Path) -> None:
    print("\n(c) resumes of long sessions: the first request after one more resume")
    if results:
        firsts = {}
        for name, (_, sid, store) in results.items():
            workspace = work / ("a-flower" if name == SUBJECT else "a-bare") / "ws"
            firsts[name] = await resume_once(store, workspace, work / f"hc-{name[:4]}", sid)
        f, b = firsts[SUBJECT], firsts[BASELINE]
        print(
            f"  coordinator of (a): context {context(f)} vs {context(b)}"
            f" ({context(f) / context(b):.2f}x), request {len(json.dumps(f.body)) / 1e3:.0f} KB"
            f" vs {len(json.dumps(b.body)) / 1e3:.0f} KB"
        )
    paths = real_transcripts()
    if not paths:
        print("  (no transcripts in benchmarks/transcripts/: see SOURCES.md there)")
    for path in paths:
        out = await resume_real(path, work)
        f, b = out[SUBJECT], out[BASELINE]
        print(
            f"  {path.name[:40]:40} {path.stat().st_size / 1e3:7.0f} KB: context"
            f" {context(f)} vs {context(b)} ({context(f) / max(context(b), 1):.2f}x)"
        )


async def main_async(args: argparse.Namespace) -> None:
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        results: dict[str, tuple[Run, str, Any]] = {}
        if "a" in only:
            results = await scenario_a(args, work)
        if "b" in only:
            await scenario_b(work, args.calls)
        if "c" in only:
            await scenario_c(results, work)
        print(f"\n{time.perf_counter() - started:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=70)
    parser.add_argument("--dispatches", type=int, default=2)
    parser.add_argument("--judge-seconds", type=float, default=150.0)
    parser.add_argument("--worker-seconds", type=float, default=60.0)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--only", default="a,b,c")
    parser.add_argument(
        "--no-rhythm",
        dest="rhythm",
        action="store_false",
        help="flower's side keeps the 5-minute cache (no 1-hour cache after long waits)",
    )
    parser.add_argument(
        "--mask", default="", help="MaskPolicy fields to try, e.g. keep_recent=4,chunk=24"
    )
    args = parser.parse_args()
    args.mask = {
        k: (None if v == "none" else float(v) if "." in v else int(v))
        for k, v in (item.split("=") for item in args.mask.split(",") if item)
    }
    asyncio.run(main_async(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
