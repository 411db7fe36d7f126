"""Resume sequences over real Claude Code transcripts: no resume may cost more than a bare one.

    python benchmarks/resume_sequences.py [--transcripts a,b] [--kinds cw,cwc]
        [--policies default,trim] [--backends sqlite,postgres] [--jobs 3] [--show-breaks]

Each transcript in ``benchmarks/transcripts/`` (real sessions, see ``SOURCES.md`` there;
not committed) is stored once in flower's ``PruningSessionStore`` and once in the bare
``SqliteSessionStore`` (no reshaping: what a bare SDK resume reads), then resumed several
times in a row through the real bundled CLI, one new prompt and a short scripted answer
each. The scripted model bills like the API (``flower.testing.usage``: tokens, the prompt
cache from the CLI's breakpoints, exact-byte prefixes, list prices), and its clock is
advanced between resumes instead of waiting: a *warm* resume comes 60 s after the last
one (its prefix still cached), a *cold* one 400 s after (the 5-minute cache expired). The
first resume of every sequence is cold (the transcripts are months old).

Sequence kinds (``--kinds``): ``cw`` warm after cold; ``cwc`` cold after warm; ``cwww``
three warm in a row; ``ccc`` three cold in a row. Policies: ``default`` is a default
``Runtime()``'s store (``trim=False``: pruning and expiry, no masking or trimming),
``trim`` is ``Runtime(trim=True)``'s (masking and trimming too). Backends: flower's store
on SQLite, and on Postgres (``--pg-url``, default the local server's database ``test``, a
fresh schema per run; skipped with the reason when none answers). The bare side always
runs on SQLite: the question is whether flower's bytes ever cost more than no reshaping.

Reported per resume: flower's list-price cost over the bare one's (``1.000x``: the same);
the goal (issue 34) is at most 1.00x everywhere. With ``--show-breaks``, a resume of more
than 1.00x names the first prompt block that differs from flower's previous request (where
the cached prefix broke) and the first that differs from the bare request. Reuses
``benchmarks/context.py``'s session runner and virtual-time store. Runs go ``--jobs``
at a time, each in its own folder whose path has the same length and token count as the
others (the workspace path is in the system prompt), so runs side by side bill exactly what
one after the other would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_agent_sdk import project_key_for_directory

sys.path.insert(0, str(Path(__file__).resolve().parent))

from context import VirtualTime, context, real_transcripts, session

from flower.runtime.cache_rhythm import TTL_VARIABLE
from flower.stores.prune import PrunePolicy
from flower.stores.sqlite import SqliteSessionStore
from flower.stores.trim import EphemeralPolicy, TrimPolicy
from flower.testing import ScriptedModel, conversation, text
from flower.testing.prices import cost_of
from flower.testing.server import RecordedRequest
from flower.testing.usage import prompt_blocks

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
WARM, COLD = 60.0, 400.0
KINDS: dict[str, tuple[str, list[float]]] = {
    "cw": ("warm after cold", [COLD, WARM]),
    "cwc": ("cold after warm", [COLD, WARM, COLD]),
    "cwww": ("three warm", [COLD, WARM, WARM, WARM]),
    "ccc": ("three cold", [COLD, COLD, COLD]),
}
POLICIES = ("default", "trim")
BACKENDS = ("sqlite", "postgres")


@dataclass
class Resume:
    """One resume: its requests (those the model billed) and what the load did."""

    requests: list[RecordedRequest]
    report: dict[str, int] = field(default_factory=dict)

    @property
    def cost(self) -> float:
        return sum(cost_of(r.usage, r.body.get("model")) for r in self.requests)

    @property
    def main(self) -> RecordedRequest | None:
        return next((r for r in self.requests if not r.is_subagent), None)


@dataclass
class Job:
    transcript: Path
    kind: str
    policy: str  # "bare" for the baseline
    backend: str
    resumes: list[Resume] = field(default_factory=list)
    error: str = ""


def flower_store(target: str | Path, workspace: Path, policy: str) -> VirtualTime:
    """The store a Runtime builds (``runtime/assembly.py``), on the scripted model's clock."""
    store = VirtualTime(
        target,
        workspace=workspace,
        policy=TrimPolicy(enabled=policy == "trim"),
        ephemeral=EphemeralPolicy(enabled=True),
        prune=PrunePolicy(keep_denials=1),
    )
    store.now = store.virtual
    return store


def script(count: int) -> list[Any]:
    return [
        conversation(
            f"r{n}", text(f"Noted ({n}): carrying on from here."), after_user=f"[resume {n}]"
        )
        for n in range(count, 0, -1)  # newest first: a later request holds older markers
    ]


