"""StoreDatabase: the session store's database, opened without the SDK.

A store is one database holding two kinds of thing: the CLI's transcripts (the SDK's
``SessionStore`` protocol, :class:`~flower.stores.sqlite.SqliteSessionStore`) and what
flower keeps about runs (the run list, the judge ledger, lineages, budgets). Reading the
second must not cost what the first does: importing the SDK pulls in its MCP types, about
a second of CPU, which ``flower status`` would pay only to count a few rows. So opening the
database (creating or upgrading its schema), turning driver errors into one-line
:class:`~flower.stores.errors.StoreError`\\ s, and the run tables live here, and the
session store builds on this class.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from flower.stores import migrate
from flower.stores.engine import describe, make_engine
from flower.stores.errors import StoreError
from flower.stores.url import display, sqlite_path, to_url

__all__ = ["StoreDatabase"]


class StoreDatabase:
    """The store's database: its schema checked at construction, and the run tables.

    :param path: A file path for SQLite (parent folders are created), or any SQLAlchemy
        URL. A corrupt file, an unknown scheme, an unreachable server or a schema that
        needs ``flower db upgrade`` raise :class:`~flower.stores.errors.StoreError`
        here, at construction. An embedded SQLite file of an older revision is upgraded
        in place; a server's schema is only checked (other machines may share it).
    """

    def __init__(self, path: str | Path) -> None:
        self.url = to_url(path)
        self.path: Path | None = sqlite_path(self.url)
        self._engine = make_engine(self.url)
        try:
            migrate.ensure_schema(self._engine, upgrade_old=self._engine.dialect.name == "sqlite")
        except BaseException:
            self._engine.dispose()
            raise

    def __repr__(self) -> str:
        return f"{type(self).__name__}({display(self.url)!r})"

    def close(self) -> None:
        """Release pooled connections (the database reopens them if used again)."""
        self._engine.dispose()

    # --- the run tables: synchronous, called from flower's own bookkeeping ------------

    def record_step(self, run_id: str, workspace: str, host: str, row: dict[str, Any]) -> None:
        """Add a finished step to the run list (:mod:`flower.stores.steps`)."""
        from flower.stores.steps import record_step

        with self._errors():
            record_step(self._engine, run_id, workspace, host, row)

    def step_rows(self, run_id: str) -> list[dict[str, Any]]:
        """The manifest rows kept for one run (:func:`flower.stores.steps.step_rows`)."""
        from flower.stores.steps import step_rows

        with self._errors():
            return step_rows(self._engine, run_id)

    def runs(self) -> list[dict[str, Any]]:
        """Every run in the store, newest first (:func:`flower.stores.steps.runs`)."""
        from flower.stores.steps import runs

        with self._errors():
            return runs(self._engine)

    def record_ruling(self, row: Mapping[str, Any]) -> None:
        """Add a judge's verdict or a human's override of one to the judge ledger
        (:func:`flower.stores.ledger_table.record_ruling`)."""
        from flower.stores.ledger_table import record_ruling

        with self._errors():
            record_ruling(self._engine, row)

    def rulings(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """The judge ledger in order, one run's or all
        (:func:`flower.stores.ledger_table.rulings`)."""
        from flower.stores.ledger_table import rulings

        with self._errors():
            return rulings(self._engine, run_id)

    def save_lineage(self, run_id: str, host: str, data: dict[str, Any]) -> None:
        """Keep a run's lineage document (:mod:`flower.stores.lineages`)."""
        from flower.stores.lineages import save_lineage

        with self._errors():
            save_lineage(self._engine, run_id, host, data)

    def load_lineage(self, run_id: str) -> dict[str, Any] | None:
        """A run's lineage document, or ``None`` (:mod:`flower.stores.lineages`)."""
        from flower.stores.lineages import load_lineage

        with self._errors():
            return load_lineage(self._engine, run_id)

    def record_spend(self, row: Mapping[str, Any]) -> None:
        """Add what one session cost to its run's spend (:mod:`flower.stores.spend`)."""
        from flower.stores.spend import record_spend

        with self._errors():
            record_spend(self._engine, row)

    def set_cap(self, run_id: str, cap: float | None, host: str) -> None:
        """Keep ``cap`` (USD; ``None``: none) as a run's budget (:mod:`flower.stores.spend`)."""
        from flower.stores.spend import set_cap

        with self._errors():
            set_cap(self._engine, run_id, cap, host)

    def budget(self, run_id: str) -> dict[str, Any]:
        """A run's ``cap`` and ``spent`` so far (:func:`flower.stores.spend.budget_of`)."""
        from flower.stores.spend import budget_of

        with self._errors():
            return budget_of(self._engine, run_id)

    def budgets(self) -> dict[str, dict[str, Any]]:
        """Every run's cap and spend, by run id (:func:`flower.stores.spend.budgets_by_run`)."""
        from flower.stores.spend import budgets_by_run

        with self._errors():
            return budgets_by_run(self._engine)

    def save_document(self, run_id: str, name: str, text: str, host: str) -> str:
        """Keep a run's frozen document; its hash (:mod:`flower.stores.documents`)."""
        from flower.stores.documents import save_document

        with self._errors():
            return save_document(self._engine, run_id, name, text, host)

    def load_document(self, run_id: str, name: str) -> dict[str, Any] | None:
        """A run's frozen document, or ``None`` (:mod:`flower.stores.documents`)."""
        from flower.stores.documents import load_document

        with self._errors():
            return load_document(self._engine, run_id, name)

    # --- plumbing ---------------------------------------------------------------------

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except StoreError:
            raise
        except sa.exc.SQLAlchemyError as exc:
            raise describe(exc, self.url) from None

    def _read(self, query: sa.Select[Any]) -> list[Any]:
        with self._errors(), self._engine.connect() as connection:
            return list(connection.execute(query).all())
