"""The four document parsers over 100,000+ generated answers, against a bare splitlines pass.

Every input goes through ``Handoff.parse``, ``Brief.parse``, ``Goal.parse`` and
``Verdict.parse``. Inputs come from a seeded generator: markdown-like answers (every
heading alias of every document in every style, same-line chains, fences nested and
unclosed, placeholders, amendment markers, state words, odd whitespace and line breaks)
mixed with random Unicode text. Reported, per parser:

- exceptions (must be 0: parse never raises);
- fixed-point misses, checked in an untimed pass (must be 0:
  ``parse(x.to_markdown()) == x`` for ``x = parse(t)``);
- inputs per second, and the ratio of its time to the baseline's (a plain
  ``str.splitlines`` over the same inputs), medians of alternated rounds in one process.

    python benchmarks/parsers.py [--inputs 100000] [--rounds 5] [--seed 8]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from flower.records import handoff
from flower.records.handoff import Handoff
from flower.records.sections import PLACEHOLDER
from flower.workflow import brief
from flower.workflow import verdicts as goal
from flower.workflow.brief import Brief
from flower.workflow.verdicts import Goal, Verdict

PARSERS: dict[str, Callable[[str], Any]] = {
    "Handoff.parse": Handoff.parse,
    "Brief.parse": Brief.parse,
    "Goal.parse": Goal.parse,
    "Verdict.parse": Verdict.parse,
}

TABLES = [brief.ALIASES, goal.ALIASES, goal.VERDICT_ALIASES, handoff.ALIASES]
HEADINGS = sorted({alias for table in TABLES for names in table.values() for alias in names})
STYLES = [
    "## {}",
    "#{}",
    "**{}**",
    "**{}:**",
    "**{}**:",
    "{}:",
    "{}:",
    "{}",
    "3. {}",
    "1、{}",
    "- [ ] {}:",
    "* [x] 1. **{}** ",
    "\u3000## {}\t",
    "> {}",
]
FENCES = ["```", "```python", "```markdown", "````", "~~~", "\u3000```", "```md"]
PIECES = [
    PLACEHOLDER,
    "- 一项",
    "- [ ] 待办",
    "1.5 秒",
    "[此环境无法验证:macOS] 双击打开",
    "已达成",
    "未达成",
    "无法验证",
    "not yet",
    "yes",
    "1",
    "0",
    "无",
    "全部通过",
    "",
    " ",
    "\u3000",
    "普通的一行正文,写着 `code` 和路径 src/a.py",
    "### 补充 · 人 · 2025-01-01 10:00(与上文冲突时以此为准)",
]
BREAKS = ["\n"] * 6 + ["\r\n", "\r", "\u2028"]
ALPHABET = "abc xyz#*-_:>`~[]()1.、\n\t\u3000目标边界结论达成未"


def line(rng: random.Random, depth: int = 0) -> str:
    kind = rng.randrange(6)
    if kind <= 1:
        text = rng.choice(STYLES).format(rng.choice(HEADINGS))
        if depth < 3 and rng.random() < 0.3:
            text += rng.choice([" ", ": ", ":"]) + line(rng, depth + 1)
        return text
    if kind == 2:
        return rng.choice(FENCES)
    if kind <= 4:
        return rng.choice(PIECES)
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(12)))


def answer(rng: random.Random) -> str:
    if rng.random() < 0.15:  # random text
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(80)))
    return "".join(line(rng) + rng.choice(BREAKS) for _ in range(rng.randrange(40)))


def generate(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [answer(rng) for _ in range(count)]


def timed(fn: Callable[[str], Any], inputs: list[str]) -> tuple[float, int]:
    errors = 0
    started = time.perf_counter()
    for text in inputs:
        try:
            fn(text)
        except Exception:
            errors += 1
    return time.perf_counter() - started, errors


def misses(fn: Callable[[str], Any], inputs: list[str]) -> int:
    count = 0
    for text in inputs:
        try:
            first = fn(text)
            if fn(first.to_markdown()) != first:
                count += 1
        except Exception:
            count += 1
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    inputs = generate(max(1, args.inputs), args.seed)
    chars = sum(map(len, inputs))
    print(f"{len(inputs)} inputs, {chars / len(inputs):.0f} characters each on average")

    base: list[float] = []
    spent: dict[str, list[float]] = {name: [] for name in PARSERS}
    errors = dict.fromkeys(PARSERS, 0)
    for _ in range(max(1, args.rounds)):
        base.append(timed(str.splitlines, inputs)[0])
        for name, fn in PARSERS.items():
            seconds, failed = timed(fn, inputs)
            spent[name].append(seconds)
            errors[name] = max(errors[name], failed)

    b = statistics.median(base)
    print(f"{'parser':16} {'exceptions':>10} {'fixed-pt miss':>13} {'inputs/s':>10} {'ratio':>7}")
    print(f"{'splitlines':16} {0:10} {'-':>13} {len(inputs) / b:10.0f} {1:7.1f}")
    bad = 0
    for name, fn in PARSERS.items():
        m = statistics.median(spent[name])
        miss = misses(fn, inputs)
        bad += errors[name] + miss
        print(f"{name:16} {errors[name]:10} {miss:13} {len(inputs) / m:10.0f} {m / b:7.1f}")
    print(f"({args.rounds} alternated rounds, medians; ratio = parser time / splitlines time)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
