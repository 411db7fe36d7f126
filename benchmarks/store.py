"""Session store benchmarks: the store against the raw driver, side by side, in one run.

    python benchmarks/store.py [--entries 20000] [--rounds 3] [--no-postgres] [--no-e2e]

1. Append: ``--entries`` CLI-shaped transcript lines (about 1 KB each) in batches of
   100 through ``SqliteSessionStore.append`` vs raw ``sqlite3.executemany`` of the same
   rows into the same schema, one commit per batch. Target: store rate >= 0.8x raw.
2. Load: one session of that size through ``PruningSessionStore`` with every policy on
   vs ``json.loads`` of the same JSONL lines. Targets: <= 1.5x the plain parse; peak
   memory (tracemalloc) <= 2x the transcript's size.
3. The same two on Postgres (``FLOWER_TEST_PG_URL``, a fresh schema) vs raw psycopg.
4. Context economy: the e2e session of ``tests/stores/scenario.py`` (real CLI, scripted
   model) resumed through ``PruningSessionStore`` vs a bare SDK resume (``fork_session``
   so both read the same stored session); the ratio of the request sizes the model gets.

Rounds alternate subject and baseline; medians are reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # for tests.stores.scenario

from flower.stores.prune import PrunePolicy, PruningSessionStore  # noqa: E402
from flower.stores.sqlite import SqliteSessionStore  # noqa: E402
from flower.stores.trim import EphemeralPolicy, TrimPolicy  # noqa: E402

BATCH = 100
KEY = {"project_key": "-work-bench", "session_id": "5911567b-b99c-48ef-9e82-ec7bbbbe6238"}
PG_URL = os.environ.get("FLOWER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
COMMON = {
    "isSidechain": False,
    "userType": "external",
    "entrypoint": "sdk-py",
    "cwd": "/work/bench",
    "sessionId": KEY["session_id"],
    "version": "2.1.332",
    "gitBranch": "main",
}
USAGE = {
    "input_tokens": 10717,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 48211,
    "output_tokens": 30,
    "service_tier": "standard",
    "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
}
RAW_INSERT = (
    "INSERT INTO entries (project_key, session_id, subpath, uuid, entry)"
    " VALUES ({p}, {p}, {p}, {p}, {p})"
)
COMMANDS = ["git status", "pytest -q tests/unit", "ls src", "make build", "git diff --stat"]


def usage_of(reply: int) -> dict[str, Any]:
    """The API's ``usage`` of one reply: the context grows reply by reply."""
    return {
        **USAGE,
        "input_tokens": USAGE["input_tokens"] + 3 * reply,
        "cache_read_input_tokens": USAGE["cache_read_input_tokens"] + 97 * reply,
        "output_tokens": 30 + reply % 200,
    }


