"""The SQL engine seam: one connection object and the query loader.

Every analysis goes through `Engine`; a distributed engine (see `forensics.spark`) provides
the same methods, so no module needs `if engine == ...`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import duckdb
import polars as pl

from . import queries


class SQLEngine(Protocol):
    """What analyses need from an engine. Values are always bound, never formatted into SQL."""

    def execute(self, sql: str, **params: Any) -> None:
        """Run a statement (DuckDB dialect, `$name` parameters)."""

    def materialize(self, table: str, query: str, **params: Any) -> None:
        """Replace table `table` with the result of `queries/QUERY.sql`."""

    def frame(self, query: str, **params: Any) -> pl.DataFrame:
        """The (small) result of `queries/QUERY.sql` as a Polars frame."""

    def sql_frame(self, sql: str, **params: Any) -> pl.DataFrame:
        """The (small) result of an ad-hoc SQL text as a Polars frame."""

    def table_exists(self, table: str) -> bool:
        """Whether the case database holds `table`."""

    def load_local(self, table: str, query: str, **params: Any) -> None:
        """Materialize `table` from a query over driver-local files (e.g. a CSV)."""

    def write_frame(self, table: str, frame: pl.DataFrame, order_by: str) -> None:
        """Replace table `table` with a small Polars frame, rows sorted by `order_by`."""


def bind(sql: str, params: dict[str, Any]) -> dict[str, Any]:
    """The subset of `params` the SQL text refers to; a missing one is a programming error."""
    names = queries.parameters(sql)
    missing = [n for n in names if n not in params]
    if missing:
        raise KeyError(f"query needs parameters {missing}")
    return {n: params[n] for n in names}


class TableMissing(Exception):
    """A read failed because the case database lacks the table it needs."""


@contextlib.contextmanager
def needing(engine: Any, table: str, error: Exception | None = None) -> Iterator[None]:
    """Run the block (reads that need `table`); when it fails and the case database lacks
    `table`, raise `error` (default TableMissing) instead, else the failure itself. The
    catalog is asked only on failure: each question costs a query, and the table is there."""
    try:
        yield
    except Exception:  # a Spark engine raises its own errors, not `engine.errors`
        if engine.table_exists(table):
            raise
        raise (error if error is not None else TableMissing(table)) from None


DEFAULT_MEMORY_LIMIT = "1.5GB"  # keeps a 20M-request case under 2 GB of RSS (benchmarks/)


class Engine:
    """A DuckDB case database (a file, or in memory when `path` is None), time zone UTC."""

    errors: tuple[type[BaseException], ...] = (duckdb.Error,)  # what a bad query raises

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        memory_limit: str | None = None,
        temp_dir: str | Path | None = None,
        read_only: bool = False,
        threads: int | None = None,
    ):
        self.path = Path(path) if path is not None else None
        # a bounded default (DuckDB's own is 80 % of RAM): past it DuckDB spills to temp_dir
        config: dict[str, Any] = {"memory_limit": memory_limit or DEFAULT_MEMORY_LIMIT}
        if temp_dir:
            config["temp_directory"] = str(temp_dir)
        if threads:
            config["threads"] = threads
        target = str(self.path) if self.path is not None else ":memory:"
        try:
            self.con = duckdb.connect(target, read_only=read_only, config=config)
            failure = None
        except duckdb.Error as e:
            failure = open_error(target, e)
        if failure is not None:  # raised outside the except: the one line says it all
            raise failure
        self.con.execute("SET TimeZone = 'UTC'")
        # insertion order is not a contract; dropping it lets DuckDB stream and spill freely
        self.con.execute("SET preserve_insertion_order = false")

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def execute(self, sql: str, **params: Any) -> None:
        self.con.execute(sql, bind(sql, params))

    def run(self, query: str, **params: Any) -> None:
        """Run the statement in `queries/QUERY.sql`."""
        self.execute(queries.load(query), **params)

    def materialize(self, table: str, query: str, **params: Any) -> None:
        sql = queries.load(query)
        self.con.execute(f'CREATE OR REPLACE TABLE "{table}" AS {sql}', bind(sql, params))

    def load_local(self, table: str, query: str, **params: Any) -> None:
        self.materialize(table, query, **params)

    def write_frame(self, table: str, frame: pl.DataFrame, order_by: str) -> None:
        view = f"_{table}_frame"
        # through the Arrow PyCapsule stream: frame.to_arrow() imports pyarrow (~25 ms a run)
        self.con.register(view, _ArrowStream(frame))
        try:
            self.con.execute(
                f'CREATE OR REPLACE TABLE "{table}" AS SELECT * FROM {view} ORDER BY "{order_by}"'
            )
        finally:
            self.con.unregister(view)

    def frame(self, query: str, **params: Any) -> pl.DataFrame:
        return self.sql_frame(queries.load(query), **params)

    def sql_frame(self, sql: str, **params: Any) -> pl.DataFrame:
        # the relation's Arrow PyCapsule stream: `.pl()` imports pyarrow (~25 ms a run)
        return pl.DataFrame(self.con.sql(sql, params=bind(sql, params)))

    def rows(self, sql: str, **params: Any) -> list[tuple[Any, ...]]:
        """All rows of an ad-hoc SQL text as tuples (small results only)."""
        return self.con.execute(sql, bind(sql, params)).fetchall()

    def scalar(self, sql: str, **params: Any) -> Any:
        # fetchall: DuckDB 2 keeps a half-read result open and refuses the next statement
        rows = self.con.execute(sql, bind(sql, params)).fetchall()
        return rows[0][0] if rows else None

    def table_exists(self, table: str) -> bool:
        return bool(
            self.con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_name = $t",
                {"t": table},
            ).fetchall()[0][0]
        )


class _ArrowStream:
    """A Polars frame seen only through the Arrow PyCapsule interface (no pyarrow needed)."""

    def __init__(self, frame: pl.DataFrame):
        self.frame = frame

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.frame.__arrow_c_stream__(requested_schema)


_LOCK_HOLDER = re.compile(r"\(PID (\d+)\)")


def open_error(target: str, e: Exception) -> Exception:
    """The one-line error for a case database DuckDB cannot open: held by another process
    (DuckDB's own file lock) or not a DuckDB file (bad input, exit 2), a system fault such
    as a read-only or forbidden path (`errors.system_error`), or else unreadable."""
    from .errors import ForensicsError, system_error

    text = str(e)
    if "Could not set lock on file" in text:
        holder = _LOCK_HOLDER.search(text)
        pid = f" (pid {holder.group(1)})" if holder else ""
        return ForensicsError(
            f"database is in use by another process{pid}",
            where=target,
            fix="wait for it to finish (or close the notebook holding it), or use another --db",
        )
    if "not a valid DuckDB database file" in text:
        return ForensicsError(
            "not a DuckDB database",
            where=target,
            fix="pass the case database that forensics ingest or run wrote, or a new file name",
        )
    fault = system_error(e)
    if fault is not None:
        return fault
    first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    return ForensicsError(
        f"cannot open the database ({first})",
        where=target,
        fix="check the path, its folder's permissions, and --memory-limit/--temp-dir if given",
    )


ENGINES = ("duckdb", "spark")


def open_engine(
    kind: str,
    path: str | Path | None,
    *,
    spark_master: str | None = None,
    memory_limit: str | None = None,
    temp_dir: str | Path | None = None,
) -> Any:
    """The one factory of engines: DuckDB on a case database file, or Spark on a Parquet
    case store (`forensics ingest --to-parquet DIR`)."""
    from .errors import ForensicsError

    if kind == "duckdb":
        return Engine(path, memory_limit=memory_limit, temp_dir=temp_dir)
    if kind == "spark":
        try:
            from .spark import SparkEngine
        except ImportError as e:
            raise ForensicsError(
                f"the spark engine needs PySpark and SQLGlot ({e.name} is missing)",
                where="--engine spark",
                fix="pip install 'kv-forensics[spark]' (and a Java runtime)",
            ) from None
        return SparkEngine(str(path), master=spark_master)
    raise ForensicsError(f"unknown engine {kind!r}", where="--engine", fix="use duckdb or spark")
