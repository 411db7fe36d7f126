"""The store's load path on the spread of line sizes real transcripts have (issue 23 §3).

    python benchmarks/load_shapes.py [--lines 3000] [--rounds 5] [--sizes 0.5,1,2.7,8,16,64]
                                     [--small 10] [--repeats 200]

For each mean line size, a transcript in the bundled CLI's shapes (``benchmarks/store.py``'s
replies, tool calls, results, prompts, denials and retry storms; here with the real CLI
2.1's other lines too: ``progress`` hook lines, ``file-history-snapshot``, thinking blocks
with their signature, Read results as lists of text blocks), its tool results sized so
the JSONL's mean line is the size asked. Plus every ``*.jsonl`` in
``benchmarks/transcripts/`` (real ones: ``SOURCES.md`` there; not committed).

Subject: ``PruningSessionStore.load`` with every policy on (prune, expire, mask, trim: the
``flower`` command's store) over SQLite, warm (the spill files of the first load exist)
and settled: timed loads start ``SETTLED_NS`` after the first load's writes, as a resume
comes seconds or minutes after the last (``--fresh``: at once, each spill file looked at).
Baseline: ``json.loads`` of each line of the same JSONL. Targets: <= 1.5x the parse, peak
memory (tracemalloc) <= 2x the JSONL's size. Rounds alternate; CPU time
(``time.process_time``: the machine is shared, and wall time swung 3x between rounds),
the best of each.

Beside it, in the same run, a load's FIXED cost (issue 34): the CPU of loading a tiny
session (``--small`` lines, about 10, at 2.7 KB: a resume does it again and again), warm,
best of ``--repeats`` loads, in ms and beside ``json.loads`` of the same lines. Target:
<= 0.5 ms. What a load costs whatever its size (the connection, the meta row, the thread
hop, the marks, the handout bookkeeping) shows here, not in the large cases.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from store import KEY as _KEY  # noqa: E402
from store import transcript  # noqa: E402

from flower.stores.prune import PruningSessionStore  # noqa: E402
from flower.stores.spill_memo import SETTLED_NS  # noqa: E402

KEY: Any = _KEY  # the SDK's SessionKey
SIGNATURE = "ErAGCkYICxgCKkCIPs4c+mjB63w9koxNAnaOm5ks6exqntaRR" * 12


def shaped(lines: int, mean_kb: float) -> list[dict[str, Any]]:
    """``store.transcript`` with real-CLI extras and results scaled to ``mean_kb``."""
    base = transcript(lines)
    out: list[dict[str, Any]] = []
    for n, line in enumerate(base):
        out.append(line)
        if n % 25 == 3:
            out.append(
                {
                    "type": "progress",
                    "parentUuid": line["uuid"],
                    "uuid": f"p-{n}",
                    "sessionId": line["sessionId"],
                    "data": {"type": "hook_progress", "hookEvent": "PreToolUse"},
                    "timestamp": line["timestamp"],
                }
            )
        if n % 50 == 4:
            out.append(
                {
                    "type": "file-history-snapshot",
                    "messageId": f"m-{n}",
                    "snapshot": {"trackedFileBackups": {}, "timestamp": line["timestamp"]},
                }
            )
        message = line.get("message")
        if line["type"] == "assistant" and n % 10 == 0 and isinstance(message, dict):
            thought = {
                "type": "thinking",
                "thinking": "Let me check. " * 20,
                "signature": SIGNATURE,
            }
            message["content"] = [thought, *message["content"]]
    plain = sum(len(json.dumps(e)) + 1 for e in out)
    results = [
        b
        for e in out
        if e.get("type") == "user" and isinstance(e["message"]["content"], list)
        for b in e["message"]["content"]
        if b.get("type") == "tool_result" and isinstance(b.get("content"), str)
    ]
    extra = max(mean_kb * 1000 * len(out) - plain, 0) / max(len(results), 1)
    for k, block in enumerate(results):
        text = block["content"]
        if extra <= 0 or block.get("is_error"):
            continue
        grown = (text + "\n") * int(extra // max(len(text), 1) + 1)
        body = grown[: len(text) + int(extra)]
        if k % 3 == 0:  # a Read: a list of text blocks
            block["content"] = [{"type": "text", "text": body}]
        else:
            block["content"] = body
    return out


def measure(
    name: str, lines: list[dict[str, Any]], rounds: int, work: Path, fresh: bool = False
) -> dict[str, Any]:
    jsonl = [json.dumps(e, ensure_ascii=False) for e in lines]
    size = sum(len(s.encode()) + 1 for s in jsonl)
    store = PruningSessionStore(work / f"{name}.db", workspace=work / f"ws-{name}")
    store.now = lambda: 4e9  # long after the newest line: a cold resume, every policy acts
    store.cache_ttls[KEY["session_id"]] = "5m"  # as a Runtime tells it: flower's mark too
    rows: Any = lines
    loop = asyncio.new_event_loop()  # one loop, as a run has: its worker threads stay
    run = loop.run_until_complete
    run(store.append(KEY, rows))
    first = run(store.load(KEY))
    assert first is not None
    if not fresh:  # a resume comes seconds or minutes after the last load's writes
        time.sleep(SETTLED_NS / 1e9 + 0.1)
        run(store.load(KEY))  # the first load to trust the folder's time looks at each file
    s_times, b_times = [], []
    for _ in range(rounds):
        gc.collect()  # each side starts from the same collector state: a full collection
        started = time.process_time()  # falling in one side's time swung the ratio 2x
        [json.loads(x) for x in jsonl]
        b_times.append(time.process_time() - started)
        gc.collect()
        started = time.process_time()
        run(store.load(KEY))
        s_times.append(time.process_time() - started)
    tracemalloc.start()
    run(store.load(KEY))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    tracemalloc.start()
    [json.loads(x) for x in jsonl]
    base_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    report = dict(store.last_report)
    store.close()
    loop.close()
    s, b = min(s_times), min(b_times)
    return {
        "name": name,
        "lines": len(lines),
        "mean KB": size / len(lines) / 1000,
        "MB": size / 1e6,
        "store s": s,
        "json.loads s": b,
        "ratio": s / b,
        "peak x": peak / size,
        "json.loads peak x": base_peak / size,
        "report": report,
    }


def fixed_cost(lines: list[dict[str, Any]], repeats: int, work: Path) -> dict[str, Any]:
    """The best CPU time of one warm load of a tiny session vs ``json.loads`` of its lines.

    Loads go one at a time (each a separate ``run_until_complete``, as a resume does),
    the store's and the parse's interleaved; the best of ``repeats`` of each."""
    jsonl = [json.dumps(e, ensure_ascii=False) for e in lines]
    store = PruningSessionStore(work / "small.db", workspace=work / "ws-small")
    store.now = lambda: 4e9
    store.cache_ttls[KEY["session_id"]] = "5m"
    rows: Any = lines
    loop = asyncio.new_event_loop()
    run = loop.run_until_complete
    run(store.append(KEY, rows))
    first = run(store.load(KEY))
    assert first is not None
    s_times, b_times = [], []
    clock = time.process_time
    for _ in range(repeats):
        started = clock()
        [json.loads(x) for x in jsonl]
        b_times.append(clock() - started)
        started = clock()
        run(store.load(KEY))
        s_times.append(clock() - started)
    store.close()
    loop.close()
    s, b = min(s_times), min(b_times)
    return {"lines": len(lines), "store ms": s * 1e3, "json.loads ms": b * 1e3, "ratio": s / b}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lines", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="0.5,1,2.7,8,16,64")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="time loads right after the spill files' writes (each file looked at)",
    )
    parser.add_argument("--small", type=int, default=10, help="lines of the fixed-cost load")
    parser.add_argument("--repeats", type=int, default=200, help="loads of the fixed-cost case")
    args = parser.parse_args()
    cases: list[tuple[str, list[dict[str, Any]]]] = []
    for kb in (float(x) for x in args.sizes.split(",")):
        n = args.lines if kb <= 8 else max(int(args.lines * 8 / kb), 300)
        cases.append((f"generated-{kb:g}KB", shaped(n, kb)))
    for path in sorted((HERE / "transcripts").glob("*.jsonl")):
        text = path.read_text(encoding="utf-8").splitlines()
        cases.append((path.stem[:30], [json.loads(x) for x in text if x.strip()]))
    head = f"{'transcript':32} {'lines':>6} {'mean KB':>8} {'MB':>6}"
    print(head + "  store/json.loads  peak/size (json.loads)")
    with tempfile.TemporaryDirectory() as tmp:
        for name, lines in cases:
            r = measure(name, lines, args.rounds, Path(tmp), args.fresh)
            print(
                f"{r['name']:32} {r['lines']:6} {r['mean KB']:8.2f} {r['MB']:6.1f}"
                f"  {r['ratio']:5.2f}x ({r['store s'] * 1e3:.0f}/{r['json.loads s'] * 1e3:.0f} ms)"
                f"  {r['peak x']:5.2f}x ({r['json.loads peak x']:.2f}x)  {r['report']}"
            )
        small = shaped(max(args.small - 2, 1), 2.7)[: args.small]
        f = fixed_cost(small, args.repeats, Path(tmp))
    print(
        f"fixed cost, {f['lines']}-line load: {f['store ms']:.3f} ms CPU"
        f" (json.loads {f['json.loads ms']:.3f} ms, {f['ratio']:.1f}x)"
    )
    print("targets: store <= 1.50x json.loads, peak <= 2.00x the JSONL, fixed cost <= 0.50 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
