"""Chaos across machines: many flower runs on many queue workers, random faults, then checks.

    python benchmarks/chaos [--workers 4] [--jobs 20] [--faults 40] [--seed 1]
                            [--pg URL] [--kinds k1,k2] [--gap S] [--keep DIR] [--json FILE]

Each part of "more than one machine" (the Postgres session store, the procrastinate queue
of ``examples/queue``, the run lock, the Runtime's waiting out an outage) has tests of its
own. This drives them together, the way a deployment meets them: ``--workers`` queue
workers, each a separate process with its own ``HOME`` and working directory (as on
separate machines), take ``--jobs`` jobs from the queue in one fresh Postgres schema, each
job a real ``flower run`` of a scripted starter-style run (:mod:`chaos.flow`: clarify, a
goal, work rounds in which a coordinator dispatches workers that run commands, a judge
ruling after each round) against one scripted model. Meanwhile ``--faults`` faults
(:mod:`chaos.faults`) land at random times drawn from ``--seed``, so a failing seed
replays. Jobs a fault left stalled (their worker's heartbeat stopped) or failed are
retried as docs/scaling.md says until every job is done; then :mod:`chaos.checks` checks
the invariants, and any failure is a line of the report and exit status 1.

The modules, one concern each: ``config`` (what is asked, what is reported), ``flow``
(each job's plan, script and workflow), ``model`` (the shared scripted model),
``machines`` (the workers, their supervisor, the worker process itself), ``procs``
(``/proc``), ``faults``, ``monitor`` (who drives and who holds the lock, sampled),
``harness`` (the run), ``check_store`` and ``check_drive`` (the invariants), ``cli``.

The schema is dropped afterwards (``--keep DIR`` keeps it and the folder). Against your
own Postgres: ``--pg postgresql://user@host:5432/db`` (a schema of its own is created
there; nothing else is touched). ``tests/e2e/test_chaos.py`` runs a small version.
"""
