"""Queue one ``flower run TARGET`` job per workspace (and procrastinate's schema, once).

    python examples/queue/defer.py examples/flows.py:main /srv/ws/a /srv/ws/b /srv/ws/c

Each job is deferred with ``lock=<workspace>``: two jobs on one workspace never run at
the same time, whichever machines pick them up.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tasks import app, run_flow


async def defer(target: str, workspaces: list[str]) -> list[int]:
    async with app.open_async():
        found = await app.connector.execute_query_one_async(
            "SELECT to_regclass('procrastinate_jobs') IS NOT NULL AS present"
        )
        if not found["present"]:
            await app.schema_manager.apply_schema_async()
        ids = []
        for workspace in workspaces:
            where = str(Path(workspace).resolve())
            job = run_flow.configure(lock=where)
            ids.append(await job.defer_async(workspace=where, target=target))
        return ids


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    for job_id in asyncio.run(defer(sys.argv[1], sys.argv[2:])):
        print("deferred job", job_id)
