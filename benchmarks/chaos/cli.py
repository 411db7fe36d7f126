"""``python benchmarks/chaos ...``: the harness's options, and ``worker --name N``, the
entry each machine's worker process is started with."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from . import __doc__ as DOC
from .config import KINDS, PG_URL, Config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/chaos", description=(DOC or "").split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command")
    w = sub.add_parser("worker", help="one queue worker (the harness starts these)")
    w.add_argument("--name", required=True)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--faults", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg", default=PG_URL, help="a Postgres database (a schema is made)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="fault kinds, comma-separated")
    parser.add_argument("--gap", type=float, default=2.5, help="mean seconds between faults")
    parser.add_argument("--grace", type=float, default=1.5)
    parser.add_argument("--keep", type=Path, default=None, help="keep the folder and schema")
    parser.add_argument("--json", type=Path, default=None, help="write the report here")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "worker":
        from .machines import worker

        worker(args.name)
        return 0
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown fault kinds {sorted(unknown)}; known: {', '.join(KINDS)}")
    if min(args.workers, args.jobs) < 1 or args.faults < 0 or args.gap <= 0:
        parser.error("--workers and --jobs must be at least 1, --faults 0 or more, --gap > 0")
    if "://" not in args.pg:
        parser.error(f"--pg {args.pg!r}: expected postgresql://user@host:port/db")
    cfg = Config(
        workers=args.workers,
        jobs=args.jobs,
        faults=args.faults,
        seed=args.seed,
        pg_url=args.pg,
        kinds=kinds,
        gap=args.gap,
        grace=args.grace,
        keep=args.keep,
        quiet=args.quiet,
    )
    from .harness import Chaos

    report = Chaos(cfg).run()
    data = report.as_dict()
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    if args.json is not None:
        tmp = args.json.with_name(args.json.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(args.json)
    brief = {k: v for k, v in data.items() if k not in ("fault_log", "config")}
    print(json.dumps(brief, ensure_ascii=False, indent=2, default=str))
    return 1 if report.violations else 0
