"""What redaction costs: the store's append, one redaction, the cache check, the hook.

    python benchmarks/redact.py [--entries 10000] [--rounds 5] [--calls 20000]

1. Append: ``--entries`` CLI-shaped transcript lines (``benchmarks/store.py``'s
   generator, about 1 KB each) in batches of 100 through ``SqliteSessionStore.append``,
   redacting (the shipped path) vs the same store with redaction switched off, each
   round a fresh SQLite file: once with no key anywhere (the common case: one substring
   search per value over each batch), once with a key in one line of 200 (an ``env``
   output: every other batch is then checked line by line, and 50 lines are redacted as
   objects and encoded again). Reported: the ratios of medians (target <= 1.15x).
2. One ``Redactor.redact`` of a 10,000-character text without a secret (the common
   case: substring checks only), and with one (``str.replace``), in microseconds.
3. ``current()`` when nothing changed: the environment compared, the ``.env`` files
   stat'ed; and a fresh collection (the ``.env`` files parsed), in microseconds.
4. The PostToolUse ``redact_guard`` on a short clean Bash result vs a hook returning
   ``{}``, in microseconds per call.

Six secret-named variables are set (four of them in a ``.env`` too), a realistic set.
Rounds alternate subject and baseline; medians are reported; the appends are timed in
process CPU time (all threads), which other load on the machine disturbs least.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from store import BATCH, KEY, transcript  # noqa: E402

from flower.kernel import redact as redact_mod  # noqa: E402
from flower.kernel.redact import Redactor, current, redact_guard  # noqa: E402
from flower.stores.sqlite import SqliteSessionStore  # noqa: E402

SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-BENCH-0123456789abcdefghijklmnopqrstuv",
    "GITHUB_TOKEN": "ghp_BENCHbench0123456789abcdefghijklmn",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYBENCHKEY",
    "DB_PASSWORD": "correct horse battery staple",
    "SLACK_BOT_TOKEN": "xoxb-0000-1111-BENCHBENCHBENCH",
    "OPENAI_API_KEY": "sk-proj-BENCH-abcdefghijklmnopqrstuvwxyz012345",
}
DIRTY_EVERY = 200


def setup(folder: Path) -> None:
    os.environ.update(SECRETS)
    env = folder / ".env"
    env.write_text("".join(f"{k}={v}\n" for k, v in list(SECRETS.items())[:4]))
    os.environ["FLOWER_ENV"] = str(env)
    os.chdir(folder)


def lines(n: int) -> list[dict[str, Any]]:
    """The generator's lines, one in ``DIRTY_EVERY`` tool results carrying the key."""
    out = transcript(n)
    key = SECRETS["ANTHROPIC_API_KEY"]
    for i, line in enumerate(out):
        if i % DIRTY_EVERY == 2 and line.get("type") == "user":
            line["toolUseResult"] = {"stdout": f"HOME=/root\nANTHROPIC_API_KEY={key}\n"}
    return out


def append_seconds(entries: list[dict[str, Any]], folder: Path, *, redacting: bool) -> float:
    path = Path(tempfile.mkdtemp(dir=folder)) / "s.db"
    store = SqliteSessionStore(path)
    if not redacting:
        store._redact = lambda *a: None  # type: ignore[method-assign]
    batches = [entries[i : i + BATCH] for i in range(0, len(entries), BATCH)]

    async def run() -> float:
        started = time.process_time()  # CPU of every thread: less noise from other load
        for batch in batches:
            await store.append(KEY, batch)  # type: ignore[arg-type]
        return time.process_time() - started

    try:
        return asyncio.run(run())
    finally:
        store.close()


def per_call_us(fn: Callable[[], Any], calls: int) -> float:
    started = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - started) / calls / 1000


def alternated(
    subject: Callable[[], float], baseline: Callable[[], float], rounds: int
) -> tuple[float, float]:
    subject(), baseline()  # warm-up, not counted
    a: list[float] = []
    b: list[float] = []
    for _ in range(rounds):
        a.append(subject())
        b.append(baseline())
    return statistics.median(a), statistics.median(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="flower-redact-bench-"))
    setup(folder)
    redactor = current()
    print(f"{len(redactor)} strings looked for (values and their JSON-escaped forms)")

    for entries in (transcript(args.entries), lines(args.entries)):
        dirty = sum(1 for e in entries if "toolUseResult" in e and "ANTHROPIC" in str(e))
        with_r, without = alternated(
            lambda e=entries: append_seconds(copy.deepcopy(e), folder, redacting=True),
            lambda e=entries: append_seconds(copy.deepcopy(e), folder, redacting=False),
            args.rounds,
        )
        print(
            f"append {args.entries:,} lines ({dirty} with a key), batches of {BATCH}: "
            f"{with_r * 1000:.0f} ms redacting vs {without * 1000:.0f} ms not: "
            f"{with_r / without:.3f}x"
        )

    clean = "".join(f"line {i:04d} of an ordinary build log\n" for i in range(300))[:10_000]
    dirty_text = clean[:5000] + SECRETS["GITHUB_TOKEN"] + clean[5000:]
    for label, text in (("clean", clean), ("with a key", dirty_text)):
        us = statistics.median(
            per_call_us(lambda t=text: redactor.redact(t), args.calls // 10) for _ in range(5)
        )
        print(f"redact 10,000 characters, {label}: {us:.1f} us")
    us = statistics.median(per_call_us(current, args.calls) for _ in range(5))
    print(f"current(), nothing changed: {us:.1f} us")

    def fresh() -> Redactor:
        redact_mod._state = None
        return current()

    us = statistics.median(per_call_us(fresh, 200) for _ in range(5))
    print(f"current(), collected again (.env parsed): {us:.0f} us")

    hook = redact_guard().hooks[0]

    async def nothing(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        return {}

    data = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
        "tool_response": {"stdout": "On branch main\nnothing to commit\n", "stderr": ""},
    }

    async def calls(fn: Any) -> float:
        started = time.perf_counter_ns()
        for _ in range(args.calls):
            await fn(data, "toolu_1", None)
        return (time.perf_counter_ns() - started) / args.calls / 1000

    guard, base = alternated(
        lambda: asyncio.run(calls(hook)), lambda: asyncio.run(calls(nothing)), args.rounds
    )
    print(f"redact_guard on a short clean result: {guard:.2f} us vs {{}} {base:.2f} us")


if __name__ == "__main__":
    main()