async def play(job: Job, folder: Path, pg_target: str | None) -> None:
    """Store the transcript, then resume it once per gap of the job's kind."""
    if folder.exists():
        shutil.rmtree(folder)
    workspace, home = folder / "ws", folder / "home"
    workspace.mkdir(parents=True)
    lines = [json.loads(x) for x in job.transcript.read_text().splitlines() if x.strip()]
    sid = str(next(e["sessionId"] for e in lines if e.get("sessionId")))
    key = {"project_key": project_key_for_directory(str(workspace)), "session_id": sid}
    gaps = KINDS[job.kind][1]
    store: Any
    if job.policy == "bare":
        store = SqliteSessionStore(folder / "bare.db")
    else:
        target = folder / "flower.db" if pg_target is None else pg_target
        store = flower_store(target, workspace, job.policy)
    pinned: dict[str, str] = {}
    with ScriptedModel(script(len(gaps))) as model:
        if isinstance(store, VirtualTime):
            store.clock = model.clock
            # as a Runtime does (runtime/cache_rhythm.py): the CLI's TTL pinned, and the
            # store told it, so it marks the history with the same (stores/anchor.py)
            pinned = {TTL_VARIABLE: "5m"}
            store.cache_ttls[sid] = "5m"
        await store.append(key, lines)
        for n, gap in enumerate(gaps, 1):
            model.clock.advance(gap)
            if home.exists():
                shutil.rmtree(home)  # each resume in a fresh HOME: the store is all it has
            before = len(model.requests)
            await session(
                model,
                store,
                workspace,
                home,
                f"[resume {n}] where are we? One line.",
                sid,
                ["Bash"],
                pinned,
            )
            billed = [r for r in model.requests[before:] if r.usage]
            report = dict(getattr(store, "main_report", None) or {})
            job.resumes.append(Resume(billed, report))


def pg_problem(url: str) -> str | None:
    try:
        import psycopg
    except ImportError as exc:
        return f"psycopg is not installed ({exc})"
    try:
        with psycopg.connect("postgresql://" + url.split("://", 1)[1], connect_timeout=3):
            return None
    except Exception as exc:
        return f"no PostgreSQL at {url}: {str(exc).strip().splitlines()[0]}"


def pg_schema(url: str, drop: str | None = None) -> str:
    import psycopg

    name = drop or f"flower_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect("postgresql://" + url.split("://", 1)[1], autocommit=True) as conn:
        conn.execute(
            f'DROP SCHEMA IF EXISTS "{name}" CASCADE' if drop else f'CREATE SCHEMA "{name}"'
        )
    return name


# --- where a cached prefix broke -------------------------------------------------------


def describe(index: int, body: dict[str, Any]) -> str:
    """Which block of the prompt ``index`` is: a tool, a system block, or a message's."""
    tools = len(body.get("tools") or ())
    if index < tools:
        return f"tool {body['tools'][index].get('name')}"
    n = tools
    system = body.get("system")
    systems = (
        1
        if isinstance(system, str) and system
        else len(system or ())
        if isinstance(system, list)
        else 0
    )
    if index < n + systems:
        return f"system block {index - n}"
    n += systems
    for m, message in enumerate(body.get("messages") or ()):
        content = message.get("content")
        count = 1 if isinstance(content, str) else len(content or ())
        if index < n + count:
            return f"message {m} ({message.get('role')}) block {index - n}"
        n += count
    return "past the end"


def first_break(previous: dict[str, Any], now: dict[str, Any]) -> str:
    """The first prompt block of ``now`` that differs from ``previous`` (exact JSON bytes)."""
    old = [json.dumps(b, ensure_ascii=False) for b, _ in prompt_blocks(previous)]
    new = [json.dumps(b, ensure_ascii=False) for b, _ in prompt_blocks(now)]
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            return (
                f"block {i} of {len(new)}, {describe(i, now)}: was {a[max(at - 40, 0) : at + 80]!r}"
                f" -> now {b[max(at - 40, 0) : at + 80]!r}"
            )
    return "none (every block of the shorter one is the same)"


# --- the run ---------------------------------------------------------------------------


