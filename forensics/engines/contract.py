"""The engine contract: what the analyses, renderers and the pipeline need from a SQL engine.

Every method runs DuckDB-dialect SQL from `queries/` (or a short ad-hoc text) with named
`$parameters`; values are always bound, never formatted into SQL. Results that come back to
Python are small (counts, per-account aggregates, the rows of a list); the requests stay in
the engine. `DuckDBEngine` (a case database file) and `SparkEngine` (a Parquet case store on
a cluster) both implement it; the type checker holds each to it (`forensics.engines`
registers them through factories typed to return `SQLEngine`).

Ingest is DuckDB's job: it writes the case database through `DuckDBEngine`'s own methods
(`transaction`, `settings`, `describe`), which are not part of this contract.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Protocol

import polars as pl


class SQLEngine(Protocol):
    """A SQL engine over one case store (see the module doc)."""

    errors: tuple[type[BaseException], ...]
    """The exception types a failed query raises (what a caller may catch as bad input)."""

    @property
    def where(self) -> str | None:
        """Where the case store lives, for messages (None for an in-memory database)."""

    def execute(self, sql: str, **params: Any) -> None:
        """Run one statement: a view (`CREATE VIEW`), a table (`CREATE TABLE ... AS`), a drop."""

    def run(self, query: str, **params: Any) -> None:
        """Run the statement in `queries/QUERY.sql` (`query` = "CONCEPT/NAME")."""

    def materialize(self, table: str, query: str, **params: Any) -> None:
        """Replace table `table` with the result of `queries/QUERY.sql`."""

    def materialize_temporary(self, table: str, query: str, **params: Any) -> None:
        """`materialize`, for a command's working table, read only through this engine until
        it closes: an engine may keep it out of the case store (DuckDB holds it in memory,
        spilling to its temporary folder, and never writes it to the database file)."""

    def load_local(self, table: str, query: str, **params: Any) -> None:
        """Replace table `table` with a query over driver-local files (e.g. a CSV), read by
        DuckDB on this machine."""

    def write_frame(
        self, table: str, frame: pl.DataFrame, order_by: str, *, temporary: bool = False
    ) -> None:
        """Replace table `table` with a small Polars frame (its schema kept), sorted by
        `order_by`: how case-file values become tables (`temporary`: a working table, as
        `materialize_temporary` makes)."""

    def frame(self, query: str, **params: Any) -> pl.DataFrame:
        """The (small) result of `queries/QUERY.sql` as a Polars frame."""

    def sql_frame(self, sql: str, **params: Any) -> pl.DataFrame:
        """The (small) result of an ad-hoc SQL text as a Polars frame."""

    def rows(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        """Every row of an ad-hoc SQL text as tuples (small results only)."""

    def scalar(self, sql: str, **params: Any) -> Any:
        """The first value of the first row of an ad-hoc SQL text (None without a row)."""

    def read_table(self, table: str) -> pl.DataFrame:
        """Every row of a small table, sorted by all its columns (a stable order)."""

    def table_exists(self, table: str) -> bool:
        """Whether the case store holds `table` (a table or a view)."""

    def close(self) -> None:
        """Release the store (and whatever session this engine started)."""

    def __enter__(self) -> SQLEngine:
        """The engine itself, closed when the block ends."""

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the engine."""


class TableMissing(Exception):
    """A read failed because the case store lacks the table it needs."""


@contextlib.contextmanager
def needing(engine: SQLEngine, table: str, error: Exception | None = None) -> Iterator[None]:
    """Run the block (reads that need `table`); when it fails and the case store lacks
    `table`, raise `error` (default TableMissing) instead, else the failure itself. The
    catalog is asked only on failure: each question costs a query, and the table is there."""
    try:
        yield
    except Exception:  # a Spark engine raises its own errors, not `engine.errors`
        if engine.table_exists(table):
            raise
        raise (error if error is not None else TableMissing(table)) from None