def transcript(n: int) -> list[dict[str, Any]]:
    """``n`` lines in the CLI's shapes: a reply of text and a tool call (two lines, one
    message id and usage, as the CLI splits replies by block), the tool's result, a text
    reply, the human's next prompt; denials and a retry storm now and then."""
    lines: list[dict[str, Any]] = []
    parent = None
    for i in range(n):
        uid = str(uuid.UUID(int=i + 1))
        base = {
            "parentUuid": parent,
            **COMMON,
            "uuid": uid,
            "timestamp": f"2026-11-29T10:{i % 60:02d}:00.000Z",
        }
        turn, step = divmod(i, 5)
        call_id = f"toolu_{turn:06d}"
        command = COMMANDS[turn % len(COMMANDS)]
        if step == 0:  # a reply's first block, its own line: the CLI writes one per block
            message = {
                "id": f"msg_{turn:06d}",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [{"type": "text", "text": f"Running {command} to see where we are."}],
                "stop_reason": None,
                "usage": usage_of(2 * turn),
            }
            line = {**base, "type": "assistant", "message": message, "requestId": f"req_{turn:06d}"}
        elif step == 1:  # the same reply's tool call: same message id, same usage
            message = {
                "id": f"msg_{turn:06d}",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": "Bash",
                        "input": {"command": command, "description": command},
                    }
                ],
                "stop_reason": "tool_use",
                "usage": usage_of(2 * turn),  # every reply its own figures, as from the API
            }
            line = {**base, "type": "assistant", "message": message, "requestId": f"req_{turn:06d}"}
            if turn % 400 == 399:  # a retry storm now and then
                line.update(isApiErrorMessage=True, apiErrorStatus=529)
                line["message"] = {
                    **message,
                    "model": "<synthetic>",
                    "content": [{"type": "text", "text": "API Error: 529 Overloaded."}],
                }
        elif step == 2:
            if turn % 50 == 7:
                output = "PreToolUse:Bash hook error: not on the main thread: dispatch a worker"
                extra = {
                    "toolDenialKind": "permission-rule",
                    "permissionDecision": {"decision": "reject", "source": "hook"},
                }
            else:
                size = 4000 if turn % 25 == 0 else 600
                output = (f"{command}: line of output {turn}\n" * (size // 30))[:size]
                extra = {}
            block = {
                "tool_use_id": call_id,
                "type": "tool_result",
                "content": output,
                "is_error": bool(extra),
            }
            line = {
                **base,
                "type": "user",
                "message": {"role": "user", "content": [block]},
                "toolUseResult": {"stdout": output[:400], "stderr": "", "interrupted": False},
                "sourceToolAssistantUUID": parent,
                **extra,
            }
        elif step == 3:
            text = (
                f"Step {turn}: the output shows what I expected. Next I will check the"
                " remaining modules, run the focused tests again and report what changed,"
                " what is still failing and which decision the human has to make."
            )
            line = {
                **base,
                "type": "assistant",
                "message": {
                    "id": f"msg_t{turn:06d}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-opus-5-5",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "usage": usage_of(2 * turn + 1),
                },
            }
        else:
            line = {
                **base,
                "type": "user",
                "message": {"role": "user", "content": f"continue with part {turn} of the plan"},
                "promptId": str(uuid.UUID(int=10**9 + turn)),
            }
        lines.append(line)
        parent = uid
    return lines


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def alternate(
    rounds: int, subject: Callable[[int], float], baseline: Callable[[int], float]
) -> tuple[float, float]:
    s, b = [], []
    for r in range(rounds):
        b.append(baseline(r))
        s.append(subject(r))
    return median(s), median(b)


def row(name: str, subject: float, baseline: float, unit: str, target: str) -> None:
    print(
        f"  {name:34} store {subject:9.3f}{unit}  baseline {baseline:9.3f}{unit}"
        f"  ratio {subject / baseline:5.2f}  ({target})"
    )


# --- SQLite ---------------------------------------------------------------------------


def store_append_rate(target: str | Path, lines: list[dict]) -> float:
    """Entries per second appended through the store, in batches as the SDK sends them."""
    store = SqliteSessionStore(target)

    async def go() -> None:
        for i in range(0, len(lines), BATCH):
            await store.append(KEY, lines[i : i + BATCH])

    started = time.perf_counter()
    asyncio.run(go())
    elapsed = time.perf_counter() - started
    store.close()
    return len(lines) / elapsed


def sqlite_append(lines: list[dict], rounds: int, workdir: Path) -> None:
    def store_run(r: int) -> float:
        return store_append_rate(workdir / f"store-{r}.db", lines)

    def raw_run(r: int) -> float:
        path = workdir / f"raw-{r}.db"
        SqliteSessionStore(path).close()  # the same schema, WAL, no rows
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA synchronous=NORMAL")
        started = time.perf_counter()
        for i in range(0, len(lines), BATCH):
            rows = [
                (KEY["project_key"], KEY["session_id"], "", e.get("uuid"), json.dumps(e))
                for e in lines[i : i + BATCH]
            ]
            conn.executemany(
                RAW_INSERT.format(p="?"),
                rows,
            )
            conn.commit()
        elapsed = time.perf_counter() - started
        conn.close()
        return len(lines) / elapsed

    store_rate, raw_rate = alternate(rounds, store_run, raw_run)
    row("append (entries/s)", store_rate, raw_rate, "", "target >= 0.80")
    thread_hop(rounds, store_rate)


def thread_hop(rounds: int, store_rate: float) -> None:
    """What handing database work to a worker thread costs, next to the work itself.

    The alternative, an async engine, needs aiosqlite (a thread per connection anyway)
    and greenlet; the hop is what either design pays to keep the event loop free.
    """
    import anyio.to_thread

    async def hops(n: int) -> float:
        started = time.perf_counter()
        for _ in range(n):
            await anyio.to_thread.run_sync(int)
        return (time.perf_counter() - started) / n

    per_hop = median([asyncio.run(hops(2000)) for _ in range(rounds)])
    per_batch = BATCH / store_rate
    print(
        f"    worker-thread hop {per_hop * 1e6:.0f} us per call,"
        f" {per_hop / per_batch:.1%} of a committed batch of {BATCH} ({per_batch * 1e3:.2f} ms)"
    )


def load_case(
    lines: list[dict],
    rounds: int,
    make_store: Callable[[], Any],
    label: str,
    baseline: Callable[[], Any],
    baseline_name: str,
) -> None:
    jsonl = [json.dumps(e) for e in lines]
    size = sum(len(s) + 1 for s in jsonl)
    store = make_store()
    asyncio.run(store.append(KEY, lines))
    asyncio.run(store.load(KEY))  # first load writes the spill files; time warm loads

    def store_run(_: int) -> float:
        started = time.perf_counter()
        out = asyncio.run(store.load(KEY))
        elapsed = time.perf_counter() - started
        assert out is not None and len(out) > len(lines) * 0.9
        return elapsed

    def base_run(_: int) -> float:
        started = time.perf_counter()
        baseline()
        return time.perf_counter() - started

    t_store, t_base = alternate(rounds, store_run, base_run)
    row(f"load ({label}) s", t_store, t_base, "s", f"vs {baseline_name}, target <= 1.50")
    print(f"    last_report {store.last_report}")

    tracemalloc.start()
    asyncio.run(store.load(KEY))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    tracemalloc.stop()
    tracemalloc.start()
    baseline()
    _, base_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"    peak memory: store {peak / 1e6:.1f} MB = {peak / size:.2f}x"
        f" the {size / 1e6:.1f} MB transcript"
        f" (target <= 2.00); baseline {base_peak / 1e6:.1f} MB = {base_peak / size:.2f}x"
    )
    if hasattr(store, "close"):
        store.close()


def all_policies(target: Any, workspace: Path) -> PruningSessionStore:
    return PruningSessionStore(
        target,
        workspace=workspace,
        policy=TrimPolicy(),
        ephemeral=EphemeralPolicy(),
        prune=PrunePolicy(),
    )


def sqlite_load(lines: list[dict], rounds: int, workdir: Path) -> None:
    jsonl = [json.dumps(e) for e in lines]
    load_case(
        lines,
        rounds,
        lambda: all_policies(workdir / "load.db", workdir / "ws"),
        "SQLite, every policy on",
        lambda: [json.loads(s) for s in jsonl],
        "json.loads of the JSONL",
    )


# --- Postgres -------------------------------------------------------------------------


def postgres(lines: list[dict], rounds: int, workdir: Path) -> None:
    import psycopg
    from psycopg.types.json import Jsonb

    libpq = "postgresql://" + PG_URL.split("://", 1)[1]
    schemas: list[str] = []

    def schema() -> str:
        name = f"flower_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(libpq, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        schemas.append(name)
        return name

    def url(name: str) -> str:
        return f"{PG_URL}?options=-csearch_path%3D{name}"

    try:

        def store_run(_: int) -> float:
            return store_append_rate(url(schema()), lines)

        def raw_run(_: int) -> float:
            name = schema()
            SqliteSessionStore(url(name)).close()
            with psycopg.connect(libpq, options=f"-csearch_path={name}") as conn:
                started = time.perf_counter()
                for i in range(0, len(lines), BATCH):
                    rows = [
                        (KEY["project_key"], KEY["session_id"], "", e.get("uuid"), Jsonb(e))
                        for e in lines[i : i + BATCH]
                    ]
                    with conn.cursor() as cur:
                        cur.executemany(
                            RAW_INSERT.format(p="%s"),
                            rows,
                        )
                    conn.commit()
                return len(lines) / (time.perf_counter() - started)

        rate, raw = alternate(rounds, store_run, raw_run)
        row("append on Postgres (entries/s)", rate, raw, "", "target >= 0.80")

        name = schema()
        raw_conn = psycopg.connect(libpq, options=f"-csearch_path={name}")

        def raw_load() -> list:
            with raw_conn.cursor() as cur:
                cur.execute(
                    "SELECT entry FROM entries"
                    " WHERE project_key=%s AND session_id=%s AND subpath='' ORDER BY id",
                    (KEY["project_key"], KEY["session_id"]),
                )
                return [r[0] for r in cur.fetchall()]

        load_case(
            lines,
            rounds,
            lambda: all_policies(url(name), workdir / "ws-pg"),
            "Postgres, every policy on",
            raw_load,
            "raw psycopg fetch",
        )
        raw_conn.close()
    finally:
        with psycopg.connect(libpq, autocommit=True) as conn:
            for name in schemas:
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


# --- context economy ------------------------------------------------------------------


def context_economy(workdir: Path) -> None:
    from tests.stores import scenario

    from flower.testing import ScriptedModel

    async def go() -> None:
        workspace = workdir / "e2e-ws"
        workspace.mkdir()
        db = workdir / "e2e.db"
        with ScriptedModel() as model:
            sid = await scenario.play_long_session(
                model, SqliteSessionStore(db), workspace, workdir / "h1"
            )
            sizes = {}
            for name, store in (
                ("bare SDK resume", SqliteSessionStore(db)),
                ("PruningSessionStore, Runtime defaults + trim on", all_policies(db, workspace)),
                (
                    "PruningSessionStore, TrimPolicy(keep_recent=4)",
                    PruningSessionStore(db, workspace=workspace, policy=TrimPolicy(keep_recent=4)),
                ),
            ):
                before = len(model.requests)
                await scenario.resume(
                    model, store, workspace, workdir / f"h-{len(sizes)}", sid, fork=True
                )
                request = next(
                    r for r in model.requests[before:] if scenario.RESUME_PROMPT in r.text()
                )
                sizes[name] = (
                    len(json.dumps(request.body["messages"])),
                    len(json.dumps(request.body)),
                )
        bare_messages, bare_body = sizes.pop("bare SDK resume")
        print(f"  bare SDK resume: messages {bare_messages} B, whole request {bare_body} B")
        for name, (messages, body) in sizes.items():
            print(
                f"  {name}: messages {messages} B ({messages / bare_messages:.2f}x),"
                f" whole request {body} B ({body / bare_body:.2f}x)"
            )

    asyncio.run(go())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-e2e", action="store_true")
    args = parser.parse_args()
    lines = transcript(args.entries)
    avg = sum(len(json.dumps(e)) for e in lines) / len(lines)
    print(f"{len(lines)} lines, {avg:.0f} B on average; {args.rounds} alternated rounds, medians")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print("SQLite")
        sqlite_append(lines, args.rounds, work)
        sqlite_load(lines, args.rounds, work)
        if not args.no_postgres:
            print("Postgres")
            postgres(lines, args.rounds, work)
        if not args.no_e2e:
            print("Context economy (resumed request size vs a bare SDK resume)")
            context_economy(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