async def run_all(args: argparse.Namespace, paths: list[Path], work: Path) -> list[Job]:
    backends = list(args.backends)
    if "postgres" in backends:
        problem = pg_problem(args.pg_url)
        if problem:
            print(f"Postgres skipped: {problem}")
            backends.remove("postgres")
    jobs = [Job(p, k, "bare", "sqlite") for p in paths for k in args.kinds]
    jobs += [
        Job(p, k, pol, b)
        for p in paths
        for k in args.kinds
        for pol in args.policies
        for b in backends
    ]
    limit = asyncio.Semaphore(args.jobs)
    width = len(str(len(jobs)))

    async def one(n: int, job: Job) -> None:
        async with limit:
            schema = pg_schema(args.pg_url) if job.backend == "postgres" else None
            try:
                target = f"{args.pg_url}?options=-csearch_path%3D{schema}" if schema else None
                await play(job, work / f"r{n:0{width}d}", target)
            except Exception as exc:  # one broken run must not hide the others' figures
                job.error = f"{type(exc).__name__}: {exc}"
            finally:
                if schema:
                    pg_schema(args.pg_url, drop=schema)
                shutil.rmtree(work / f"r{n:0{width}d}", ignore_errors=True)

    await asyncio.gather(*(one(n, job) for n, job in enumerate(jobs)))
    return jobs


def table(jobs: list[Job], show_breaks: bool) -> float:
    """Print the ratios; the highest one."""
    bare = {(j.transcript, j.kind): j for j in jobs if j.policy == "bare"}
    worst = 0.0
    print(f"\n{'transcript':44} {'sequence':16} {'policy':8} {'backend':9} resumes flower/bare")
    for job in jobs:
        if job.policy == "bare":
            continue
        base = bare[(job.transcript, job.kind)]
        label = (
            f"{job.transcript.stem[:44]:44} {KINDS[job.kind][0]:16} {job.policy:8} {job.backend:9}"
        )
        if job.error or base.error:
            print(f"{label} error: {job.error or 'bare: ' + base.error}")
            continue
        cells, notes = [], []
        for n, (mine, theirs) in enumerate(zip(job.resumes, base.resumes, strict=True)):
            ratio = mine.cost / theirs.cost if theirs.cost else 1.0
            worst = max(worst, ratio)
            cells.append(f"{ratio:.3f}x")
            if ratio > 1.0 + 1e-9 and show_breaks:
                m, b = mine.main, theirs.main
                what = f"    resume {n + 1}: ${mine.cost:.4f} vs ${theirs.cost:.4f}"
                if m is not None and b is not None:
                    what += (
                        f"; read {m.usage.get('cache_read_input_tokens', 0)} vs"
                        f" {b.usage.get('cache_read_input_tokens', 0)}, written"
                        f" {m.usage.get('cache_creation_input_tokens', 0)} vs"
                        f" {b.usage.get('cache_creation_input_tokens', 0)}, context"
                        f" {context(m)} vs {context(b)}; load {mine.report}"
                    )
                    previous = job.resumes[n - 1].main if n else None
                    if previous is not None:
                        what += "\n      prefix break: " + first_break(previous.body, m.body)
                    what += "\n      unlike bare: " + first_break(b.body, m.body)
                notes.append(what)
        print(f"{label} " + " ".join(cells))
        for note in notes:
            print(note)
    return worst


async def main_async(args: argparse.Namespace) -> int:
    paths = real_transcripts()
    if args.transcripts:
        wanted = args.transcripts.split(",")
        paths = [p for p in paths if any(w in p.name for w in wanted)]
    if not paths:
        print("no transcripts in benchmarks/transcripts/ (see SOURCES.md there)")
        return 1
    for p in paths:
        print(f"{p.name}: {p.stat().st_size / 1e3:.0f} KB")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="resume-seq-") as tmp:
        jobs = await run_all(args, paths, Path(tmp))
    worst = table(jobs, args.show_breaks)
    resumes = sum(len(j.resumes) for j in jobs)
    print(
        f"\n{resumes} resumes through the CLI in {time.perf_counter() - started:.0f} s;"
        f" the dearest flower resume {worst:.3f}x a bare one (goal: at most 1.00x)"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--transcripts", default="", help="parts of file names, comma-separated")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"of {','.join(KINDS)}")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--pg-url", default=PG_URL)
    parser.add_argument("--jobs", type=int, default=3, help="CLI runs at a time")
    parser.add_argument("--show-breaks", action="store_true")
    args = parser.parse_args()
    args.kinds = [k for k in args.kinds.split(",") if k]
    args.policies = [p for p in args.policies.split(",") if p]
    args.backends = [b for b in args.backends.split(",") if b]
    for k in args.kinds:
        if k not in KINDS:
            parser.error(f"unknown kind {k!r}: one of {', '.join(KINDS)}")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
