"""The invariants, checked once every job is done; each failure is one line of the
report (and the run's exit status 1). A check that breaks is a failure too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .check_drive import DriveChecks
from .check_store import StoreChecks

if TYPE_CHECKING:
    from .harness import Chaos


class Checks(StoreChecks, DriveChecks):
    def __init__(self, chaos: Chaos) -> None:
        import psycopg

        self.c = chaos
        self.r = chaos.report
        self.db = psycopg.connect(chaos.admin_url, autocommit=True)
        self.db.execute(f'SET search_path TO "{chaos.schema}"')

    def run(self) -> None:
        try:
            for check in (
                self.jobs,
                self.transcripts,
                self.replies,
                self.runs,
                self.overlaps,
                self.locks,
                self.replays,
                self.cut_off,
                self.secrets,
            ):
                try:
                    check()
                except Exception as exc:  # a check that breaks is a finding, not a crash
                    self.r.fail(f"{check.__name__}: the check itself failed: {exc!r}")
        finally:
            self.db.close()
