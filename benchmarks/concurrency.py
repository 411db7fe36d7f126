"""Many runs writing to one session store at once: rows lost, append latency, throughput.

    python benchmarks/concurrency.py [--runs 8] [--batches 60] [--no-postgres]

Each run is a separate process appending what a run's CLI sends the store: batches of
CLI-shaped transcript lines (``benchmarks/store.py``'s generator, about 1 KB a line, 1 to
12 lines a batch, as the SDK flushes them), to its own session, through
``SqliteSessionStore.append``, the same call the SDK makes. The model and the CLI are left
out on purpose: with them the machine's CPU, not the store, decides the figures.

Reported per store (one SQLite file, then one Postgres database):
- rows lost: lines appended minus lines loaded back (must be 0);
- p50 / p95 of one append's latency with ``--runs`` writers, against 1 writer;
- throughput (lines per second over all writers) with ``--runs`` writers, as a ratio to 1.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

PG_URL = os.environ.get("FLOWER_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def writer(
    target: str, run: int, batches: int, seed: int, out: multiprocessing.Queue, go_: object
) -> None:
    """One run's traffic: ``batches`` appends to its own session; its latencies. Waits at
    ``go_`` (a barrier) once imported, so every writer appends at the same time."""
    from store import transcript

    from flower.stores.sqlite import SqliteSessionStore

    rng = random.Random(seed)
    lines = transcript(batches * 12)
    key = {"project_key": f"-bench-run-{run}", "session_id": str(uuid.UUID(int=run + 1))}
    store = SqliteSessionStore(target)
    latencies: list[float] = []
    sent = 0

    async def go() -> None:
        nonlocal sent
        for _ in range(batches):
            size = rng.randint(1, 12)
            batch = [{**line, "uuid": str(uuid.uuid4())} for line in lines[sent : sent + size]]
            started = time.perf_counter()
            await store.append(key, batch)  # type: ignore[arg-type]
            latencies.append(time.perf_counter() - started)
            sent += len(batch)

    go_.wait()  # type: ignore[attr-defined]
    began = time.time()
    asyncio.run(go())
    ended = time.time()
    stored = asyncio.run(store.load(key)) or []  # type: ignore[arg-type]
    store.close()
    out.put((sent, len(stored), latencies, began, ended))


def trial(target: str, runs: int, batches: int) -> tuple[int, int, list[float], float]:
    """``runs`` writers at once: lines sent, lines loaded back, latencies, seconds."""
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue = ctx.Queue()
    barrier = ctx.Barrier(runs)
    procs = [
        ctx.Process(target=writer, args=(target, r, batches, r, out, barrier)) for r in range(runs)
    ]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=600) for _ in procs]
    elapsed = max(r[4] for r in results) - min(r[3] for r in results)  # appending only
    for proc in procs:
        proc.join()
    sent = sum(r[0] for r in results)
    loaded = sum(r[1] for r in results)
    latencies = [x for r in results for x in r[2]]
    return sent, loaded, latencies, elapsed


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def report(label: str, make_target: object, runs: int, batches: int) -> None:
    one = trial(make_target(), 1, batches)  # type: ignore[operator]
    many = trial(make_target(), runs, batches)  # type: ignore[operator]
    lost = (one[0] - one[1]) + (many[0] - many[1])
    rate_one, rate_many = one[0] / one[3], many[0] / many[3]
    print(f"{label}: {runs} writers x {batches} appends")
    print(f"  rows lost: {lost} (of {one[0] + many[0]} appended)")
    for name, (_, _, lat, _) in (("1 writer", one), (f"{runs} writers", many)):
        p50, p95 = percentile(lat, 50) * 1e3, percentile(lat, 95) * 1e3
        print(f"  append latency, {name:>10}: p50 {p50:6.1f} ms  p95 {p95:6.1f} ms")
    print(
        f"  throughput: {rate_many:,.0f} lines/s with {runs} writers vs {rate_one:,.0f} with 1"
        f" = {rate_many / rate_one:.2f}x"
    )


def postgres_target() -> str:
    import sqlalchemy as sa

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    engine = sa.create_engine(PG_URL)
    with engine.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    engine.dispose()
    return f"{PG_URL}?options=-csearch_path%3D{schema}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flower-concurrency-") as tmp:
        count = iter(range(1000))
        report(
            "SQLite (one file)",
            lambda: str(Path(tmp) / f"s{next(count)}.db"),
            args.runs,
            args.batches,
        )
    if not args.no_postgres:
        report("Postgres (one database)", postgres_target, args.runs, args.batches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
